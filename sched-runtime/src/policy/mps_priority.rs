//! MPS with client priorities: like MPS, but HP blocks are dispatched ahead
//! of BE blocks whenever an SM frees up. Nothing is preempted: an HP kernel
//! still waits for running BE blocks to finish and shares SMs with them.

use super::common::launch_all_ready;
use super::{Ctx, Policy};
use crate::error::RunError;

#[derive(Debug, Default)]
pub struct MpsPriority;

impl Policy for MpsPriority {
    fn name(&self) -> &'static str {
        "mps-priority"
    }

    fn schedule(&mut self, ctx: &mut Ctx<'_>) -> Result<(), RunError> {
        launch_all_ready(ctx, 1)
    }
}
