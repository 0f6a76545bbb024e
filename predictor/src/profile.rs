//! `SideProfile`: what the predictor knows of one operator on its own
//! partition — the handful of quantities it reads from the standalone
//! Nsight Compute counters — and `GpuContext`, the shared-path capacities of
//! the GPU they were measured on.
//!
//! Only counters are read (never the simulator's kernel description), so a
//! profile measured on a real GPU or imported from `ncu --csv` works the same.

use serde::{Deserialize, Serialize};
use tally_gpu::{Counter, GpuSpec};

pub use crate::counter_subset::REQUIRED_COUNTERS;
use crate::counter_subset::{missing_counters_advice, CounterSubset};
use crate::error::{PredictorError, Result};

/// One operator measured alone on `sm_count` SMs, as fractions and bytes.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct SideProfile {
    pub sm_count: u32,
    pub duration_us: f64,
    /// SM throughput (busiest sub-unit), fraction of peak.
    pub sm_busy: f64,
    /// Issue-slot activity, fraction of peak.
    pub issue: f64,
    /// Achieved occupancy, fraction of the SM's warps.
    pub occupancy: f64,
    pub tensor: f64,
    /// L1 / crossbar-side throughput, fraction of peak.
    pub l1: f64,
    /// L2 sector throughput, fraction of the GPU's L2 bandwidth.
    pub l2_util: f64,
    /// L2 throughput including the SM's port, fraction of peak.
    pub l2_port: f64,
    pub l2_hit: f64,
    pub l2_bytes: f64,
    /// DRAM throughput, fraction of peak.
    pub dram_util: f64,
    pub dram_bytes: f64,
}

impl SideProfile {
    /// Build from counter values given as `(ncu name, value)` lookups,
    /// every predictor counter required. `what` names the source in errors
    /// (file and row).
    pub fn from_counters(
        sm_count: u32,
        duration_us: f64,
        lookup: impl Fn(&str) -> Option<f64>,
        what: &str,
    ) -> Result<SideProfile> {
        SideProfile::from_available(sm_count, duration_us, lookup, what, &CounterSubset::all())
    }

    /// Build from the counters of `subset` (all required); a counter
    /// outside it is not read and its field stays 0, which only features
    /// the subset's mask holds fixed ever see.
    pub fn from_available(
        sm_count: u32,
        duration_us: f64,
        lookup: impl Fn(&str) -> Option<f64>,
        what: &str,
        subset: &CounterSubset,
    ) -> Result<SideProfile> {
        let missing: Vec<Counter> = subset
            .counters()
            .iter()
            .copied()
            .filter(|c| lookup(c.name()).is_none())
            .collect();
        if !missing.is_empty() {
            return Err(PredictorError::MissingCounters {
                what: what.to_string(),
                missing: missing.iter().map(|c| c.name().to_string()).collect(),
                advice: missing_counters_advice(&missing, "DIR"),
            });
        }
        let get = |c: Counter| -> Result<f64> {
            if !subset.contains(c) {
                return Ok(0.0);
            }
            let v = lookup(c.name()).unwrap_or_default();
            if !v.is_finite() || v < 0.0 {
                return Err(PredictorError::BadValue {
                    what: what.to_string(),
                    field: c.name().to_string(),
                    value: v,
                });
            }
            Ok(v)
        };
        if !(duration_us.is_finite() && duration_us > 0.0) {
            return Err(PredictorError::BadValue {
                what: what.to_string(),
                field: "duration_us".to_string(),
                value: duration_us,
            });
        }
        let pct = |c: Counter| get(c).map(|v| (v / 100.0).min(1.0));
        Ok(SideProfile {
            sm_count,
            duration_us,
            sm_busy: pct(Counter::SmThroughputPct)?,
            issue: pct(Counter::IssueActivePct)?,
            occupancy: pct(Counter::AchievedOccupancyPct)?,
            tensor: pct(Counter::TensorActivePct)?,
            l1: pct(Counter::L1ThroughputPct)?,
            l2_util: pct(Counter::L2SectorsPct)?,
            l2_port: pct(Counter::L2ThroughputPct)?,
            l2_hit: pct(Counter::L2HitRatePct)?,
            l2_bytes: get(Counter::L2Bytes)?,
            dram_util: pct(Counter::DramThroughputPct)?,
            dram_bytes: get(Counter::DramBytesRead)? + get(Counter::DramBytesWrite)?,
        })
    }
}

/// The GPU-wide quantities the features are normalised by.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GpuContext {
    pub sm_count: u32,
    pub l2_bytes: f64,
}

impl GpuContext {
    pub fn of(gpu: &GpuSpec) -> GpuContext {
        GpuContext {
            sm_count: gpu.sm_count,
            l2_bytes: gpu.l2_bytes as f64,
        }
    }
}
