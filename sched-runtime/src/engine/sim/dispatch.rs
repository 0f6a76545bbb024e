//! The block dispatcher: waiting blocks placed on SMs with room, launches
//! in serve order, each launch's blocks spread breadth-first over its SM
//! range as the hardware block scheduler does.

use super::residency::level_fill;
use super::{Cohort, SimEngine};

impl SimEngine {
    /// Whether a launch ahead of the one in `slot` in serve order waits to
    /// place blocks on SMs that overlap its range.
    pub(super) fn waiting_ahead_of(&self, slot: usize) -> bool {
        let range = self.slot(slot).req.sms;
        for &s in &self.order {
            if s == slot {
                return false;
            }
            let o = self.slot(s);
            let waiting = o.started
                && !o.suspended
                && !o.retreat
                && o.next < o.end
                && o.worker_cap.is_none_or(|cap| o.resident < cap);
            let sms = o.req.sms;
            let overlap = sms.first_sm < range.first_sm + range.sm_count
                && range.first_sm < sms.first_sm + sms.sm_count;
            if waiting && overlap {
                return true;
            }
        }
        false
    }

    /// Place waiting blocks on SMs with room, launches in serve order; a
    /// launch's blocks spread breadth-first over its SM range, as the
    /// hardware block scheduler does.
    pub(super) fn dispatch(&mut self) {
        let mut fits = std::mem::take(&mut self.scratch.fits);
        for oi in 0..self.order.len() {
            let s = self.order[oi];
            let l = self.slot(s);
            if !l.started || l.suspended || l.retreat || l.next == l.end {
                continue;
            }
            let mut want = l.end - l.next;
            if let Some(cap) = l.worker_cap {
                want = want.min(u64::from(cap.saturating_sub(l.resident)));
            }
            if want == 0 {
                continue;
            }
            let info = &self.kernels[l.req.kernel.0 as usize];
            let (bps, share) = (info.blocks_per_sm, info.share);
            let per_sm_cap = l.req.workers_per_sm.map_or(bps, |w| w.min(bps));
            let first_sm = l.req.sms.first_sm;
            fits.clear();
            self.residency.fits(
                first_sm,
                first_sm + l.req.sms.sm_count,
                |sm| sm.fit_for(s, bps, per_sm_cap),
                &mut fits,
            );
            let placed = level_fill(&mut fits, want);
            if placed == 0 {
                continue;
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
            self.cohorts.push(Cohort {
                slot: s,
                first_block: first,
                blocks: placed as u32,
                remaining: 1.0,
                sms,
            });
        }
        self.scratch.fits = fits;
    }
}
