//! Orion: HP kernels launch at once on a high-priority stream. One BE
//! kernel at a time: while HP is idle any BE kernel may go; beside a running
//! HP kernel only a BE kernel with the other binary label (compute- vs
//! memory-bound by the roofline knee) whose SM need fits under the SM
//! threshold. Kernels run untransformed; nothing is preempted.

use tally_gpu::{bound, KernelSpec};

use super::common::{be_in_flight, hp_busy, launch_original, next_be};
use super::{Ctx, Policy};
use crate::error::RunError;

/// Share of the GPU's SMs a BE kernel may need to run beside HP.
pub const SM_THRESHOLD: f64 = 0.5;

#[derive(Debug, Default)]
pub struct Orion {
    last_be: usize,
}

/// SMs a kernel occupies at its occupancy: ceil(blocks / blocks per SM).
fn sm_need(k: &KernelSpec, blocks_per_sm: u32) -> u64 {
    k.blocks().div_ceil(u64::from(blocks_per_sm.max(1)))
}

impl Policy for Orion {
    fn name(&self) -> &'static str {
        "orion"
    }

    fn schedule(&mut self, ctx: &mut Ctx<'_>) -> Result<(), RunError> {
        if ctx.jobs[0].ready() {
            launch_original(ctx, 0, 1)?;
        }
        if be_in_flight(ctx).is_some() {
            return Ok(());
        }
        let Some(j) = next_be(ctx, self.last_be) else {
            return Ok(());
        };
        let allowed = match ctx.jobs[0].in_flight {
            None if !hp_busy(ctx) => true,
            None => false,
            Some(_) => {
                let gpu = ctx.gpu().clone();
                let hk = ctx.engine.kernel(ctx.jobs[0].kernel());
                let bk_id = ctx.jobs[j].kernel();
                let bk = ctx.engine.kernel(bk_id);
                let threshold = (f64::from(gpu.sm_count) * SM_THRESHOLD) as u64;
                bound(hk, &gpu) != bound(bk, &gpu)
                    && sm_need(bk, ctx.engine.blocks_per_sm(bk_id)) <= threshold
            }
        };
        if allowed {
            self.last_be = j;
            launch_original(ctx, j, 0)?;
        }
        Ok(())
    }
}
