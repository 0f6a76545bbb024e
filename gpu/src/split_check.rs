//! The green-context check `tally gpus --backend cuda --try-split` runs:
//! partitions made as asked, the SMs the driver reports for each, the copy
//! probe timed alone on each, and for two partitions the pair (each side
//! timed while the other copies continuously) beside the simulator's
//! figures for the same split on the device's derived spec.

use crate::backend::Backend;
use crate::cuda::derive::spec_from_device;
use crate::cuda::device::describe_device;
use crate::cuda::green::create_partitions;
use crate::cuda::green::{probe_kernel_spec, CopyProbe};
use crate::cuda::nvrtc::Arch;
use crate::cuda::timer::{chunk_launches, Timer};
use crate::cuda::timing::{Timing, TimingConfig};
use crate::error::{GpuError, Result};
use crate::partition::Partition;
use crate::sim::SimBackend;

/// Bytes the probe copies: large enough that launch overhead is noise,
/// small enough to take well under a millisecond on an H100.
pub const PROBE_BYTES: usize = 256 << 20;

/// One partition of the check.
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionCheck {
    pub asked_sms: u32,
    pub reported_sms: u32,
    pub solo: Timing,
    /// Bytes read and written per second by the probe alone, GB/s.
    pub solo_gbps: f64,
}

/// One side of the pair: real and simulated, microseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairSide {
    pub sms: u32,
    pub solo_us: f64,
    pub co_us: f64,
    pub sim_solo_us: f64,
    pub sim_co_us: f64,
}

/// What the check found.
#[derive(Debug, Clone, PartialEq)]
pub struct SplitCheck {
    pub device: String,
    /// How the partitions were made (the split, the work-queue scope).
    pub made: String,
    pub partitions: Vec<PartitionCheck>,
    /// With exactly two partitions.
    pub pair: Option<[PairSide; 2]>,
}

/// Run the check on device `ordinal`.
pub fn check_split(ordinal: usize, sizes: &[u32], cfg: TimingConfig) -> Result<SplitCheck> {
    let d = describe_device(ordinal)?;
    let arch = Arch::from_capability(d.cc_major, d.cc_minor).ok_or_else(|| {
        GpuError::Library(format!(
            "compute capability {} is not one the kernels are built for (8.0-9.0)",
            d.compute_capability()
        ))
    })?;
    // Enough resident blocks to fill every SM of the device, so a partition
    // with fewer SMs has work queued for the SMs it lacks.
    let blocks = d.sm_count * (d.max_threads_per_sm / 256).max(1);
    let parts = create_partitions(ordinal, d.cc_major, sizes)?;
    let probes = parts
        .iter()
        .map(|p| CopyProbe::new(p, arch, PROBE_BYTES, blocks))
        .collect::<Result<Vec<_>>>()?;
    let timers = probes
        .iter()
        .map(|p| Timer::new(p))
        .collect::<Result<Vec<_>>>()?;
    let mut partitions = Vec::with_capacity(parts.len());
    for ((p, probe), timer) in parts.iter().zip(&probes).zip(&timers) {
        let solo = timer.time(cfg)?;
        partitions.push(PartitionCheck {
            asked_sms: p.sm_count(),
            reported_sms: p.reported_sm_count()?,
            solo,
            solo_gbps: probe.bytes_moved() / solo.median_us / 1e3,
        });
    }
    let pair = match (&timers[..], &partitions[..]) {
        ([a, b], [ca, cb]) => {
            let (solo_a, solo_b) = (ca.solo.median_us, cb.solo.median_us);
            let co_a = a.beside(cfg, b, chunk_launches(solo_b))?.0.median_us;
            let co_b = b.beside(cfg, a, chunk_launches(solo_a))?.0.median_us;
            let sim = SimBackend::new(spec_from_device(&d)?, 0, 0.0);
            let k = probe_kernel_spec(PROBE_BYTES, blocks);
            let pa = Partition::first(ca.asked_sms);
            let pb = pa.after(cb.asked_sms);
            let (sim_a, sim_b) = sim.co_run(&k, pa, &k, pb)?;
            Some([
                PairSide {
                    sms: ca.asked_sms,
                    solo_us: solo_a,
                    co_us: co_a,
                    sim_solo_us: sim.standalone(&k, pa)?.duration_us,
                    sim_co_us: sim_a.duration_us,
                },
                PairSide {
                    sms: cb.asked_sms,
                    solo_us: solo_b,
                    co_us: co_b,
                    sim_solo_us: sim.standalone(&k, pb)?.duration_us,
                    sim_co_us: sim_b.duration_us,
                },
            ])
        }
        _ => None,
    };
    Ok(SplitCheck {
        device: d.name,
        made: parts
            .first()
            .map_or_else(String::new, |p| p.provenance().to_string()),
        partitions,
        pair,
    })
}
