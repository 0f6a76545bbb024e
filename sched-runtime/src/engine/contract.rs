//! The engine contract: what every [`Engine`] must do for the policies and
//! the run loop to work unchanged on it, as checks any engine can be put
//! through. The simulated engine passes them in the crate's tests; a
//! real-GPU engine runs the same checks on its device. They assert what
//! the seam promises, never a timing: a launch completes once with its
//! blocks, slices add up to the grid, a preemptive launch told to retreat
//! reports its progress and the rest resumes from there, a launch that
//! cannot retreat says so, and the clock only moves forward.
//!
//! Each check takes a fresh engine from `make` and a kernel of at least 64
//! blocks whose whole grid takes long enough that a retreat requested half
//! way arrives before the end (the caller's choice, since the device
//! decides what "long" is). A check returns the first broken promise.

use tally_gpu::{KernelSpec, Partition};

use super::{Completion, Engine, EngineError, KernelId, LaunchId, LaunchRequest};

/// One broken promise: which check, and what happened.
pub type Broken = String;

/// Every check, in order; stops at the first broken one.
pub fn check_all(
    make: &mut dyn FnMut() -> Box<dyn Engine>,
    kernel: &KernelSpec,
) -> Result<(), Broken> {
    registers_a_kernel_once(make(), kernel)?;
    runs_a_whole_grid_once(make(), kernel)?;
    slices_add_up_to_the_grid(make(), kernel)?;
    a_retreated_launch_resumes_from_its_progress(make(), kernel)?;
    refuses_to_retreat_a_launch_that_cannot(make(), kernel)?;
    Ok(())
}

fn broken(check: &str, what: String) -> Broken {
    format!("{check}: {what}")
}

/// An engine call's result, its error as a broken promise of `check`.
fn ok<T>(check: &str, r: Result<T, EngineError>) -> Result<T, Broken> {
    r.map_err(|e| broken(check, e.to_string()))
}

/// Run until no event is left; every completion in the order reported,
/// the clock checked never to go back.
pub fn drain(engine: &mut dyn Engine) -> Result<Vec<Completion>, Broken> {
    let mut all = Vec::new();
    let mut out = Vec::new();
    ok("drain", engine.settle(&mut out))?;
    all.append(&mut out);
    while let Some(t) = engine.next_event_time() {
        let before = engine.now();
        if t < before {
            return Err(broken(
                "drain",
                format!("next event at {t} us, before the clock's {before} us"),
            ));
        }
        ok("drain", engine.advance_to(t, &mut out))?;
        all.append(&mut out);
    }
    Ok(all)
}

/// A launch of `blocks` blocks from `first`, on the whole GPU.
fn request(
    engine: &dyn Engine,
    kernel: KernelId,
    first: u64,
    blocks: u64,
    preemptive: bool,
) -> LaunchRequest {
    LaunchRequest {
        job: 1,
        kernel,
        first_block: first,
        blocks,
        workers_per_sm: preemptive.then_some(1),
        max_workers: None,
        preemptible: preemptive,
        sms: Partition::whole(engine.gpu()),
        priority: 0,
        with_overhead: true,
        host_delay_us: 0.0,
        max_sms: None,
    }
}

/// The one completion of `id` among `done`.
fn completion_of(check: &str, done: &[Completion], id: LaunchId) -> Result<Completion, Broken> {
    let mine: Vec<&Completion> = done.iter().filter(|c| c.launch == id).collect();
    match mine.as_slice() {
        [c] => Ok(**c),
        _ => Err(broken(
            check,
            format!("launch {id:?} completed {} times", mine.len()),
        )),
    }
}

/// The same kernel registered twice is one kernel.
pub fn registers_a_kernel_once(
    mut engine: Box<dyn Engine>,
    spec: &KernelSpec,
) -> Result<(), Broken> {
    let check = "registers_a_kernel_once";
    let a = ok(check, engine.add_kernel(spec))?;
    let b = ok(check, engine.add_kernel(spec))?;
    if a != b {
        return Err(broken(check, format!("ids {a:?} and {b:?}")));
    }
    if engine.kernel(a).name != spec.name || engine.kernel(a).blocks() != spec.blocks() {
        return Err(broken(
            check,
            "the registered kernel is not the spec".into(),
        ));
    }
    Ok(())
}

/// A whole-grid launch completes once, with every block, after it began.
pub fn runs_a_whole_grid_once(
    mut engine: Box<dyn Engine>,
    spec: &KernelSpec,
) -> Result<(), Broken> {
    let check = "runs_a_whole_grid_once";
    let k = ok(check, engine.add_kernel(spec))?;
    let start = engine.now();
    let req = request(engine.as_ref(), k, 0, spec.blocks(), false);
    let id = ok(check, engine.submit(req))?;
    let done = drain(engine.as_mut())?;
    let c = completion_of(check, &done, id)?;
    if c.blocks_done != spec.blocks() || c.retreated {
        return Err(broken(check, format!("{c:?} of {} blocks", spec.blocks())));
    }
    if c.time_us <= start || engine.now() < c.time_us {
        return Err(broken(
            check,
            format!(
                "completed at {} us, started {start} us, clock {} us",
                c.time_us,
                engine.now()
            ),
        ));
    }
    Ok(())
}

/// Slices launched one after another each complete with their blocks, and
/// together they are the grid.
pub fn slices_add_up_to_the_grid(
    mut engine: Box<dyn Engine>,
    spec: &KernelSpec,
) -> Result<(), Broken> {
    let check = "slices_add_up_to_the_grid";
    let k = ok(check, engine.add_kernel(spec))?;
    let total = spec.blocks();
    let slice = (total / 3).max(1);
    let (mut first, mut sum, mut last_end) = (0, 0, engine.now());
    while first < total {
        let blocks = slice.min(total - first);
        let req = request(engine.as_ref(), k, first, blocks, false);
        let id = ok(check, engine.submit(req))?;
        let done = drain(engine.as_mut())?;
        let c = completion_of(check, &done, id)?;
        if c.blocks_done != blocks || c.time_us < last_end {
            return Err(broken(check, format!("slice at {first}: {c:?}")));
        }
        last_end = c.time_us;
        sum += c.blocks_done;
        first += blocks;
    }
    if sum != total {
        return Err(broken(check, format!("{sum} blocks of {total}")));
    }
    Ok(())
}

/// A preemptive launch told to retreat half way completes as retreated
/// with the blocks it ran; the rest, launched from there, completes the
/// grid.
pub fn a_retreated_launch_resumes_from_its_progress(
    mut engine: Box<dyn Engine>,
    spec: &KernelSpec,
) -> Result<(), Broken> {
    let check = "a_retreated_launch_resumes_from_its_progress";
    let k = ok(check, engine.add_kernel(spec))?;
    let total = spec.blocks();
    let req = request(engine.as_ref(), k, 0, total, true);
    let sms = req.sms;
    let id = ok(check, engine.submit(req))?;
    let mut out = Vec::new();
    ok(check, engine.settle(&mut out))?;
    // Half of the whole grid's time alone, then retreat.
    let alone = ok(
        check,
        engine.alone_us(k, crate::kernel_config::KernelConfig::Original, sms),
    )?;
    let half = engine.now() + alone / 2.0;
    while let Some(t) = engine.next_event_time() {
        if t > half {
            break;
        }
        ok(check, engine.advance_to(t, &mut out))?;
    }
    if !out.iter().any(|c| c.launch == id) {
        ok(check, engine.advance_to(half, &mut out))?;
    }
    let already = out.iter().any(|c| c.launch == id);
    if !already && !engine.retreat(id) {
        return Err(broken(
            check,
            "a running preemptive launch refused to retreat".into(),
        ));
    }
    out.extend(drain(engine.as_mut())?);
    let c = completion_of(check, &out, id)?;
    if already || !c.retreated || c.blocks_done >= total {
        return Err(broken(
            check,
            format!("told to retreat half way through, it reported {c:?} (choose a longer kernel)"),
        ));
    }
    let rest = request(
        engine.as_ref(),
        k,
        c.blocks_done,
        total - c.blocks_done,
        true,
    );
    let id2 = ok(check, engine.submit(rest))?;
    let done = drain(engine.as_mut())?;
    let c2 = completion_of(check, &done, id2)?;
    if c2.retreated || c.blocks_done + c2.blocks_done != total {
        return Err(broken(
            check,
            format!(
                "{} then {} blocks of {total}",
                c.blocks_done, c2.blocks_done
            ),
        ));
    }
    Ok(())
}

/// A launch that is not preemptive cannot be told to retreat, and runs on.
pub fn refuses_to_retreat_a_launch_that_cannot(
    mut engine: Box<dyn Engine>,
    spec: &KernelSpec,
) -> Result<(), Broken> {
    let check = "refuses_to_retreat_a_launch_that_cannot";
    let k = ok(check, engine.add_kernel(spec))?;
    let req = request(engine.as_ref(), k, 0, spec.blocks(), false);
    let id = ok(check, engine.submit(req))?;
    let mut out = Vec::new();
    ok(check, engine.settle(&mut out))?;
    if engine.retreat(id) {
        return Err(broken(check, "an original launch agreed to retreat".into()));
    }
    let done = drain(engine.as_mut())?;
    let c = completion_of(check, &done, id)?;
    if c.retreated || c.blocks_done != spec.blocks() {
        return Err(broken(check, format!("{c:?}")));
    }
    Ok(())
}
