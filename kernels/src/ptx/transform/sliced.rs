//! The sliced variant `E__tally_sliced`: runs a contiguous range of the
//! original grid's blocks, so the host can launch the grid as several
//! smaller 1-D grids ("slices") and stop between them.
//!
//! Extra parameter `__tally_block_offset` (u32). Launched with a 1-D grid of
//! `count` blocks, block `%ctaid.x` runs original block `L = offset +
//! %ctaid.x`, whose coordinates replace every `%ctaid` read, while
//! `%nctaid` reads see the original grid. A block with `L >= total` returns
//! at once, so the last slice may overshoot. The body runs once per block,
//! as in the original, so barriers and early returns need no pass.

use super::names::Names;
use super::rewrite::{
    assemble, code, common_decls, decompose, grid_prologue, substitute_block_index, Parts,
    PARAM_GRID,
};
use crate::ptx::ast::*;
use crate::ptx::error::PtxError;

pub const SUFFIX: &str = "__tally_sliced";
pub const PARAM_BLOCK_OFFSET: &str = "__tally_block_offset";

const START: &str = "
ld.param.u32 @R@t, [__tally_block_offset];
mov.u32 @R@L, %ctaid.x;
add.u32 @R@L, @R@L, @R@t;
setp.ge.u32 @R@p, @R@L, @R@total;
@@R@p ret;
";

/// Builds the sliced variant of `entry` (which has a body).
pub(crate) fn build(entry: &Function, body: &[Statement], n: &Names) -> Result<Function, PtxError> {
    let name = entry.name.as_str();
    let mut body = body.to_vec();
    substitute_block_index(&mut body, n);
    let mut before = grid_prologue(n, name)?;
    before.extend(code(n, name, START)?);
    before.extend(decompose(n, name)?);
    let parts = Parts {
        decls: common_decls(n, name)?,
        before,
        after: Vec::new(),
    };
    let extra = [
        ("u32", PARAM_GRID[0]),
        ("u32", PARAM_GRID[1]),
        ("u32", PARAM_GRID[2]),
        ("u32", PARAM_BLOCK_OFFSET),
    ];
    assemble(entry, SUFFIX, &extra, body, parts)
}
