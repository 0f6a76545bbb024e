//! One SM's residency: which launches hold blocks on it and how much of its
//! capacity they use. A block of a kernel that fits `b` blocks per SM alone
//! uses `1 / b` of the SM, so mixed residency honours each kernel's own
//! occupancy limit (its binding resource) in proportion.

use smallvec::SmallVec;

/// Launches one SM's residency holds without a heap allocation (more
/// spill to the heap): an HP kernel, a BE kernel and the tails of the
/// kernels before them.
const INLINE_RESIDENTS: usize = 4;

/// Tolerance on the capacity sum (the `1 / b` shares are not exact).
const CAPACITY_EPS: f64 = 1e-9;

/// Blocks of one launch on an SM.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Resident {
    pub slot: usize,
    pub blocks: u32,
    /// Share of the SM one of its blocks uses.
    pub share: f64,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Sm {
    /// Share of the SM in use (0-1): a function of `resident`, recomputed
    /// in slot order, so two SMs holding the same blocks compare equal.
    pub used: f64,
    /// Every launch resident here, by slot.
    pub resident: SmallVec<[Resident; INLINE_RESIDENTS]>,
}

impl Sm {
    /// Blocks of a kernel with `blocks_per_sm` that still fit.
    pub fn fit(&self, blocks_per_sm: u32) -> u32 {
        let free = (1.0 - self.used + CAPACITY_EPS).max(0.0);
        // `as` truncates, which is the floor of a non-negative value.
        ((free * f64::from(blocks_per_sm)) as u32).min(blocks_per_sm)
    }

    /// Blocks of the launch in `slot` that may still go here: what fits,
    /// and at most `per_sm_cap` of that launch's blocks on this SM.
    pub fn fit_for(&self, slot: usize, blocks_per_sm: u32, per_sm_cap: u32) -> u32 {
        let mine = self
            .resident
            .iter()
            .find(|r| r.slot == slot)
            .map_or(0, |r| r.blocks);
        self.fit(blocks_per_sm).min(per_sm_cap.saturating_sub(mine))
    }

    /// Whether the launch in `slot` has blocks here.
    pub fn holds(&self, slot: usize) -> bool {
        self.resident.iter().any(|r| r.slot == slot)
    }

    fn recompute_used(&mut self) {
        self.used = self
            .resident
            .iter()
            .map(|r| f64::from(r.blocks) * r.share)
            .sum();
    }

    /// Add `n` blocks of `slot`, each using `share` of the SM; true if the
    /// launch was not resident yet.
    pub fn add(&mut self, slot: usize, n: u32, share: f64) -> bool {
        let new = match self.resident.binary_search_by_key(&slot, |r| r.slot) {
            Ok(i) => {
                self.resident[i].blocks += n;
                false
            }
            Err(i) => {
                self.resident.insert(
                    i,
                    Resident {
                        slot,
                        blocks: n,
                        share,
                    },
                );
                true
            }
        };
        self.recompute_used();
        new
    }

    /// Remove `n` blocks of `slot`; true if it has none left here.
    pub fn remove(&mut self, slot: usize, n: u32) -> bool {
        let i = self
            .resident
            .binary_search_by_key(&slot, |r| r.slot)
            .expect("a cohort's blocks are resident on its SMs");
        self.resident[i].blocks -= n;
        let gone = self.resident[i].blocks == 0;
        if gone {
            self.resident.remove(i);
        }
        self.recompute_used();
        gone
    }
}
