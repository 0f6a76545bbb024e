//! One SM's residency: which launches hold blocks on it and how much of its
//! capacity they use. A block of a kernel that fits `b` blocks per SM alone
//! uses `1 / b` of the SM, so mixed residency honours each kernel's own
//! occupancy limit (its binding resource) in proportion.

/// Tolerance on the capacity sum (the `1 / b` shares are not exact).
const CAPACITY_EPS: f64 = 1e-9;

#[derive(Debug, Clone, Default)]
pub(crate) struct Sm {
    /// Share of the SM in use (0-1).
    pub used: f64,
    /// `(launch slot, blocks)` of every launch resident here.
    pub resident: Vec<(usize, u32)>,
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
            .find(|(s, _)| *s == slot)
            .map_or(0, |r| r.1);
        self.fit(blocks_per_sm).min(per_sm_cap.saturating_sub(mine))
    }

    /// Add `n` blocks of `launch`, each using `share` of the SM (one over
    /// its kernel's blocks per SM); true if the launch was not resident yet.
    pub fn add(&mut self, launch: usize, n: u32, share: f64) -> bool {
        self.used += f64::from(n) * share;
        match self.resident.iter_mut().find(|(l, _)| *l == launch) {
            Some((_, c)) => {
                *c += n;
                false
            }
            None => {
                self.resident.push((launch, n));
                true
            }
        }
    }

    /// Remove `n` blocks of `launch`, each using `share` of the SM; true if
    /// it has none left here.
    pub fn remove(&mut self, launch: usize, n: u32, share: f64) -> bool {
        self.used = (self.used - f64::from(n) * share).max(0.0);
        let i = self
            .resident
            .iter()
            .position(|(l, _)| *l == launch)
            .expect("a cohort's blocks are resident on its SMs");
        self.resident[i].1 -= n;
        if self.resident[i].1 == 0 {
            self.resident.swap_remove(i);
            if self.resident.is_empty() {
                self.used = 0.0;
            }
            true
        } else {
            false
        }
    }
}
