//! How co-located tasks share the GPU's SMs, and where each one's blocks
//! may go under that sharing.
//!
//! - **Green contexts** (`green-context`, the default): each task owns a
//!   disjoint set of SMs. The CUDA driver API's green contexts are built
//!   from SM resources split by `cuDevSmResourceSplitByCount`, whose groups
//!   are disjoint (CUDA Driver API, "Green Contexts"), so two tasks meet
//!   only on the memory path (L2, crossbar, DRAM).
//! - **MPS** (`mps`): `CUDA_MPS_ACTIVE_THREAD_PERCENTAGE` caps how many SMs
//!   a client's kernels may occupy at once; it names no SMs. NVIDIA's MPS
//!   guide ("Volta MPS Execution Resource Provisioning"): "Setting the
//!   limit does not reserve dedicated resources for any MPS client context.
//!   It simply limits how much resources can be used by a client context.
//!   Kernels launched from different MPS client contexts may execute on the
//!   same SM, depending on load-balancing"; uneven percentages "will
//!   concentrate the work submitted by different clients to disjoint sets
//!   of the SMs". The block scheduler picks an SM by its local resource
//!   availability (Gilman and Walls, SIGMETRICS 2020, measured on Pascal,
//!   Volta and Turing). So a share is modelled as that cap: at most `n` SMs
//!   hold the task's blocks at a time, placed on the SMs with the most room
//!   first; blocks of two clients share an SM (L1, shared memory,
//!   registers, issue slots) when the caps together exceed the GPU or the
//!   SMs a cap leaves free are not idle.
//! - **Full** (`full`): every task may use every SM (MPS with no
//!   percentage set, or CUDA streams in one process).

use std::fmt;
use std::str::FromStr;

use crate::{GpuSpec, Partition};

/// Which sharing a co-location models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sharing {
    #[default]
    GreenContext,
    Mps,
    Full,
}

/// Where one task's blocks may go: an SM range, and at most how many SMs
/// of it hold its blocks at once (`None`: all of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    pub sms: Partition,
    pub max_sms: Option<u32>,
}

impl Sharing {
    pub const NAMES: [&'static str; 3] = ["green-context", "mps", "full"];

    pub fn name(self) -> &'static str {
        match self {
            Sharing::GreenContext => "green-context",
            Sharing::Mps => "mps",
            Sharing::Full => "full",
        }
    }

    /// Where tasks with SM shares `shares` go on `gpu`: consecutive
    /// disjoint partitions (green contexts), the whole GPU capped at each
    /// share (MPS), or the whole GPU (full). Green-context shares must fit
    /// the GPU together; the caller checks partition legality.
    pub fn placements(self, gpu: &GpuSpec, shares: &[u32]) -> Vec<Placement> {
        let whole = Partition::whole(gpu);
        match self {
            Sharing::GreenContext => {
                let mut next = Partition::first(0);
                shares
                    .iter()
                    .map(|&n| {
                        next = next.after(n);
                        Placement {
                            sms: next,
                            max_sms: None,
                        }
                    })
                    .collect()
            }
            Sharing::Mps => shares
                .iter()
                .map(|&n| Placement {
                    sms: whole,
                    max_sms: Some(n.min(gpu.sm_count)),
                })
                .collect(),
            Sharing::Full => shares
                .iter()
                .map(|_| Placement {
                    sms: whole,
                    max_sms: None,
                })
                .collect(),
        }
    }
}

impl fmt::Display for Sharing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Sharing {
    type Err = String;

    fn from_str(s: &str) -> Result<Sharing, String> {
        match s {
            "green-context" => Ok(Sharing::GreenContext),
            "mps" => Ok(Sharing::Mps),
            "full" => Ok(Sharing::Full),
            other => Err(format!(
                "unknown sharing `{other}`; expected one of {}",
                Sharing::NAMES.join(", ")
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placements_follow_the_sharing() {
        let gpu = GpuSpec::preset("a100-40gb").unwrap();
        let g = Sharing::GreenContext.placements(&gpu, &[20, 88]);
        assert_eq!((g[0].sms.first_sm, g[0].sms.sm_count), (0, 20));
        assert_eq!((g[1].sms.first_sm, g[1].sms.sm_count), (20, 88));
        assert!(g.iter().all(|p| p.max_sms.is_none()));
        let m = Sharing::Mps.placements(&gpu, &[20, 88]);
        assert!(m.iter().all(|p| p.sms == Partition::whole(&gpu)));
        assert_eq!((m[0].max_sms, m[1].max_sms), (Some(20), Some(88)));
        let f = Sharing::Full.placements(&gpu, &[20, 88]);
        assert!(f
            .iter()
            .all(|p| p.sms == Partition::whole(&gpu) && p.max_sms.is_none()));
        for name in Sharing::NAMES {
            assert_eq!(name.parse::<Sharing>().unwrap().name(), name);
        }
        assert!("time-slicing".parse::<Sharing>().is_err());
    }
}
