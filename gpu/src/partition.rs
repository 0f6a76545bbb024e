//! `Partition`: a contiguous set of SMs a kernel may run on (a green context
//! on CUDA), and the checks that two co-located partitions are legal.

use serde::{Deserialize, Serialize};

use crate::error::{GpuError, Result};
use crate::spec::GpuSpec;

/// SMs `[first_sm, first_sm + sm_count)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Partition {
    pub first_sm: u32,
    pub sm_count: u32,
}

impl Partition {
    /// The whole device.
    pub fn whole(gpu: &GpuSpec) -> Partition {
        Partition {
            first_sm: 0,
            sm_count: gpu.sm_count,
        }
    }

    /// The first `sm_count` SMs.
    pub fn first(sm_count: u32) -> Partition {
        Partition {
            first_sm: 0,
            sm_count,
        }
    }

    /// `sm_count` SMs directly after `self`.
    pub fn after(&self, sm_count: u32) -> Partition {
        Partition {
            first_sm: self.first_sm + self.sm_count,
            sm_count,
        }
    }

    fn end(&self) -> u32 {
        self.first_sm + self.sm_count
    }

    /// Check size and alignment against the GPU's partition rule.
    pub fn check(&self, gpu: &GpuSpec) -> Result<()> {
        if self.sm_count == 0 || self.end() > gpu.sm_count {
            return Err(GpuError::Partition(format!(
                "SMs {}..{} do not fit on {} ({} SMs)",
                self.first_sm,
                self.end(),
                gpu.name,
                gpu.sm_count
            )));
        }
        if !gpu.partition.allows(self.sm_count, gpu.sm_count) {
            return Err(GpuError::Partition(format!(
                "{} SMs is not a partition size of {}: minimum {}, steps of {} (allowed: {})",
                self.sm_count,
                gpu.name,
                gpu.partition.min_sms,
                gpu.partition.step,
                gpu.partition
                    .sizes(gpu.sm_count)
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        Ok(())
    }

    /// Check two partitions are each legal and share no SM.
    pub fn check_disjoint(a: &Partition, b: &Partition, gpu: &GpuSpec) -> Result<()> {
        a.check(gpu)?;
        b.check(gpu)?;
        if a.first_sm < b.end() && b.first_sm < a.end() {
            return Err(GpuError::Partition(format!(
                "SMs {}..{} and {}..{} overlap",
                a.first_sm,
                a.end(),
                b.first_sm,
                b.end()
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disjoint_and_aligned_partitions() {
        let h100 = GpuSpec::preset("h100-sxm").expect("preset");
        let a = Partition::first(64);
        assert!(Partition::check_disjoint(&a, &a.after(64), &h100).is_ok());
        assert!(Partition::check_disjoint(&a, &Partition::first(32), &h100).is_err());
        assert!(Partition::first(12).check(&h100).is_err());
        assert!(a.after(72).check(&h100).is_err());
        assert!(Partition::whole(&h100).check(&h100).is_ok());
    }
}
