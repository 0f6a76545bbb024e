//! The task counter and retreat flag of each preemptive launch: a ring of
//! slots per job, one slot per launch, so a retreat that lands late (the
//! host raised it as the launch finished) writes a slot no running launch
//! reads. A slot is taken again only once its launch has finished *and*
//! its retreat write, if any, has landed: the next launch's clearing of
//! the flag is then ordered after the late write, never before it.
//! Pure bookkeeping; the device memory is the CUDA device's.

/// Slots per job: a job has one launch in flight at a time (the runner's
/// stream semantics), so a few cover late retreat writes with room over.
pub const SLOTS_PER_JOB: usize = 16;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotRing {
    launch_running: Vec<bool>,
    retreat_in_flight: Vec<bool>,
    next: usize,
}

impl SlotRing {
    pub fn new(slots: usize) -> SlotRing {
        SlotRing {
            launch_running: vec![false; slots],
            retreat_in_flight: vec![false; slots],
            next: 0,
        }
    }

    /// A free slot for a new launch, the oldest freed first (round robin);
    /// `None` while every slot is held.
    pub fn take(&mut self) -> Option<usize> {
        let n = self.launch_running.len();
        let slot = (0..n)
            .map(|i| (self.next + i) % n)
            .find(|&s| !self.launch_running[s] && !self.retreat_in_flight[s])?;
        self.launch_running[slot] = true;
        self.next = (slot + 1) % n;
        Some(slot)
    }

    /// The slot's launch has finished.
    pub fn launch_finished(&mut self, slot: usize) {
        self.launch_running[slot] = false;
    }

    /// A retreat write to the slot's flag is queued.
    pub fn retreat_sent(&mut self, slot: usize) {
        self.retreat_in_flight[slot] = true;
    }

    /// The slot's retreat write has landed.
    pub fn retreat_landed(&mut self, slot: usize) {
        self.retreat_in_flight[slot] = false;
    }

    /// Whether the slot waits for a retreat write.
    pub fn retreat_pending(&self, slot: usize) -> bool {
        self.retreat_in_flight[slot]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_is_reused_only_after_its_launch_and_its_retreat_write() {
        let mut ring = SlotRing::new(2);
        let a = ring.take().unwrap();
        let b = ring.take().unwrap();
        assert_ne!(a, b);
        assert_eq!(ring.take(), None, "both held");
        ring.retreat_sent(a);
        ring.launch_finished(a);
        assert_eq!(ring.take(), None, "a's late retreat write has not landed");
        ring.retreat_landed(a);
        assert_eq!(ring.take(), Some(a));
    }

    #[test]
    fn slots_go_round_so_a_freed_slot_rests_while_others_are_free() {
        let mut ring = SlotRing::new(3);
        let first = ring.take().unwrap();
        ring.launch_finished(first);
        let second = ring.take().unwrap();
        assert_ne!(first, second, "the next slot, not the one just freed");
    }
}
