//! Compute preemption of a context, as a time-slicing switch does it on
//! Pascal and later GPUs: the outgoing context's running blocks are stopped
//! mid-block, their state saved, and restored where they were when the
//! context's next slice begins (NVIDIA Pascal whitepaper, "Compute
//! Preemption": preemption at instruction granularity, no waiting for
//! blocks to finish). Here a saved launch's cohorts leave the SMs with
//! their remaining work kept and come back to the same SMs; the time the
//! save and restore take is the switching policy's to charge.

use super::{Cohort, SimEngine};

impl SimEngine {
    /// Take the launch in `slot`'s running blocks off the SMs, progress kept,
    /// and stop its dispatch.
    pub(super) fn save_context(&mut self, slot: usize) {
        for c in take_of_slot(&mut self.cohorts, slot) {
            let mut gone = 0;
            for &seg in &c.sms {
                gone += self.residency.remove(seg, slot);
            }
            let l = self.slot_mut(slot);
            l.resident -= c.blocks;
            l.saved += c.blocks;
            l.active_sms -= gone;
            self.saved.push(c);
        }
        self.slot_mut(slot).suspended = true;
        self.dirty = true;
        self.rates_dirty = true;
    }

    /// Put the launch in `slot`'s saved blocks back on their SMs and resume
    /// its dispatch.
    pub(super) fn restore_context(&mut self, slot: usize) {
        let share = self.kernels[self.slot(slot).req.kernel.0 as usize].share;
        for c in take_of_slot(&mut self.saved, slot) {
            let mut new = 0;
            for &seg in &c.sms {
                new += self.residency.add(seg, slot, share);
            }
            let l = self.slot_mut(slot);
            l.resident += c.blocks;
            l.saved -= c.blocks;
            l.active_sms += new;
            self.cohorts.push(c);
        }
        self.slot_mut(slot).suspended = false;
        self.dirty = true;
        self.rates_dirty = true;
    }
}

/// Remove and return the cohorts of the launch in `slot`.
fn take_of_slot(cohorts: &mut Vec<Cohort>, slot: usize) -> Vec<Cohort> {
    let (mine, rest) = std::mem::take(cohorts)
        .into_iter()
        .partition(|c| c.slot == slot);
    *cohorts = rest;
    mine
}
