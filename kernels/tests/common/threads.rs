//! The interpreter's threads and CTAs, and the barrier round: a thread
//! parked at `bar.sync` / `barrier.red.popc` waits until every non-exited
//! thread of its CTA has arrived. Test support only.

use std::collections::HashMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Running,
    AtBarrier,
    Exited,
}

/// How a parked thread arrived at the barrier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arrival {
    Sync,
    /// `barrier.red.popc.u32 dst, a, {!}p`: its vote and where the count goes.
    RedPopc {
        vote: bool,
        dst: String,
    },
}

pub struct Thread {
    pub cta: usize,
    pub tid: [u32; 3],
    pub pc: usize,
    pub regs: HashMap<String, u64>,
    pub state: State,
    pub arrival: Arrival,
}

pub struct Cta {
    pub ctaid: [u32; 3],
    pub shared: Vec<u8>,
}

/// Releases CTA `c`'s barrier round if every non-exited thread of it has
/// arrived: `barrier.red.popc` arrivals get the count of true votes.
pub fn release_barrier(threads: &mut [Thread], c: usize) -> Result<bool, String> {
    let mut any = false;
    for t in threads.iter().filter(|t| t.cta == c) {
        match t.state {
            State::AtBarrier => any = true,
            State::Running => return Ok(false),
            State::Exited => {}
        }
    }
    if !any {
        return Ok(false);
    }
    let parked = || {
        threads
            .iter()
            .filter(|t| t.cta == c && t.state == State::AtBarrier)
    };
    let reds = parked()
        .filter(|t| matches!(t.arrival, Arrival::RedPopc { .. }))
        .count();
    if reds != 0 && reds != parked().count() {
        return Err(format!(
            "cta {c}: one barrier round mixes barrier.red ({reds} threads) and barrier.sync"
        ));
    }
    let votes = parked()
        .filter(|t| matches!(t.arrival, Arrival::RedPopc { vote: true, .. }))
        .count() as u64;
    for t in threads
        .iter_mut()
        .filter(|t| t.cta == c && t.state == State::AtBarrier)
    {
        if let Arrival::RedPopc { dst, .. } = &t.arrival {
            t.regs.insert(dst.clone(), votes);
        }
        t.state = State::Running;
    }
    Ok(true)
}
