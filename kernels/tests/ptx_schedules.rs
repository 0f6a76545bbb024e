//! The sync-aware end point under adversarial schedules: the interpreter
//! runs one randomly chosen thread per instruction (`Launch::adversarial`),
//! so threads of a warp diverge and warps interleave at every barrier and
//! memory operation. `sync_early_return.ptx` has threads that return early
//! beside two barriers per iteration, the case the end point exists for.
//!
//! The end point the pass emitted before 2026-12 (a shared `done` counter
//! read after a barrier, `fixtures/regressions/sync_done_counter.ptx`)
//! lets threads take the exit decision in different barrier rounds; the
//! schedules here find that. The current one (a `barrier.red.popc` vote)
//! gives every thread the same decision in the same round, and no schedule
//! of thousands breaks it.

mod common;

use common::memory::Memory;
use common::sync_early::{read_out, try_sync_early, SyncCase};
use tally_kernels::ptx::ast::Module;
use tally_kernels::ptx::{parse_module, transform_module, Variants};

/// Original grids, threads per block and iterations the schedules cycle
/// through; each has threads that leave after their first iteration while
/// their neighbours go on through both barriers.
const SHAPES: [([u32; 3], u32, u32); 4] = [
    ([2, 1, 1], 4, 3),
    ([3, 1, 1], 3, 2),
    ([1, 2, 1], 5, 4),
    ([4, 1, 1], 2, 2),
];

fn case(seed: u64) -> SyncCase {
    let (grid, threads, iters) = SHAPES[(seed % SHAPES.len() as u64) as usize];
    SyncCase {
        grid,
        threads,
        iters,
        seed,
        adversarial: true,
    }
}

fn blocks(c: &SyncCase) -> u32 {
    c.grid.iter().product()
}

/// The original kernel's output for `c` (its own schedule is adversarial
/// too: the original is correct under any interleaving).
fn expected(m: &Module, c: SyncCase) -> Vec<u32> {
    let f = m.function("sync_early").expect("sync_early");
    let mut mem = Memory::default();
    let out = try_sync_early(f, c, c.grid, &[], &mut mem).expect("original runs");
    read_out(&mem, out, blocks(&c) * c.threads)
}

/// Runs the PTB and the preemptive variant of `m` for `c` with `workers`
/// persistent CTAs; the first that fails (an interpreter error such as a
/// hang, or an output that differs from `expect`) is returned.
fn run_variants(m: &Module, c: SyncCase, workers: u32, expect: &[u32]) -> Result<(), String> {
    let n = blocks(&c) * c.threads;
    let ptb = m.function("sync_early__tally_ptb").expect("ptb variant");
    let mut mem = Memory::default();
    let out =
        try_sync_early(ptb, c, [workers, 1, 1], &[], &mut mem).map_err(|e| format!("ptb: {e}"))?;
    if read_out(&mem, out, n) != expect {
        return Err("ptb: output differs from the original's".into());
    }
    let preempt = m
        .function("sync_early__tally_preempt")
        .expect("preemptive variant");
    let mut mem = Memory::default();
    let counter = mem.alloc(4);
    let retreat = mem.alloc(4);
    let extra = [("__tally_counter", counter), ("__tally_retreat", retreat)];
    let out = try_sync_early(preempt, c, [workers, 1, 1], &extra, &mut mem)
        .map_err(|e| format!("preempt: {e}"))?;
    if read_out(&mem, out, n) != expect {
        return Err("preempt: output differs from the original's".into());
    }
    Ok(())
}

#[test]
fn adversarial_schedules_break_the_old_done_counter_end_point() {
    let original = parse_module(&common::handwritten("sync_early_return.ptx")).unwrap();
    let old = parse_module(&common::read(
        &common::fixture_dir("regressions").join("sync_done_counter.ptx"),
    ))
    .unwrap();
    let found = (1..=4000u64).find_map(|seed| {
        let c = case(seed);
        let expect = expected(&original, c);
        let workers = 1 + (seed % 2) as u32;
        run_variants(&old, c, workers, &expect)
            .err()
            .map(|e| (seed, e))
    });
    let (seed, failure) = found.expect("no schedule of 4000 broke the old end point");
    eprintln!("old end point broken by schedule {seed}: {failure}");
}

#[test]
fn the_sync_aware_end_point_survives_thousands_of_adversarial_schedules() {
    let original = parse_module(&common::handwritten("sync_early_return.ptx")).unwrap();
    let transformed = transform_module(&original, Variants::ALL).unwrap();
    for seed in 1..=10_000u64 {
        let c = case(seed);
        let expect = expected(&original, c);
        let workers = 1 + (seed % 3) as u32;
        if let Err(e) = run_variants(&transformed, c, workers, &expect) {
            panic!("schedule {seed} ({c:?}, {workers} workers): {e}");
        }
    }
}

/// `fixtures/cuda/partial_warp_return.cu` (NVRTC's PTX): part of every
/// warp returns before the two barriers of each exchange round.
mod partial_warp {
    use super::*;
    use common::interp::run;
    use common::memory::Launch;
    use tally_kernels::ptx::ast::Function;

    const BLOCKS: u32 = 3;
    const THREADS: u32 = 6;
    const ROUNDS: u64 = 3;

    /// Runs `f` on `ctas` CTAs (the preemptive variant with its counter
    /// and a clear retreat flag) on fresh memory; returns `out`.
    fn launch(
        f: &Function,
        ctas: u32,
        live: u32,
        seed: u64,
        preempt: bool,
    ) -> Result<Vec<u32>, String> {
        let n = BLOCKS * THREADS;
        let mut mem = Memory::default();
        let input = mem.alloc(4 * n as usize);
        for i in 0..n {
            mem.write_u32(input + 4 * u64::from(i), 1 + i * 7);
        }
        let out = mem.alloc(4 * n as usize);
        let mut l = Launch::new([ctas, 1, 1], [THREADS, 1, 1])
            .param("partial_warp_return_param_0", input)
            .param("partial_warp_return_param_1", out)
            .param("partial_warp_return_param_2", u64::from(live))
            .param("partial_warp_return_param_3", ROUNDS)
            .param("__tally_grid_x", u64::from(BLOCKS))
            .param("__tally_grid_y", 1)
            .param("__tally_grid_z", 1);
        if preempt {
            l = l
                .param("__tally_counter", mem.alloc(4))
                .param("__tally_retreat", mem.alloc(4));
        }
        l.seed = seed;
        l.adversarial = true;
        l.max_steps = 2_000_000;
        run(f, &l, &mut mem, &mut |_| {})?;
        Ok(read_out(&mem, out, n))
    }

    #[test]
    fn persistent_variants_match_the_original_under_adversarial_schedules() {
        let ptx = common::read(&common::fixture_dir("ptx").join("partial_warp_return.sm_90.ptx"));
        let original = parse_module(&ptx).unwrap();
        let t = transform_module(&original, Variants::ALL).unwrap();
        let variant = |name: &str| t.function(name).unwrap_or_else(|| panic!("{name}"));
        let (ptb, preempt) = (
            variant("partial_warp_return__tally_ptb"),
            variant("partial_warp_return__tally_preempt"),
        );
        for seed in 1..=2000u64 {
            // 1..THREADS-1 live threads: always some of the warp returns.
            let live = 1 + (seed % u64::from(THREADS - 1)) as u32;
            let f = original.function("partial_warp_return").unwrap();
            let expect = launch(f, BLOCKS, live, seed, false).expect("original runs");
            let workers = 1 + (seed % 2) as u32;
            let got = launch(ptb, workers, live, seed, false);
            assert_eq!(
                got.as_deref(),
                Ok(&expect[..]),
                "ptb, schedule {seed}, live {live}"
            );
            let got = launch(preempt, workers, live, seed, true);
            assert_eq!(
                got.as_deref(),
                Ok(&expect[..]),
                "preempt, schedule {seed}, live {live}"
            );
        }
    }
}
