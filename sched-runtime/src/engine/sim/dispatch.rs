//! The block dispatcher: waiting blocks placed on SMs with room in serve
//! order — higher priority first, then first come, first served — each
//! launch's blocks spread breadth-first over its SM range as the hardware
//! block scheduler does. A launch of equal priority waits until the ones
//! launched before it have dispatched every block (a later grid fills only
//! the room the earlier one leaves). The published A100 table bears this
//! out: beside BE trainings of many-wave FP32 kernels, HP BERT's p99 under
//! MPS without priority is up to twice that with client priority (11.8x
//! against 5.8x beside whisper, 6.7x against 4.4x beside BERT training),
//! which serving both clients' heads as SMs free up could not give (it
//! made the two equal, 8.5x and 8.4x beside whisper, runs/table25). Beside
//! ResNet-50 the two are equal (2.20x, 2.18x) because the artifact's
//! ResNet-50 runs per-sample GEMMs of few blocks (`-nocudnn`), not
//! many-wave grids.
//!
//! A launch capped at `max_sms` (an MPS client's share,
//! `tally_gpu::Sharing`) keeps placing on the SMs it holds and takes new
//! ones only while it holds fewer than its cap, those with the most room
//! first (the block scheduler picks an SM by its free resources), so two
//! capped clients whose caps fit the GPU together end on disjoint SMs.

use super::residency::{level_fill, Seg};
use super::{Cohort, SimEngine, MAX_COHORTS_PER_LAUNCH};

impl SimEngine {
    /// Whether a launch ahead of the one in `slot` in serve order waits to
    /// place blocks on SMs that overlap its range (then the slots its
    /// blocks free go to that launch, not back to it).
    pub(super) fn waiting_ahead_of(&self, slot: usize) -> bool {
        let me = self.slot(slot);
        let range = me.req.sms;
        for &s in &self.order {
            let o = self.slot(s);
            if o.req.priority < me.req.priority {
                return false;
            }
            if s == slot {
                return false;
            }
            let sms = o.req.sms;
            let overlap = sms.first_sm < range.first_sm + range.sm_count
                && range.first_sm < sms.first_sm + sms.sm_count;
            if self.waits(s) && overlap {
                return true;
            }
        }
        false
    }

    /// Whether the launch in `slot` has blocks it may place now.
    fn waits(&self, slot: usize) -> bool {
        let o = self.slot(slot);
        o.started
            && !o.suspended
            && !o.retreat
            && o.next < o.end
            && o.worker_cap.is_none_or(|cap| o.resident < cap)
    }

    /// Place waiting blocks on SMs with room, launches in serve order; a
    /// launch's blocks spread breadth-first over its SM range, as the
    /// hardware block scheduler does.
    pub(super) fn dispatch(&mut self) {
        let mut fits = std::mem::take(&mut self.scratch.fits);
        let mut waiting = std::mem::take(&mut self.scratch.waiting);
        waiting.clear();
        waiting.extend(self.order.iter().copied().filter(|&s| self.waits(s)));
        for &s in &waiting {
            self.place(s, &mut fits);
        }
        self.scratch.waiting = waiting;
        self.scratch.fits = fits;
    }

    /// Place the launch in `slot`'s waiting blocks where they fit.
    fn place(&mut self, s: usize, fits: &mut Vec<Seg>) {
        let l = self.slot(s);
        if !l.started || l.suspended || l.retreat || l.next == l.end {
            return;
        }
        let mut want = l.end - l.next;
        if let Some(cap) = l.worker_cap {
            want = want.min(u64::from(cap.saturating_sub(l.resident)));
        }
        if want == 0 {
            return;
        }
        let info = &self.kernels[l.req.kernel.0 as usize];
        let (bps, share) = (info.blocks_per_sm, info.share);
        let per_sm_cap = l.req.workers_per_sm.map_or(bps, |w| w.min(bps));
        let (first_sm, end) = (l.req.sms.first_sm, l.req.sms.first_sm + l.req.sms.sm_count);
        fits.clear();
        match l.req.max_sms {
            None => self
                .residency
                .fits(first_sm, end, |sm| sm.fit_for(s, bps, per_sm_cap), fits),
            Some(cap) => {
                // The SMs it already holds, then as many new ones as the
                // cap leaves, those with the most room first (an idle SM
                // before one another client's blocks half fill).
                self.residency.fits(
                    first_sm,
                    end,
                    |sm| {
                        if sm.holds(s) {
                            sm.fit_for(s, bps, per_sm_cap)
                        } else {
                            0
                        }
                    },
                    fits,
                );
                let mut fresh = Vec::new();
                self.residency.fits(
                    first_sm,
                    end,
                    |sm| {
                        if sm.holds(s) {
                            0
                        } else {
                            sm.fit_for(s, bps, per_sm_cap)
                        }
                    },
                    &mut fresh,
                );
                fresh.sort_by(|a, b| b.n.cmp(&a.n).then(a.first.cmp(&b.first)));
                let mut allowed = cap.saturating_sub(l.active_sms);
                for mut seg in fresh {
                    if allowed == 0 {
                        break;
                    }
                    seg.count = seg.count.min(allowed);
                    allowed -= seg.count;
                    fits.push(seg);
                }
                fits.sort_by_key(|seg| seg.first);
            }
        }
        let placed = level_fill(fits, want);
        if placed == 0 {
            return;
        }
        let mut new_sms = 0;
        for &seg in fits.iter() {
            new_sms += self.residency.add(seg, s, share);
        }
        self.rates_dirty = true;
        let sms = fits.clone();
        let l = self.slot_mut(s);
        let first = l.next;
        l.next += placed;
        l.resident += placed as u32;
        l.active_sms += new_sms;
        let mut count = 0;
        let mut youngest: Option<usize> = None;
        for (i, c) in self.cohorts.iter().enumerate() {
            if c.slot == s {
                count += 1;
                if youngest.is_none_or(|y| c.remaining > self.cohorts[y].remaining) {
                    youngest = Some(i);
                }
            }
        }
        match youngest {
            Some(y) if count >= MAX_COHORTS_PER_LAUNCH => {
                let c = &mut self.cohorts[y];
                c.ranges.push((first, placed as u32));
                c.blocks += placed as u32;
                c.sms.extend(sms);
            }
            _ => self.cohorts.push(Cohort {
                slot: s,
                ranges: vec![(first, placed as u32)],
                blocks: placed as u32,
                remaining: 1.0,
                sms,
            }),
        }
    }
}
