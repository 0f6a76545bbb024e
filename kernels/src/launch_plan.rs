//! How a range of a kernel's blocks is launched on a real GPU: which entry
//! of the transformed module (the original, `__tally_sliced`,
//! `__tally_ptb` or `__tally_preempt`), with what grid, and what the extra
//! parameters and the task counter must hold. The scheduler speaks in
//! block ranges (a slice's offset, the progress a retreated kernel resumes
//! from); the transformed kernels speak in their parameters
//! (`ptx::transform`'s conventions). This module is the one translation,
//! a pure function, so the CUDA engine launches what the plan says and the
//! tests run the same plans on the PTX interpreter.
//!
//! The rules follow from what each variant can express:
//! - the original entry runs the whole grid, so only a launch of every
//!   block from block 0 uses it;
//! - a range that starts past block 0 or stops before the end, without
//!   persistent workers, is one launch of the sliced entry (1-D grid of
//!   the range's length, `__tally_block_offset` = its first block), which
//!   is also how a retreated kernel's remaining blocks run untransformed;
//! - the PTB entry strides over the whole grid from `%ctaid.x`, so it only
//!   runs a whole grid (the rest of a grid already part run goes to the
//!   preemptive entry, never told to retreat);
//! - the preemptive entry takes blocks in order from the task counter up
//!   to the end of the grid, so it runs any range that ends at the grid's
//!   end: the host sets the counter to the range's first block and clears
//!   the retreat flag before the launch, and after the workers have exited
//!   the blocks `first .. min(counter, total)` are done (the variant's
//!   resume invariant).

use thiserror::Error;

/// The entry of the transformed module a launch uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    Original,
    Sliced,
    Ptb,
    Preempt,
}

impl Entry {
    /// The entry's name for kernel `name` (the transforms' suffixes).
    pub fn name(self, name: &str) -> String {
        use crate::ptx::transform::{preempt, ptb, sliced};
        match self {
            Entry::Original => name.to_string(),
            Entry::Sliced => format!("{name}{}", sliced::SUFFIX),
            Entry::Ptb => format!("{name}{}", ptb::SUFFIX),
            Entry::Preempt => format!("{name}{}", preempt::SUFFIX),
        }
    }
}

/// A parameter a variant appends after the original entry's, in order
/// (`ptx::transform`'s names): a real launch passes its arguments by
/// position, so this order is the variants' calling convention.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtraParam {
    GridX,
    GridY,
    GridZ,
    BlockOffset,
    Counter,
    Retreat,
}

impl ExtraParam {
    /// The parameter's name in the transformed PTX.
    pub fn name(self) -> &'static str {
        use crate::ptx::transform::{preempt, sliced, PARAM_GRID};
        match self {
            ExtraParam::GridX => PARAM_GRID[0],
            ExtraParam::GridY => PARAM_GRID[1],
            ExtraParam::GridZ => PARAM_GRID[2],
            ExtraParam::BlockOffset => sliced::PARAM_BLOCK_OFFSET,
            ExtraParam::Counter => preempt::PARAM_COUNTER,
            ExtraParam::Retreat => preempt::PARAM_RETREAT,
        }
    }
}

impl Entry {
    /// The parameters the entry takes after the original kernel's.
    pub fn extra_params(self) -> &'static [ExtraParam] {
        use ExtraParam::*;
        match self {
            Entry::Original => &[],
            Entry::Ptb => &[GridX, GridY, GridZ],
            Entry::Sliced => &[GridX, GridY, GridZ, BlockOffset],
            Entry::Preempt => &[GridX, GridY, GridZ, Counter, Retreat],
        }
    }
}

/// What the scheduler asks for: a range of the grid's blocks, run by
/// persistent workers or not, preemptible or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RangeLaunch {
    /// The kernel's grid.
    pub grid: [u32; 3],
    pub first_block: u64,
    pub blocks: u64,
    /// Persistent workers in all (None: one CTA per block).
    pub workers: Option<u32>,
    /// Whether the host may tell the workers to retreat.
    pub preemptible: bool,
}

/// One launch as the device runs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchPlan {
    pub entry: Entry,
    pub grid: [u32; 3],
    /// `__tally_grid_{x,y,z}` (the original grid), for every variant.
    pub original_grid: Option<[u32; 3]>,
    /// `__tally_block_offset` of the sliced entry.
    pub block_offset: Option<u32>,
    /// The task counter's value before the launch (preemptive entry; the
    /// retreat flag is cleared with it).
    pub counter_start: Option<u32>,
}

/// A range the variants cannot run as asked.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum PlanError {
    #[error("grid {grid:?} has {total} blocks, more than the 32-bit block index the variants use")]
    GridTooLarge { grid: [u32; 3], total: u64 },
    #[error(
        "blocks {first}..{end} of a grid of {total}: the range is empty or runs past the grid"
    )]
    BadRange { first: u64, end: u64, total: u64 },
    #[error("persistent workers over blocks {first}..{end} of {total}: {why}")]
    Unsupported {
        first: u64,
        end: u64,
        total: u64,
        why: &'static str,
    },
    #[error("a launch with 0 workers")]
    NoWorkers,
}

/// The blocks of a grid, if they fit the variants' 32-bit block index.
pub fn total_blocks(grid: [u32; 3]) -> Result<u32, PlanError> {
    let total = grid.iter().map(|&g| u64::from(g)).product::<u64>();
    u32::try_from(total).map_err(|_| PlanError::GridTooLarge { grid, total })
}

/// The launch that runs `r`.
pub fn plan(r: &RangeLaunch) -> Result<LaunchPlan, PlanError> {
    let total = total_blocks(r.grid)?;
    let (first, end) = (r.first_block, r.first_block.saturating_add(r.blocks));
    let total64 = u64::from(total);
    if r.blocks == 0 || end > total64 {
        return Err(PlanError::BadRange {
            first,
            end,
            total: total64,
        });
    }
    // Both fit in u32 now (end <= total).
    let (first32, count32) = (first as u32, r.blocks as u32);
    let whole = first == 0 && end == total64;
    let unsupported = |why| PlanError::Unsupported {
        first,
        end,
        total: total64,
        why,
    };
    match r.workers {
        None if whole => Ok(LaunchPlan {
            entry: Entry::Original,
            grid: r.grid,
            original_grid: None,
            block_offset: None,
            counter_start: None,
        }),
        None => Ok(LaunchPlan {
            entry: Entry::Sliced,
            grid: [count32, 1, 1],
            original_grid: Some(r.grid),
            block_offset: Some(first32),
            counter_start: None,
        }),
        Some(0) => Err(PlanError::NoWorkers),
        Some(w) if r.preemptible => {
            if end != total64 {
                return Err(unsupported(
                    "the preemptive variant takes blocks up to the end of the grid",
                ));
            }
            Ok(LaunchPlan {
                entry: Entry::Preempt,
                grid: [w.min(count32), 1, 1],
                original_grid: Some(r.grid),
                block_offset: None,
                counter_start: Some(first32),
            })
        }
        Some(w) if whole => Ok(LaunchPlan {
            entry: Entry::Ptb,
            grid: [w.min(count32), 1, 1],
            original_grid: Some(r.grid),
            block_offset: None,
            counter_start: None,
        }),
        // Persistent workers for the rest of a grid already part run: the
        // preemptive entry from the counter, never told to retreat (the
        // PTB entry always starts at block 0).
        Some(w) if end == total64 => Ok(LaunchPlan {
            entry: Entry::Preempt,
            grid: [w.min(count32), 1, 1],
            original_grid: Some(r.grid),
            block_offset: None,
            counter_start: Some(first32),
        }),
        Some(_) => Err(unsupported(
            "persistent workers run blocks up to the end of the grid",
        )),
    }
}

/// Blocks of the range done once a preemptive launch's workers have all
/// exited, from the task counter they leave (its resume invariant):
/// `min(counter, total) - first`.
pub fn preempt_progress(plan: &LaunchPlan, counter_after: u32, total: u32) -> u32 {
    let start = plan.counter_start.unwrap_or(0);
    counter_after.min(total).saturating_sub(start)
}

/// The scheduler's blocks of one kernel launch mapped onto its stand-in's
/// grid, which has a different number of blocks (`standin`: sized to the
/// spec's work, not its grid). The scheduler asks for ranges of the spec's
/// blocks and learns how many of them ran; the device runs ranges of the
/// stand-in's blocks, in order, and stops where a retreat finds it. The
/// map keeps the device's own progress, so a resumed range starts exactly
/// where the device stopped (no stand-in block runs twice or never), and
/// tells the scheduler the spec blocks done: every spec block whose image
/// the device has finished, and all of a range that completed.
///
/// Spec block `b` covers stand-in blocks `image(b) .. image(b + 1)` with
/// `image(b) = floor(b * standin / spec)`: consecutive ranges of spec
/// blocks map to consecutive ranges of stand-in blocks, some empty when
/// the stand-in has fewer blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockMap {
    spec: u64,
    standin: u64,
    /// Stand-in blocks done (a prefix of the grid).
    device_done: u64,
    /// Spec blocks the scheduler has been told are done.
    spec_done: u64,
}

impl BlockMap {
    pub fn new(spec_blocks: u64, standin_blocks: u64) -> BlockMap {
        BlockMap {
            spec: spec_blocks.max(1),
            standin: standin_blocks.max(1),
            device_done: 0,
            spec_done: 0,
        }
    }

    /// First stand-in block of spec block `b` (`b` up to the spec's end).
    fn image(&self, b: u64) -> u64 {
        if b >= self.spec {
            return self.standin;
        }
        // b < spec, so the product fits when both grids fit in 32 bits.
        ((u128::from(b) * u128::from(self.standin)) / u128::from(self.spec)) as u64
    }

    /// The stand-in range `(first, count)` for the scheduler's spec range
    /// starting at `first` (the progress it was told) with `count` blocks:
    /// from the device's progress to the image of the range's end; empty
    /// when the device is already past it.
    pub fn standin_range(&self, first: u64, count: u64) -> (u64, u64) {
        let end = self.image(first.saturating_add(count));
        (self.device_done, end.saturating_sub(self.device_done))
    }

    /// Record a launch of the spec range `first .. first + count` that ran
    /// `ran` stand-in blocks from the device's progress, `retreated` or not;
    /// returns the spec blocks of the range done (the completion's
    /// `blocks_done`).
    pub fn record(&mut self, first: u64, count: u64, ran: u64, retreated: bool) -> u64 {
        let end = first.saturating_add(count).min(self.spec);
        self.device_done = (self.device_done + ran).min(self.standin);
        self.spec_done = if retreated {
            // Whole spec blocks whose images are done, never past the range.
            let whole = (u128::from(self.device_done) * u128::from(self.spec)
                / u128::from(self.standin)) as u64;
            let mut b = whole.min(end);
            while b < end && self.image(b + 1) <= self.device_done {
                b += 1;
            }
            b.max(first.min(end))
        } else {
            end
        };
        self.spec_done.saturating_sub(first)
    }

    /// Stand-in blocks the device has done.
    pub fn device_done(&self) -> u64 {
        self.device_done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(first: u64, blocks: u64, workers: Option<u32>, preemptible: bool) -> RangeLaunch {
        RangeLaunch {
            grid: [4, 3, 2],
            first_block: first,
            blocks,
            workers,
            preemptible,
        }
    }

    #[test]
    fn a_whole_grid_without_workers_is_the_original() {
        let p = plan(&range(0, 24, None, false)).unwrap();
        assert_eq!((p.entry, p.grid), (Entry::Original, [4, 3, 2]));
        assert_eq!(p.original_grid, None);
    }

    #[test]
    fn any_other_range_without_workers_is_one_slice() {
        let p = plan(&range(5, 7, None, false)).unwrap();
        assert_eq!(p.entry, Entry::Sliced);
        assert_eq!((p.grid, p.block_offset), ([7, 1, 1], Some(5)));
        assert_eq!(p.original_grid, Some([4, 3, 2]));
        // A retreated kernel's rest, run untransformed.
        assert_eq!(
            plan(&range(10, 14, None, false)).unwrap().entry,
            Entry::Sliced
        );
    }

    #[test]
    fn preemptive_workers_resume_from_the_counter_up_to_the_grid_end() {
        let p = plan(&range(10, 14, Some(108), true)).unwrap();
        assert_eq!(p.entry, Entry::Preempt);
        // No more workers than blocks left.
        assert_eq!((p.grid, p.counter_start), ([14, 1, 1], Some(10)));
        assert_eq!(preempt_progress(&p, 17, 24), 7);
        // Idle workers push the counter past the end.
        assert_eq!(preempt_progress(&p, 30, 24), 14);
        assert!(matches!(
            plan(&range(10, 10, Some(8), true)),
            Err(PlanError::Unsupported { .. })
        ));
    }

    #[test]
    fn ptb_runs_whole_grids_and_the_counter_the_rest() {
        let p = plan(&range(0, 24, Some(8), false)).unwrap();
        assert_eq!((p.entry, p.grid), (Entry::Ptb, [8, 1, 1]));
        let rest = plan(&range(4, 20, Some(8), false)).unwrap();
        assert_eq!((rest.entry, rest.counter_start), (Entry::Preempt, Some(4)));
        assert!(matches!(
            plan(&range(4, 10, Some(8), false)),
            Err(PlanError::Unsupported { .. })
        ));
    }

    #[test]
    fn bad_ranges_are_refused() {
        assert!(matches!(
            plan(&range(0, 0, None, false)),
            Err(PlanError::BadRange { .. })
        ));
        assert!(matches!(
            plan(&range(20, 5, None, false)),
            Err(PlanError::BadRange { .. })
        ));
        assert_eq!(
            plan(&range(0, 24, Some(0), true)),
            Err(PlanError::NoWorkers)
        );
        let huge = RangeLaunch {
            grid: [65536, 65536, 2],
            ..range(0, 1, None, false)
        };
        assert!(matches!(plan(&huge), Err(PlanError::GridTooLarge { .. })));
    }

    #[test]
    fn entry_names_follow_the_transforms() {
        assert_eq!(Entry::Preempt.name("k"), "k__tally_preempt");
        assert_eq!(Entry::Sliced.name("k"), "k__tally_sliced");
        assert_eq!(Entry::Ptb.name("k"), "k__tally_ptb");
        assert_eq!(Entry::Original.name("k"), "k");
    }
}
