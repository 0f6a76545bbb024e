//! Launch helpers the policies share.

use tally_gpu::Partition;

use super::{Ctx, Plan};
use crate::error::RunError;
use crate::kernel_config::KernelConfig;

/// Launch job `j` untransformed on the whole GPU.
pub(crate) fn launch_original(ctx: &mut Ctx<'_>, j: usize, priority: u8) -> Result<(), RunError> {
    let sms = Partition::whole(ctx.gpu());
    ctx.launch(
        j,
        Plan {
            config: KernelConfig::Original,
            sms,
            priority,
        },
    )?;
    Ok(())
}

/// Launch every ready job untransformed at once (HP at `hp_priority`).
pub(crate) fn launch_all_ready(ctx: &mut Ctx<'_>, hp_priority: u8) -> Result<(), RunError> {
    for j in 0..ctx.jobs.len() {
        if ctx.jobs[j].ready() {
            launch_original(ctx, j, if j == 0 { hp_priority } else { 0 })?;
        }
    }
    Ok(())
}

/// Whether the HP job has GPU work now: a request in service whose kernels
/// are not all done (its host tail after them is no GPU work).
pub(crate) fn hp_busy(ctx: &Ctx<'_>) -> bool {
    let hp = ctx.hp();
    (hp.active && hp.host_until.is_none()) || hp.in_flight.is_some()
}

/// The BE job that launches next: round robin over ready BE jobs after
/// `last`.
pub(crate) fn next_be(ctx: &Ctx<'_>, last: usize) -> Option<usize> {
    let n = ctx.jobs.len();
    (1..n)
        .map(|k| 1 + (last + k - 1) % (n - 1))
        .find(|&j| ctx.jobs[j].ready())
}

/// Whether any BE job has a launch in flight.
pub(crate) fn be_in_flight(ctx: &Ctx<'_>) -> Option<usize> {
    (1..ctx.jobs.len()).find(|&j| ctx.jobs[j].in_flight.is_some())
}
