//! MPS: every job's kernels run concurrently as soon as they are ready, on
//! the whole GPU, with no priority: the block scheduler serves launches in
//! order, so an HP kernel waits behind the blocks of BE kernels launched
//! before it.

use super::common::launch_all_ready;
use super::{Ctx, Policy};
use crate::error::RunError;

#[derive(Debug, Default)]
pub struct Mps;

impl Policy for Mps {
    fn name(&self) -> &'static str {
        "mps"
    }

    fn schedule(&mut self, ctx: &mut Ctx<'_>) -> Result<(), RunError> {
        launch_all_ready(ctx, 0)
    }
}
