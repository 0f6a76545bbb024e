//! Which SM partitions a green context can have. The driver hands out SM
//! groups of at least `min_sms`, in multiples of `align`
//! (`cuDevSmResourceSplitByCount` rounds a request up); a measurement must
//! run on exactly the partition size its dataset row says, so a request
//! the driver would round is refused here, before any driver call.

use crate::error::{GpuError, Result};

/// The granularity of SM groups on one device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SmRule {
    /// Smallest group.
    pub min_sms: u32,
    /// Groups are multiples of this.
    pub align: u32,
}

impl SmRule {
    /// The rule of a device: what the driver reports (CUDA 13 drivers fill
    /// `minSmPartitionSize` / `smCoscheduledAlignment`), else the documented
    /// figures for its compute capability (CUDA 12 drivers report 0).
    pub fn for_device(cc_major: u32, reported_min: u32, reported_align: u32) -> SmRule {
        let (min_sms, align) = match cc_major {
            9.. => (8, 8),
            8 => (4, 2),
            _ => (2, 2),
        };
        SmRule {
            min_sms: if reported_min > 0 {
                reported_min
            } else {
                min_sms
            },
            align: if reported_align > 0 {
                reported_align
            } else {
                align
            },
        }
    }

    /// The group the driver gives for a request of `sms`.
    pub fn round_up(&self, sms: u32) -> u32 {
        sms.max(self.min_sms).div_ceil(self.align) * self.align
    }
}

/// Check that `requested` partitions (disjoint, in order) fit on `total`
/// SMs under `rule` and return their sizes. A size equal to `total` alone
/// means the whole device (no green context is needed for it).
pub fn plan_split(total: u32, rule: SmRule, requested: &[u32]) -> Result<Vec<u32>> {
    if requested.is_empty() {
        return Err(GpuError::Partition("no partition requested".into()));
    }
    if rule.min_sms == 0 || rule.align == 0 {
        return Err(GpuError::Partition(format!(
            "invalid SM rule: minimum {} in steps of {}",
            rule.min_sms, rule.align
        )));
    }
    if requested == [total] {
        return Ok(vec![total]);
    }
    for &sms in requested {
        let given = rule.round_up(sms);
        if given != sms {
            return Err(GpuError::Partition(format!(
                "{sms} SMs is not a green-context partition size: groups are at least {} SMs \
                 in steps of {}, the driver would give {given}",
                rule.min_sms, rule.align
            )));
        }
    }
    let sum: u32 = requested.iter().sum();
    if sum > total {
        return Err(GpuError::Partition(format!(
            "partitions of {} SMs need {sum} SMs, the device has {total}",
            requested
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(" + ")
        )));
    }
    Ok(requested.to_vec())
}

/// How the driver is asked for checked partition sizes. The driver
/// documentation discourages splitting a split's output again (it is meant
/// to become a descriptor and a context), so all partitions come from one
/// split of the device where the sizes allow: groups of the sizes'
/// greatest common divisor, each partition a run of consecutive groups
/// combined into one descriptor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SplitPlan {
    /// One split into groups of `group_sms`; partition `i` takes
    /// `groups[i]` consecutive groups.
    OneSplit { group_sms: u32, groups: Vec<u32> },
    /// The common group would be under the minimum group size: each
    /// partition is split off the previous split's remainder.
    GroupByGroup,
}

impl SplitPlan {
    pub fn for_sizes(rule: SmRule, sizes: &[u32]) -> SplitPlan {
        fn gcd(a: u32, b: u32) -> u32 {
            if b == 0 {
                a
            } else {
                gcd(b, a % b)
            }
        }
        let g = sizes.iter().copied().fold(0, gcd);
        if g == 0 || g < rule.min_sms || g % rule.align != 0 {
            return SplitPlan::GroupByGroup;
        }
        SplitPlan::OneSplit {
            group_sms: g,
            groups: sizes.iter().map(|s| s / g).collect(),
        }
    }

    /// For provenance: how the partitions were made.
    pub fn describe(&self) -> String {
        match self {
            SplitPlan::OneSplit { group_sms, groups } => format!(
                "one split of the device into {} groups of {group_sms} SMs",
                groups.iter().sum::<u32>()
            ),
            SplitPlan::GroupByGroup => {
                "split group by group from each remainder (sizes share no valid group size)"
                    .to_string()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOPPER: SmRule = SmRule {
        min_sms: 8,
        align: 8,
    };

    #[test]
    fn rules_from_the_driver_or_the_compute_capability() {
        assert_eq!(SmRule::for_device(9, 0, 0), HOPPER);
        assert_eq!(
            SmRule::for_device(8, 0, 0),
            SmRule {
                min_sms: 4,
                align: 2
            }
        );
        // A CUDA 13 driver's own figures win.
        assert_eq!(
            SmRule::for_device(9, 16, 8),
            SmRule {
                min_sms: 16,
                align: 8
            }
        );
        assert_eq!(HOPPER.round_up(1), 8);
        assert_eq!(HOPPER.round_up(9), 16);
        assert_eq!(HOPPER.round_up(64), 64);
    }

    #[test]
    fn splits_that_fit_and_those_that_do_not() {
        assert_eq!(plan_split(132, HOPPER, &[64, 64]).unwrap(), [64, 64]);
        assert_eq!(plan_split(132, HOPPER, &[32, 96]).unwrap(), [32, 96]);
        // The whole device on its own: 132 is not a multiple of 8, but it
        // is the primary context, not a green one.
        assert_eq!(plan_split(132, HOPPER, &[132]).unwrap(), [132]);
        let unaligned = plan_split(132, HOPPER, &[60, 64]).unwrap_err().to_string();
        assert!(unaligned.contains("would give 64"), "{unaligned}");
        let too_small = plan_split(132, HOPPER, &[4]).unwrap_err().to_string();
        assert!(too_small.contains("at least 8"), "{too_small}");
        let too_big = plan_split(132, HOPPER, &[72, 64]).unwrap_err().to_string();
        assert!(too_big.contains("need 136 SMs"), "{too_big}");
        assert!(plan_split(132, HOPPER, &[]).is_err());
        let ampere = SmRule::for_device(8, 0, 0);
        assert_eq!(plan_split(108, ampere, &[54, 54]).unwrap(), [54, 54]);
        assert!(plan_split(108, ampere, &[53, 54]).is_err());
    }

    #[test]
    fn partitions_come_from_one_split_where_the_sizes_allow() {
        assert_eq!(
            SplitPlan::for_sizes(HOPPER, &[32, 96]),
            SplitPlan::OneSplit {
                group_sms: 32,
                groups: vec![1, 3]
            }
        );
        assert_eq!(
            SplitPlan::for_sizes(HOPPER, &[64, 64]),
            SplitPlan::OneSplit {
                group_sms: 64,
                groups: vec![1, 1]
            }
        );
        assert_eq!(
            SplitPlan::for_sizes(HOPPER, &[24, 104]),
            SplitPlan::OneSplit {
                group_sms: 8,
                groups: vec![3, 13]
            }
        );
        // Ampere: groups of at least 4 in steps of 2; 6 and 10 share only 2.
        let ampere = SmRule::for_device(8, 0, 0);
        assert_eq!(
            SplitPlan::for_sizes(ampere, &[6, 10]),
            SplitPlan::GroupByGroup
        );
        assert_eq!(
            SplitPlan::for_sizes(ampere, &[54, 54]),
            SplitPlan::OneSplit {
                group_sms: 54,
                groups: vec![1, 1]
            }
        );
        assert!(SplitPlan::for_sizes(HOPPER, &[32, 96])
            .describe()
            .contains("4 groups of 32"));
    }
}
