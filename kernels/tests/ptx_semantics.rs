//! Semantics of the transforms, proved by running original and transformed
//! kernels in the test interpreter (`common::interp`): slices and persistent
//! workers visit every original block exactly once with the right
//! `%ctaid` / `%nctaid`; preemption stops after whole blocks, the counter
//! says how many, and a relaunch finishes the rest; the sync-aware pass
//! makes early returns next to barriers complete with unchanged results.

mod common;

use common::interp::run;
use common::memory::{Launch, Memory};
use common::sync_early::{read_out, sync_early, SyncCase};
use proptest::prelude::*;
use tally_kernels::ptx::ast::{Function, Module};
use tally_kernels::ptx::{parse_module, transform_module, walk, Variants};
use tally_kernels::verify::{retreat_failure, RunStatus};

fn transformed(fixture: &str) -> Module {
    let m = parse_module(&common::handwritten(fixture)).unwrap();
    transform_module(&m, Variants::ALL).unwrap()
}

fn func<'m>(m: &'m Module, name: &str) -> &'m Function {
    m.function(name)
        .unwrap_or_else(|| panic!("no function {name}"))
}

/// Memory for record3d: visits (u32 per block) and ids (6 u32 per block).
struct Record {
    mem: Memory,
    visits: u64,
    ids: u64,
    total: u32,
}

impl Record {
    fn new(grid: [u32; 3]) -> Record {
        let total = grid[0] * grid[1] * grid[2];
        let mut mem = Memory::default();
        let visits = mem.alloc(4 * total as usize);
        let ids = mem.alloc(24 * total as usize);
        Record {
            mem,
            visits,
            ids,
            total,
        }
    }

    fn launch(&self, grid: [u32; 3], block: [u32; 3], orig: [u32; 3]) -> Launch {
        Launch::new(grid, block)
            .param("record3d_param_0", self.visits)
            .param("record3d_param_1", self.ids)
            .param("__tally_grid_x", u64::from(orig[0]))
            .param("__tally_grid_y", u64::from(orig[1]))
            .param("__tally_grid_z", u64::from(orig[2]))
    }

    fn visits(&self, l: u32) -> u32 {
        self.mem.read_u32(self.visits + 4 * u64::from(l))
    }

    /// Every block visited by all `threads` threads exactly once, with the
    /// original coordinates and grid recorded.
    fn check_complete(&self, grid: [u32; 3], threads: u32) {
        for l in 0..self.total {
            assert_eq!(self.visits(l), threads, "block {l} of {grid:?}");
            let x = l % grid[0];
            let y = (l / grid[0]) % grid[1];
            let z = l / (grid[0] * grid[1]);
            let ids: Vec<u32> = (0..6)
                .map(|k| self.mem.read_u32(self.ids + 24 * u64::from(l) + 4 * k))
                .collect();
            assert_eq!(
                ids,
                [x, y, z, grid[0], grid[1], grid[2]],
                "block {l} of {grid:?}"
            );
        }
    }
}

const GRIDS: &[[u32; 3]] = &[
    [1, 1, 1],
    [5, 1, 1],
    [3, 2, 1],
    [2, 3, 4],
    [7, 1, 3],
    [1, 4, 2],
];

#[test]
fn original_record3d_records_its_grid() {
    let m = parse_module(&common::handwritten("record3d.ptx")).unwrap();
    for &grid in GRIDS {
        let mut r = Record::new(grid);
        let launch = r.launch(grid, [2, 1, 1], grid);
        run(func(&m, "record3d"), &launch, &mut r.mem, &mut |_| {}).unwrap();
        r.check_complete(grid, 2);
    }
}

#[test]
fn slices_cover_every_block_exactly_once() {
    let t = transformed("record3d.ptx");
    let f = func(&t, "record3d__tally_sliced");
    for &grid in GRIDS {
        let total = grid[0] * grid[1] * grid[2];
        for slice in [1, 2, 3, 5, total, total + 3] {
            let mut r = Record::new(grid);
            let mut offset = 0;
            while offset < total {
                let launch = r
                    .launch([slice, 1, 1], [2, 1, 1], grid)
                    .param("__tally_block_offset", u64::from(offset));
                run(f, &launch, &mut r.mem, &mut |_| {}).unwrap();
                offset += slice;
            }
            r.check_complete(grid, 2);
        }
    }
}

#[test]
fn ptb_workers_cover_every_block_exactly_once() {
    let t = transformed("record3d.ptx");
    let f = func(&t, "record3d__tally_ptb");
    for &grid in GRIDS {
        let total = grid[0] * grid[1] * grid[2];
        for workers in [1, 2, 3, 4, total, total + 2] {
            let mut r = Record::new(grid);
            let launch = r.launch([workers, 1, 1], [3, 1, 1], grid);
            run(f, &launch, &mut r.mem, &mut |_| {}).unwrap();
            r.check_complete(grid, 3);
        }
    }
}

/// Runs the preemptive record3d kernel with W workers, raising the retreat
/// flag once the counter reaches `retreat_at`; then checks the counter
/// matches the completed blocks, relaunches, and checks completion.
fn preempt_case(grid: [u32; 3], workers: u32, threads: u32, retreat_at: u32, seed: u64) {
    let t = transformed("record3d.ptx");
    let f = func(&t, "record3d__tally_preempt");
    let mut r = Record::new(grid);
    let counter = r.mem.alloc(4);
    let retreat = r.mem.alloc(4);
    let mut launch = r
        .launch([workers, 1, 1], [threads, 1, 1], grid)
        .param("__tally_counter", counter)
        .param("__tally_retreat", retreat);
    launch.seed = seed;
    run(f, &launch, &mut r.mem, &mut |mem| {
        if mem.read_u32(counter) >= retreat_at {
            mem.write_u32(retreat, 1);
        }
    })
    .unwrap();
    let done = r.mem.read_u32(counter).min(r.total);
    for l in 0..r.total {
        let expect = if l < done { threads } else { 0 };
        assert_eq!(r.visits(l), expect, "block {l}: counter says {done} done (grid {grid:?}, W {workers}, retreat at {retreat_at})");
    }
    // Resume with the same counter and the flag cleared.
    r.mem.write_u32(retreat, 0);
    launch.seed = seed.wrapping_add(7);
    run(f, &launch, &mut r.mem, &mut |_| {}).unwrap();
    r.check_complete(grid, threads);
}

#[test]
fn preempt_retreats_at_block_boundaries_and_resumes() {
    preempt_case([3, 2, 1], 2, 2, 0, 1);
    preempt_case([3, 2, 1], 2, 2, 3, 2);
    preempt_case([2, 2, 2], 3, 1, 5, 3);
    preempt_case([4, 1, 1], 1, 3, 100, 4);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn preempt_every_block_runs_exactly_once(
        gx in 1u32..5, gy in 1u32..3, gz in 1u32..3,
        workers in 1u32..5, threads in 1u32..4,
        retreat_frac in 0u32..=100, seed in any::<u64>(),
    ) {
        let total = gx * gy * gz;
        let retreat_at = retreat_frac * (total + 1) / 100;
        preempt_case([gx, gy, gz], workers, threads, retreat_at, seed);
    }
}

#[test]
fn sync_aware_pass_completes_with_the_original_results() {
    let m = parse_module(&common::handwritten("sync_early_return.ptx")).unwrap();
    let t = transform_module(&m, Variants::ALL).unwrap();
    for (grid, threads, iters) in [
        ([3, 2, 1], 5, 4),
        ([2, 1, 1], 8, 8),
        ([1, 3, 1], 3, 1),
        ([4, 1, 1], 6, 3),
    ] {
        let n = grid[0] * grid[1] * grid[2] * threads;
        for seed in [1, 2, 3] {
            let case = SyncCase {
                grid,
                threads,
                iters,
                seed,
                adversarial: false,
            };
            let mut mem = Memory::default();
            let out = sync_early(func(&m, "sync_early"), case, grid, &[], &mut mem);
            let expect = read_out(&mem, out, n);
            assert!(expect.iter().any(|&v| v != 0));

            for workers in [1, 2, 5] {
                let mut mem = Memory::default();
                let out = sync_early(
                    func(&t, "sync_early__tally_ptb"),
                    case,
                    [workers, 1, 1],
                    &[],
                    &mut mem,
                );
                assert_eq!(
                    read_out(&mem, out, n),
                    expect,
                    "ptb W={workers} grid {grid:?}"
                );

                let mut mem = Memory::default();
                let counter = mem.alloc(4);
                let retreat = mem.alloc(4);
                let extra = [("__tally_counter", counter), ("__tally_retreat", retreat)];
                let out = sync_early(
                    func(&t, "sync_early__tally_preempt"),
                    case,
                    [workers, 1, 1],
                    &extra,
                    &mut mem,
                );
                assert_eq!(
                    read_out(&mem, out, n),
                    expect,
                    "preempt W={workers} grid {grid:?}"
                );
            }

            let mut mem = Memory::default();
            let total = grid[0] * grid[1] * grid[2];
            let out = sync_early(
                func(&t, "sync_early__tally_sliced"),
                case,
                [total, 1, 1],
                &[("__tally_block_offset", 0)],
                &mut mem,
            );
            assert_eq!(read_out(&mem, out, n), expect, "sliced grid {grid:?}");
        }
    }
}

#[test]
fn ptb_exit_in_nested_entry_is_a_branch_and_funcs_still_return() {
    // calls_twice: `@%p1 exit;` for all but thread 0, and a call to a .func.
    let m = parse_module(&common::handwritten("nested.ptx")).unwrap();
    let t = transform_module(&m, Variants::ALL).unwrap();
    let count = |f: &Function, op: &str| {
        let mut n = 0;
        walk::for_each_instr(f.body.as_ref().unwrap(), &mut |i| {
            n += usize::from(i.opcode == op)
        });
        n
    };
    let ptb = func(&t, "calls_twice__tally_ptb");
    assert_eq!(count(ptb, "exit"), 0);
    assert_eq!(count(ptb, "ret"), 1, "only the loop exit returns");
    assert_eq!(count(func(&t, "twice"), "ret"), 1, ".func keeps its ret");
}

/// `tally kernels verify`'s retreat-and-resume row, as the device runs it:
/// one worker, the flag raised once the counter shows a block taken. The
/// kernel then stops part-way and the row passes; a flag that is cleared
/// again before the kernel starts (what the unordered reset on the
/// kernel's stream could do) lets it run to its end, and the row fails
/// instead of passing a test of nothing.
#[test]
fn the_retreat_row_fails_unless_the_kernel_stopped_part_way() {
    let grid = [4, 2, 1];
    let t = transformed("record3d.ptx");
    let f = func(&t, "record3d__tally_preempt");
    let run_once = |raise_when_running: bool| -> u64 {
        let mut r = Record::new(grid);
        let counter = r.mem.alloc(4);
        let retreat = r.mem.alloc(4);
        let mut launch = r
            .launch([1, 1, 1], [2, 1, 1], grid)
            .param("__tally_counter", counter)
            .param("__tally_retreat", retreat);
        launch.adversarial = true;
        if !raise_when_running {
            // Raised early, then cleared by a reset that lands later.
            r.mem.write_u32(retreat, 1);
            r.mem.write_u32(retreat, 0);
        }
        run(f, &launch, &mut r.mem, &mut |mem| {
            if raise_when_running && mem.read_u32(counter) >= 1 {
                mem.write_u32(retreat, 1);
            }
        })
        .unwrap();
        u64::from(r.mem.read_u32(counter).min(r.total))
    };
    let total = 8;
    let finished = run_once(true);
    assert!(finished > 0 && finished < total, "{finished}");
    assert_eq!(retreat_failure(finished, total), None);
    let finished = run_once(false);
    assert_eq!(finished, total);
    let failed = retreat_failure(finished, total).expect("a run to the end fails the row");
    assert!(
        matches!(&failed, RunStatus::Failed { error } if error.contains("did not retreat mid-run")),
        "{failed:?}"
    );
    assert!(retreat_failure(0, total).is_some());
}
