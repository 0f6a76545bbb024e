//! `launch_plan` on the PTX interpreter: a kernel's blocks driven through
//! any sequence of the launches a scheduler makes — slices, the rest run
//! untransformed, whole-grid originals and PTB, preemptive workers told to
//! retreat at any point and resumed from their progress — each planned by
//! `launch_plan::plan` and run as the plan says (entry, grid, offset,
//! counter). Every block runs exactly once, and after every launch the
//! done blocks are exactly the prefix the scheduler's progress says. And
//! `BlockMap`, which maps the scheduler's blocks of a kernel onto its
//! stand-in's grid, runs every stand-in block exactly once through any
//! such schedule, whatever the two grids' sizes.

mod common;

use common::interp::run;
use common::memory::{Launch, Memory};
use proptest::prelude::*;
use tally_kernels::launch_plan::{plan, preempt_progress, total_blocks, Entry, RangeLaunch};
use tally_kernels::ptx::ast::Module;
use tally_kernels::ptx::{parse_module, transform_module, Variants};

/// A small deterministic generator for the schedule (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: u32, hi: u32) -> u32 {
        lo + (self.next() % u64::from(hi - lo + 1)) as u32
    }
}

/// record3d's memory: every thread of block L adds 1 to visits[L].
struct World {
    mem: Memory,
    visits: u64,
    ids: u64,
    counter: u64,
    retreat: u64,
}

impl World {
    fn new(total: u32) -> World {
        let mut mem = Memory::default();
        let visits = mem.alloc(4 * total as usize);
        let ids = mem.alloc(24 * total as usize);
        let counter = mem.alloc(4);
        let retreat = mem.alloc(4);
        World {
            mem,
            visits,
            ids,
            counter,
            retreat,
        }
    }

    fn visits(&self, l: u32) -> u32 {
        self.mem.read_u32(self.visits + 4 * u64::from(l))
    }

    /// Runs the planned launch; a preemptive one raises the retreat flag
    /// once the counter reaches `retreat_at`. Returns the blocks done.
    fn run(
        &mut self,
        m: &Module,
        r: &RangeLaunch,
        threads: u32,
        retreat_at: u32,
        seed: u64,
    ) -> Result<u32, String> {
        let p = plan(r).map_err(|e| e.to_string())?;
        let f = m
            .function(&p.entry.name("record3d"))
            .ok_or_else(|| format!("no entry for {:?}", p.entry))?;
        let mut l = Launch::new(p.grid, [threads, 1, 1])
            .param("record3d_param_0", self.visits)
            .param("record3d_param_1", self.ids);
        if let Some(g) = p.original_grid {
            l = l
                .param("__tally_grid_x", u64::from(g[0]))
                .param("__tally_grid_y", u64::from(g[1]))
                .param("__tally_grid_z", u64::from(g[2]));
        }
        if let Some(offset) = p.block_offset {
            l = l.param("__tally_block_offset", u64::from(offset));
        }
        if let Some(start) = p.counter_start {
            // What the host does before a preemptive launch.
            self.mem.write_u32(self.counter, start);
            self.mem.write_u32(self.retreat, 0);
            l = l
                .param("__tally_counter", self.counter)
                .param("__tally_retreat", self.retreat);
        }
        l.seed = seed;
        let (counter, retreat) = (self.counter, self.retreat);
        // Only a preemptible launch is ever told to retreat.
        let told = r.preemptible;
        run(f, &l, &mut self.mem, &mut |mem| {
            if told && mem.read_u32(counter) >= retreat_at {
                mem.write_u32(retreat, 1);
            }
        })?;
        let total = total_blocks(r.grid).unwrap();
        Ok(if p.entry == Entry::Preempt {
            preempt_progress(&p, self.mem.read_u32(self.counter), total)
        } else {
            r.blocks as u32
        })
    }
}

/// Drives one kernel of `grid` to completion through a schedule drawn from
/// `seed`, checking the done prefix after every launch.
fn drive(m: &Module, grid: [u32; 3], threads: u32, seed: u64) {
    let total = total_blocks(grid).unwrap();
    let mut w = World::new(total);
    let mut rng = Rng(seed);
    let mut progress = 0u32;
    let mut launches = 0;
    while progress < total {
        let left = total - progress;
        let choice = rng.range(0, 5);
        let r = |first: u32, blocks: u32, workers: Option<u32>, preemptible: bool| RangeLaunch {
            grid,
            first_block: u64::from(first),
            blocks: u64::from(blocks),
            workers,
            preemptible,
        };
        let (launch, retreat_at) = match choice {
            // The whole grid untransformed, or as PTB, from the start only.
            0 if progress == 0 => (r(0, total, None, false), 0),
            1 if progress == 0 => (r(0, total, Some(rng.range(1, 5)), false), 0),
            // A slice of what is left, or all of it untransformed.
            0..=2 => (r(progress, rng.range(1, left), None, false), 0),
            // Persistent workers for the rest, not preemptible.
            3 if progress > 0 => (r(progress, left, Some(rng.range(1, 5)), false), 0),
            // Preemptive workers, told to retreat at any counter value.
            _ => (
                r(progress, left, Some(rng.range(1, 5)), true),
                rng.range(progress, total + 1),
            ),
        };
        let done = w
            .run(m, &launch, threads, retreat_at, rng.next())
            .unwrap_or_else(|e| panic!("{launch:?}: {e}"));
        progress += done;
        launches += 1;
        for l in 0..total {
            let expect = if l < progress { threads } else { 0 };
            assert_eq!(
                w.visits(l),
                expect,
                "block {l} after launch {launches} ({launch:?}): progress {progress}"
            );
        }
        assert!(launches < 200, "no progress: {launch:?}");
    }
}

fn transformed() -> Module {
    let m = parse_module(&common::handwritten("record3d.ptx")).unwrap();
    transform_module(&m, Variants::ALL).unwrap()
}

/// The variants' parameters by position: the original kernel's, then
/// exactly `Entry::extra_params` in that order (a real launch passes its
/// arguments by position, so a swap would run with a wrong counter or
/// offset).
#[test]
fn every_variant_takes_the_original_parameters_then_its_extras_in_order() {
    let m = transformed();
    let names = |entry: Entry| -> Vec<String> {
        let f = m.function(&entry.name("record3d")).expect("entry");
        f.params
            .as_ref()
            .expect("an entry's parameter list")
            .iter()
            .flat_map(|p| p.declarators.iter().map(|d| d.name.clone()))
            .collect()
    };
    let original = names(Entry::Original);
    assert_eq!(original, ["record3d_param_0", "record3d_param_1"]);
    for entry in [Entry::Sliced, Entry::Ptb, Entry::Preempt] {
        let all = names(entry);
        let extras: Vec<&str> = entry.extra_params().iter().map(|p| p.name()).collect();
        assert_eq!(&all[..original.len()], &original[..], "{entry:?}");
        assert_eq!(&all[original.len()..], &extras[..], "{entry:?}");
    }
    assert!(Entry::Original.extra_params().is_empty());
}

#[test]
fn a_kernel_resumed_after_retreats_runs_every_block_once() {
    let m = transformed();
    for seed in 1..=40 {
        drive(&m, [3, 2, 2], 2, seed);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_block_runs_exactly_once_across_any_schedule(
        gx in 1u32..6, gy in 1u32..3, gz in 1u32..3, threads in 1u32..4, seed in any::<u64>(),
    ) {
        drive(&transformed(), [gx, gy, gz], threads, seed);
    }
}

/// A scheduler drives a kernel of `spec` blocks through slices and
/// preemptive rests that retreat after a random number of stand-in
/// blocks; the device runs each range `BlockMap` gives it. Every stand-in
/// block runs exactly once, the scheduler's progress only moves forward
/// within what it asked for, and it sees the kernel done exactly when the
/// device is.
fn drive_map(spec: u64, standin: u64, seed: u64) {
    use tally_kernels::launch_plan::BlockMap;
    let mut map = BlockMap::new(spec, standin);
    let mut ran = vec![0u8; standin as usize];
    let mut rng = Rng(seed);
    let mut progress = 0u64;
    let mut launches = 0;
    while progress < spec {
        let left = spec - progress;
        let preemptive = rng.range(0, 1) == 1;
        let count = if preemptive {
            left
        } else {
            u64::from(rng.range(1, left.min(1_000) as u32))
        };
        let (first, n) = map.standin_range(progress, count);
        assert_eq!(
            first,
            map.device_done(),
            "a range starts where the device stopped"
        );
        let done_here = if preemptive {
            u64::from(rng.range(0, n as u32))
        } else {
            n
        };
        for b in first..first + done_here {
            ran[b as usize] += 1;
        }
        let retreated = preemptive && done_here < n;
        let blocks_done = map.record(progress, count, done_here, retreated);
        assert!(blocks_done <= count, "{blocks_done} of {count}");
        if !retreated {
            assert_eq!(blocks_done, count);
        }
        progress += blocks_done;
        launches += 1;
        assert!(launches < 10_000, "no progress");
    }
    assert!(ran.iter().all(|&r| r == 1), "stand-in blocks run {ran:?}");
    assert_eq!(map.device_done(), standin);
}

#[test]
fn block_maps_of_fewer_equal_and_more_stand_in_blocks() {
    for (spec, standin) in [(10, 10), (10, 3), (3, 10), (1, 7), (7, 1), (864, 216)] {
        for seed in 1..=50 {
            drive_map(spec, standin, seed);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn every_stand_in_block_runs_exactly_once_through_the_block_map(
        spec in 1u64..3_000, standin in 1u64..3_000, seed in any::<u64>(),
    ) {
        drive_map(spec, standin, seed);
    }
}
