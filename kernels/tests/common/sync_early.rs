//! Running `handwritten/sync_early_return.ptx` (or a transformed variant
//! of it): per-thread early returns beside two barriers per iteration.
//! Test support only.

#![allow(dead_code)]

use tally_kernels::ptx::ast::Function;

use super::interp::run;
use super::memory::{Launch, Memory};

/// One sync_early configuration: original grid, threads per block,
/// loop iterations, interleaving seed and kind of schedule.
#[derive(Debug, Clone, Copy)]
pub struct SyncCase {
    pub grid: [u32; 3],
    pub threads: u32,
    pub iters: u32,
    pub seed: u64,
    pub adversarial: bool,
}

/// Runs `f` (sync_early or a variant) for `case`, launched with
/// `launch_grid` plus any extra parameters; returns the output address.
pub fn try_sync_early(
    f: &Function,
    case: SyncCase,
    launch_grid: [u32; 3],
    extra: &[(&str, u64)],
    mem: &mut Memory,
) -> Result<u64, String> {
    let SyncCase {
        grid,
        threads,
        iters,
        seed,
        adversarial,
    } = case;
    let n = (grid[0] * grid[1] * grid[2] * threads) as usize;
    let out = mem.alloc(4 * n);
    let mut launch = Launch::new(launch_grid, [threads, 1, 1])
        .param("sync_early_param_0", out)
        .param("sync_early_param_1", u64::from(iters))
        .param("__tally_grid_x", u64::from(grid[0]))
        .param("__tally_grid_y", u64::from(grid[1]))
        .param("__tally_grid_z", u64::from(grid[2]));
    for (k, v) in extra {
        launch = launch.param(k, *v);
    }
    launch.seed = seed;
    launch.adversarial = adversarial;
    launch.max_steps = 5_000_000;
    run(f, &launch, mem, &mut |_| {}).map(|_| out)
}

/// [`try_sync_early`], panicking on an interpreter error.
pub fn sync_early(
    f: &Function,
    case: SyncCase,
    launch_grid: [u32; 3],
    extra: &[(&str, u64)],
    mem: &mut Memory,
) -> u64 {
    try_sync_early(f, case, launch_grid, extra, mem).unwrap_or_else(|e| panic!("{}: {e}", f.name))
}

pub fn read_out(mem: &Memory, out: u64, n: u32) -> Vec<u32> {
    (0..n)
        .map(|i| mem.read_u32(out + 4 * u64::from(i)))
        .collect()
}
