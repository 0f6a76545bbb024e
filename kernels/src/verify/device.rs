//! The cudarc side of the check: load the transformed library, upload the
//! seeded buffers, launch each run, read the outputs back, time with CUDA
//! events. Kernel launches are FFI calls the compiler cannot check, hence
//! the `unsafe` here; each says what makes it sound.
#![allow(unsafe_code)]

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::library::{self, LibraryKernel, Param, Role};
use cudarc::driver::{
    sys, CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DriverError, LaunchConfig,
    PushKernelArg,
};
use cudarc::nvrtc::Ptx;
use tally_gpu::cuda::driver::{require_cubin_driver, require_driver};
use tally_gpu::cuda::timer::EVENT_TIMING_DRIVER;
use tally_gpu::cuda::{driver_present, Arch};

use super::inputs::{host_args, HostArg};
use super::{
    retreat_failure, CheckError, CheckReport, CheckRow, CheckRun, PreemptionLatency, RunStatus,
    VerifyMode,
};
use crate::build::build_file;
use crate::launch_plan::{Entry, ExtraParam};

fn drv(e: DriverError) -> CheckError {
    CheckError::Driver(format!("{e:?}"))
}

type Res<T> = Result<T, CheckError>;

/// Slices of the sliced run.
const SLICES: u64 = 5;
/// Blocks per worker in the PTB and preemptive runs.
const BLOCKS_PER_WORKER: u64 = 3;
/// Relaunches allowed before a resumed run counts as stuck.
const MAX_RELAUNCHES: u32 = 100_000;
/// How long the retreat-and-resume run waits for its kernel to take a block.
const RETREAT_WAIT: Duration = Duration::from_secs(5);
/// Trials of the preemption-latency measurement.
const LATENCY_TRIALS: usize = 20;

/// Run the whole check on device `ordinal` with inputs seeded by `seed`.
pub fn check_on_device(ordinal: usize, seed: u64, mode: VerifyMode) -> Res<CheckReport> {
    if !driver_present() {
        return Err(CheckError::NoDriver);
    }
    // cudarc panics on a symbol the driver lacks: the timing here calls
    // `cuEventElapsedTime_v2` (CUDA 12.8), and the cubins need the tools'
    // major release; an older driver stops here with both versions named.
    require_driver("tally kernels verify (event timing)", EVENT_TIMING_DRIVER)?;
    require_cubin_driver()?;
    let ctx = CudaContext::new(ordinal).map_err(drv)?;
    // SAFETY: ordering between the two streams is done here by hand (the
    // retreat flag is written on the side stream while the kernel reading it
    // runs, which cudarc's per-buffer tracking would otherwise serialise);
    // every host read follows an explicit stream synchronisation.
    unsafe { ctx.disable_event_tracking() };
    let (major, minor) = ctx.compute_capability().map_err(drv)?;
    let cc = format!("{major}.{minor}");
    let arch = Arch::from_capability(major as u32, minor as u32)
        .ok_or_else(|| CheckError::UnsupportedDevice(cc.clone()))?;
    let device = ctx.name().map_err(drv)?;
    let sms = ctx
        .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        .map_err(drv)? as u32;
    let gpu = Gpu {
        stream: ctx.new_stream().map_err(drv)?,
        side: ctx.new_stream().map_err(drv)?,
        modules: load_library(&ctx, arch)?,
    };
    let mut rows = Vec::new();
    let mut preemption = None;
    let mut preemption_problem = None;
    for k in library::kernels()? {
        if k.min_arch > arch.number() {
            for &run in mode.runs() {
                rows.push(row(
                    k,
                    run,
                    0,
                    None,
                    0.0,
                    RunStatus::Skipped {
                        reason: format!("needs sm_{}", k.min_arch),
                    },
                ));
            }
            continue;
        }
        rows.extend(check_kernel(&gpu, k, seed, mode)?);
        if k.entry == "gemm_f32" && mode.measures_preemption() {
            match preemption_latency(&gpu, k, sms, seed) {
                Ok(p) => preemption = Some(p),
                Err(CheckError::NoPreemption(why)) => preemption_problem = Some(why),
                Err(e) => return Err(e),
            }
        }
    }
    Ok(CheckReport {
        device,
        compute_capability: cc,
        rows,
        preemption,
        preemption_problem,
    })
}

struct Gpu {
    stream: Arc<CudaStream>,
    side: Arc<CudaStream>,
    modules: HashMap<String, Arc<CudaModule>>,
}

impl Gpu {
    fn function(&self, k: &LibraryKernel, run: CheckRun) -> Res<CudaFunction> {
        let name = run.variant().entry_name(&k.entry);
        self.modules[&k.file]
            .load_function(&name)
            .map_err(|e| CheckError::Driver(format!("loading `{name}`: {e:?}")))
    }
}

/// Every library file compiled, transformed and assembled for `arch`, and
/// loaded as a cubin (no JIT, so the driver needs no newer PTX ISA).
fn load_library(ctx: &Arc<CudaContext>, arch: Arch) -> Res<HashMap<String, Arc<CudaModule>>> {
    let mut out = HashMap::new();
    for (file, source) in library::SOURCES {
        let cubin = build_file(file, source, arch)?.cubin;
        let loaded = ctx
            .load_module(Ptx::from_binary(cubin))
            .map_err(|e| CheckError::Driver(format!("loading `{file}`: {e:?}")))?;
        out.insert(file.to_string(), loaded);
    }
    Ok(out)
}

/// The device side of a test launch's arguments.
struct DeviceArgs {
    host: Vec<HostArg>,
    buffers: Vec<Option<CudaSlice<u8>>>,
    counter: CudaSlice<u32>,
    retreat: CudaSlice<u32>,
}

impl DeviceArgs {
    fn upload(stream: &Arc<CudaStream>, host: Vec<HostArg>) -> Res<DeviceArgs> {
        let mut buffers = Vec::with_capacity(host.len());
        for a in &host {
            buffers.push(match a {
                HostArg::Buffer { bytes, .. } => {
                    Some(stream.clone_htod(bytes.as_slice()).map_err(drv)?)
                }
                _ => None,
            });
        }
        Ok(DeviceArgs {
            host,
            buffers,
            counter: stream.alloc_zeros::<u32>(1).map_err(drv)?,
            retreat: stream.alloc_zeros::<u32>(1).map_err(drv)?,
        })
    }

    /// Outputs back to their poison / seed, the task counter and retreat
    /// flag to zero.
    fn reset(&mut self, stream: &Arc<CudaStream>) -> Res<()> {
        for (a, d) in self.host.iter().zip(self.buffers.iter_mut()) {
            if let (HostArg::Buffer { role, bytes, .. }, Some(d)) = (a, d) {
                if *role != Role::In {
                    stream.memcpy_htod(bytes.as_slice(), d).map_err(drv)?;
                }
            }
        }
        stream.memset_zeros(&mut self.counter).map_err(drv)?;
        stream.memset_zeros(&mut self.retreat).map_err(drv)?;
        Ok(())
    }

    /// The output buffers' bytes, by name.
    fn outputs(&self, stream: &Arc<CudaStream>) -> Res<Vec<(String, Vec<u8>)>> {
        stream.synchronize().map_err(drv)?;
        let mut out = Vec::new();
        for (a, d) in self.host.iter().zip(&self.buffers) {
            if let (HostArg::Buffer { name, role, .. }, Some(d)) = (a, d) {
                if *role != Role::In {
                    out.push((name.clone(), stream.clone_dtoh(d).map_err(drv)?));
                }
            }
        }
        Ok(out)
    }

    fn blocks_done(&self, stream: &Arc<CudaStream>) -> Res<u32> {
        stream.synchronize().map_err(drv)?;
        Ok(stream.clone_dtoh(&self.counter).map_err(drv)?[0])
    }
}

/// The variant's extra parameters after the original ones.
#[derive(Clone, Copy)]
enum Extra {
    None,
    Grid([u32; 3]),
    Slice([u32; 3], u32),
    Preempt([u32; 3]),
}

/// Launch `f` with the original arguments and `extra`.
fn launch(
    stream: &Arc<CudaStream>,
    f: &CudaFunction,
    args: &DeviceArgs,
    extra: Extra,
    grid: (u32, u32, u32),
    block: [u32; 3],
) -> Res<()> {
    // Scalars live in these vectors for the duration of the launch call,
    // which copies every argument into the launch.
    let i32s: Vec<i32> = args
        .host
        .iter()
        .map(|a| if let HostArg::I32(v) = a { *v } else { 0 })
        .collect();
    let u32s: Vec<u32> = args
        .host
        .iter()
        .map(|a| if let HostArg::U32(v) = a { *v } else { 0 })
        .collect();
    let f32s: Vec<f32> = args
        .host
        .iter()
        .map(|a| if let HostArg::F32(v) = a { *v } else { 0.0 })
        .collect();
    // The variant's parameters in the transforms' order
    // (`Entry::extra_params`).
    let (entry, g, offset) = match extra {
        Extra::None => (Entry::Original, [0; 3], 0),
        Extra::Grid(g) => (Entry::Ptb, g, 0),
        Extra::Slice(g, o) => (Entry::Sliced, g, o),
        Extra::Preempt(g) => (Entry::Preempt, g, 0),
    };
    let mut b = stream.launch_builder(f);
    for (i, a) in args.host.iter().enumerate() {
        match a {
            HostArg::Buffer { .. } => {
                if let Some(d) = &args.buffers[i] {
                    b.arg(d);
                }
            }
            HostArg::I32(_) => {
                b.arg(&i32s[i]);
            }
            HostArg::U32(_) => {
                b.arg(&u32s[i]);
            }
            HostArg::F32(_) => {
                b.arg(&f32s[i]);
            }
        }
    }
    for p in entry.extra_params() {
        match p {
            ExtraParam::GridX => b.arg(&g[0]),
            ExtraParam::GridY => b.arg(&g[1]),
            ExtraParam::GridZ => b.arg(&g[2]),
            ExtraParam::BlockOffset => b.arg(&offset),
            ExtraParam::Counter => b.arg(&args.counter),
            ExtraParam::Retreat => b.arg(&args.retreat),
        };
    }
    let cfg = LaunchConfig {
        grid_dim: grid,
        block_dim: (block[0], block[1], block[2]),
        shared_mem_bytes: 0,
    };
    // SAFETY: the argument list matches the entry's parameters in order and
    // type (the manifest is checked against the PTX signature in the
    // library's tests; the variants' extras are those the transformer
    // appends), every buffer holds the manifest's element count, and the
    // test launch respects each kernel's documented shape constraints.
    unsafe { b.launch(cfg) }.map_err(drv)?;
    Ok(())
}

fn row(
    k: &LibraryKernel,
    run: CheckRun,
    launches: u32,
    blocks_at_retreat: Option<u32>,
    time_ms: f64,
    status: RunStatus,
) -> CheckRow {
    CheckRow {
        entry: k.entry.clone(),
        run,
        launches,
        blocks_at_retreat,
        blocks: k.test_blocks(),
        time_ms,
        status,
    }
}

fn compare(reference: &[(String, Vec<u8>)], got: &[(String, Vec<u8>)]) -> RunStatus {
    let (mut differing, mut total, mut first) = (0, 0, None);
    for ((name, want), (_, have)) in reference.iter().zip(got) {
        total += want.len();
        for (i, (a, b)) in want.iter().zip(have).enumerate() {
            if a != b {
                differing += 1;
                first.get_or_insert_with(|| format!("{name}[byte {i}]"));
            }
        }
    }
    match first {
        None => RunStatus::Identical,
        Some(first) => RunStatus::Different {
            differing,
            total,
            first,
        },
    }
}

fn timed<T>(stream: &Arc<CudaStream>, body: impl FnOnce() -> Res<T>) -> Res<(T, f64)> {
    let flags = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
    let start = stream.record_event(flags).map_err(drv)?;
    let value = body()?;
    let end = stream.record_event(flags).map_err(drv)?;
    end.synchronize().map_err(drv)?;
    Ok((value, f64::from(start.elapsed_ms(&end).map_err(drv)?)))
}

/// Every run of `k`, each compared with the original's outputs.
fn check_kernel(gpu: &Gpu, k: &LibraryKernel, seed: u64, mode: VerifyMode) -> Res<Vec<CheckRow>> {
    let s = &gpu.stream;
    let mut args = DeviceArgs::upload(s, host_args(k, seed))?;
    let grid = k.grid;
    let total = k.test_blocks();
    let workers = total.div_ceil(BLOCKS_PER_WORKER).max(1) as u32;
    let original = gpu.function(k, CheckRun::Original)?;
    args.reset(s)?;
    let ((), t) = timed(s, || {
        launch(
            s,
            &original,
            &args,
            Extra::None,
            (grid[0], grid[1], grid[2]),
            k.block,
        )
    })?;
    let reference = args.outputs(s)?;
    let mut rows = vec![row(k, CheckRun::Original, 1, None, t, RunStatus::Identical)];
    // The original ran above: the reference every other run is compared with.
    for &run in &mode.runs()[1..] {
        let f = match gpu.function(k, run) {
            Ok(f) => f,
            Err(e) => {
                rows.push(row(
                    k,
                    run,
                    0,
                    None,
                    0.0,
                    RunStatus::Failed {
                        error: e.to_string(),
                    },
                ));
                continue;
            }
        };
        args.reset(s)?;
        let mut blocks_at_retreat = None;
        let ((launches, at), t) = timed(s, || match run {
            CheckRun::Sliced => {
                let size = total.div_ceil(SLICES);
                let mut n = 0;
                for offset in (0..total).step_by(size as usize) {
                    launch(
                        s,
                        &f,
                        &args,
                        Extra::Slice(grid, offset as u32),
                        (size as u32, 1, 1),
                        k.block,
                    )?;
                    n += 1;
                }
                Ok((n, None))
            }
            CheckRun::Ptb => {
                launch(s, &f, &args, Extra::Grid(grid), (workers, 1, 1), k.block)?;
                Ok((1, None))
            }
            CheckRun::Preempt => {
                launch(s, &f, &args, Extra::Preempt(grid), (workers, 1, 1), k.block)?;
                Ok((1, None))
            }
            CheckRun::PreemptResumed => resumed(gpu, &f, &mut args, grid, k.block, total),
            CheckRun::Original => unreachable!(),
        })?;
        let mut status = compare(&reference, &args.outputs(s)?);
        if let Some(at) = at {
            blocks_at_retreat = Some(at);
            if let Some(failed) = retreat_failure(u64::from(at), total) {
                status = failed;
            }
        }
        rows.push(row(k, run, launches, blocks_at_retreat, t, status));
    }
    Ok(rows)
}

/// Launch the preemptive variant with one worker (its blocks then run one
/// after another, so the kernel lasts long enough to be caught mid-run),
/// raise the retreat flag once the worker has taken its first block, then
/// relaunch (flag down) until the counter says every block ran. Returns
/// (launches, blocks finished at the retreat).
///
/// Ordering: the reset of the counter and the flag is queued on the
/// kernel's stream `s`, so `s` is synchronised before the side stream
/// touches either; the flag goes up from the side stream only after the
/// counter shows the kernel running; it comes down on `s`, after the
/// retreated kernel and before the relaunches that must see it clear.
fn resumed(
    gpu: &Gpu,
    f: &CudaFunction,
    args: &mut DeviceArgs,
    grid: [u32; 3],
    block: [u32; 3],
    total: u64,
) -> Res<(u32, Option<u32>)> {
    let (s, side) = (&gpu.stream, &gpu.side);
    s.synchronize().map_err(drv)?;
    launch(s, f, args, Extra::Preempt(grid), (1, 1, 1), block)?;
    let deadline = Instant::now() + RETREAT_WAIT;
    while side.clone_dtoh(&args.counter).map_err(drv)?[0] == 0 {
        if Instant::now() > deadline {
            return Err(CheckError::Driver(format!(
                "the preemptive kernel took no block within {RETREAT_WAIT:?}"
            )));
        }
    }
    side.memcpy_htod(&[1u32], &mut args.retreat).map_err(drv)?;
    side.synchronize().map_err(drv)?;
    // The retreated kernel has exited: every block it took is finished.
    let at = args.blocks_done(s)?;
    s.memcpy_htod(&[0u32], &mut args.retreat).map_err(drv)?;
    let mut launches = 1;
    while u64::from(args.blocks_done(s)?) < total {
        if launches >= MAX_RELAUNCHES {
            return Err(CheckError::Driver(format!(
                "preemptive relaunches made no progress after {launches} launches"
            )));
        }
        launch(s, f, args, Extra::Preempt(grid), (1, 1, 1), block)?;
        launches += 1;
    }
    Ok((launches, Some(at.min(total as u32))))
}

/// A long preemptive GEMM (4096^3 fp32, one wave of workers per SM slot):
/// after it has run a while, the retreat flag is set from the side stream;
/// the latency is from the flag's copy completing to the kernel's end.
fn preemption_latency(gpu: &Gpu, k: &LibraryKernel, sms: u32, seed: u64) -> Res<PreemptionLatency> {
    const N: u64 = 4096;
    let mut big = k.clone();
    big.grid = [(N / 64) as u32, (N / 64) as u32, 1];
    for p in &mut big.params {
        match p {
            Param::Ptr { elems, .. } => *elems = N * N,
            Param::I32 { value, .. } => *value = N as i64,
            _ => {}
        }
    }
    let (s, side) = (&gpu.stream, &gpu.side);
    let f = gpu.function(&big, CheckRun::Preempt)?;
    let per_sm = f
        .occupancy_max_active_blocks_per_multiprocessor(big.block.iter().product(), 0, None)
        .map_err(drv)?
        .max(1);
    let workers = sms * per_sm;
    let total = big.test_blocks();
    let mut args = DeviceArgs::upload(s, host_args(&big, seed))?;
    args.reset(s)?;
    let run = |a: &DeviceArgs| {
        launch(
            s,
            &f,
            a,
            Extra::Preempt(big.grid),
            (workers, 1, 1),
            big.block,
        )
    };
    let ((), full_run_ms) = timed(s, || run(&args))?;
    let flags = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
    let mut trials = Vec::new();
    for _ in 0..LATENCY_TRIALS {
        args.reset(s)?;
        s.synchronize().map_err(drv)?;
        run(&args)?;
        let end = s.record_event(flags).map_err(drv)?;
        // Let it run about a third of its full length first.
        spin(Duration::from_secs_f64(full_run_ms / 3.0 / 1e3));
        side.memcpy_htod(&[1u32], &mut args.retreat).map_err(drv)?;
        let landed = side.record_event(flags).map_err(drv)?;
        end.synchronize().map_err(drv)?;
        landed.synchronize().map_err(drv)?;
        let blocks = args.blocks_done(s)?;
        if u64::from(blocks) >= total {
            // Finished before the flag landed: not a preemption.
            continue;
        }
        let latency_us = f64::from(landed.elapsed_ms(&end).map_err(drv)?).max(0.0) * 1e3;
        trials.push((latency_us, u64::from(blocks)));
    }
    PreemptionLatency::from_trials(
        &big.entry,
        total,
        workers,
        full_run_ms,
        trials,
        LATENCY_TRIALS,
    )
    .map_err(CheckError::NoPreemption)
}

/// Busy-wait: a sleep's wake-up jitter is larger than the kernels here.
fn spin(d: Duration) {
    let start = Instant::now();
    while start.elapsed() < d {
        std::hint::spin_loop();
    }
}
