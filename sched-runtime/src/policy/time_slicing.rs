//! Time-slicing (CUDA's default without MPS): contexts take turns on the
//! whole GPU for a time slice each; a context with nothing to run gives up
//! its turn. A switch preempts the outgoing context mid-block, as Pascal and
//! later GPUs do (compute preemption: its running blocks leave the SMs with
//! their state saved and return where they were at its next slice; the
//! engine's `set_context_saved`), and costs the save and restore of that
//! state (`switch_us`).

use super::common::{hp_busy, launch_original};
use super::{Ctx, Policy};
use crate::error::RunError;
use tally_gpu::GpuSpec;

/// Length of a time slice, microseconds: the driver's default timeslice of
/// a channel group (one context's work). Source: NVIDIA's open GPU kernel
/// modules (R580), `src/nvidia/src/kernel/gpu/fifo/arch/volta/
/// kernel_fifo_gv100.c`, `kfifoChannelGroupGetDefaultTimeslice_GV100`
/// ("the default timeslice (in us) for a channelgroup as defined by
/// hardware") returns `NV_RAMRL_ENTRY_TSG_TIMESLICE_TIMEOUT_128 <<
/// NV_RAMRL_ENTRY_TSG_TIMESLICE_SCALE_3` = 0x80 << 3 = 1024 us
/// (`src/common/inc/swref/published/volta/gv100/dev_ram.h`), the HAL every
/// GPU from Volta on uses; `kchangrpSetupChannelGroup` gives each new
/// channel group this value.
pub const TIME_SLICE_US: f64 = 1024.0;
/// Cost of a context switch on `gpu`, microseconds: every SM's register
/// file and shared memory (the state of the blocks compute preemption
/// stops) written to device memory and the incoming context's read back, at
/// the DRAM bandwidth. On a100-40gb: 108 x (256 + 164) KiB twice at 1555
/// GB/s, 60 us; an upper bound (full occupancy). At 1 ms slices it moves a
/// request's latency by about 6 %.
pub fn switch_us(gpu: &GpuSpec) -> f64 {
    let per_sm = f64::from(gpu.registers_per_sm) * 4.0 + f64::from(gpu.shared_mem_per_sm);
    let bytes = 2.0 * per_sm * f64::from(gpu.sm_count);
    if gpu.dram_gbps > 0.0 {
        bytes / (gpu.dram_gbps * 1e3)
    } else {
        0.0
    }
}

#[derive(Debug, Default)]
pub struct TimeSlicing {
    /// Job whose context holds the GPU.
    active: usize,
    slice_end: f64,
    /// The active context may launch from this time on (after a switch).
    start_at: f64,
}

impl TimeSlicing {
    fn has_work(ctx: &Ctx<'_>, j: usize) -> bool {
        if j == 0 {
            hp_busy(ctx)
        } else {
            // A BE job on the host between iterations has nothing to run.
            ctx.jobs[j].in_flight.is_some() || ctx.jobs[j].ready()
        }
    }

    fn switch_to(&mut self, ctx: &mut Ctx<'_>, next: usize) {
        ctx.set_context_saved(self.active, true);
        self.active = next;
        ctx.set_context_saved(next, false);
        self.start_at = ctx.now() + switch_us(ctx.engine.gpu());
        self.slice_end = self.start_at + TIME_SLICE_US;
    }
}

impl Policy for TimeSlicing {
    fn name(&self) -> &'static str {
        "time-slicing"
    }

    fn schedule(&mut self, ctx: &mut Ctx<'_>) -> Result<(), RunError> {
        let n = ctx.jobs.len();
        let now = ctx.now();
        let next_with_work = |ctx: &Ctx<'_>, from: usize| {
            (1..=n)
                .map(|k| (from + k) % n)
                .find(|&j| Self::has_work(ctx, j))
        };
        if !Self::has_work(ctx, self.active) || (now >= self.slice_end && n > 1) {
            if let Some(next) = next_with_work(ctx, self.active) {
                if next != self.active {
                    self.switch_to(ctx, next);
                } else {
                    self.slice_end = now + TIME_SLICE_US;
                }
            }
        }
        if now + 1e-9 >= self.start_at && ctx.jobs[self.active].ready() {
            launch_original(ctx, self.active, 0)?;
        }
        Ok(())
    }

    fn wake_at(&self, now: f64) -> Option<f64> {
        Some(if self.start_at > now {
            self.start_at
        } else {
            self.slice_end
        })
    }
}
