//! The persistent-thread-block variant `E__tally_ptb`: a 1-D grid of W
//! workers, each looping over the original blocks `L = %ctaid.x, +W, ...`
//! while `L < total`, running the original body for each with `%ctaid` /
//! `%nctaid` substituted. Every `ret` / `exit` of the body becomes a branch
//! to the end of the iteration, where the sync-aware end point ([`super::sync`])
//! rejoins the CTA before the next block.

use super::names::Names;
use super::rewrite::{assemble, code, common_decls, decompose, grid_prologue, Parts, PARAM_GRID};
use super::sync::{end_point, loop_body};
use crate::ptx::ast::*;
use crate::ptx::error::PtxError;

pub const SUFFIX: &str = "__tally_ptb";

const LOOP_HEAD: &str = "
mov.u32 @R@L, %ctaid.x;
@L@loop:
setp.ge.u32 @R@p, @R@L, @R@total;
@@R@p bra @L@exit;
";

const LOOP_STEP: &str = "
mov.u32 @R@t, %nctaid.x;
add.u32 @R@L, @R@L, @R@t;
bra @L@loop;
@L@exit:
ret;
";

/// Builds the PTB variant of `entry`, whose body has `barriers` CTA
/// barriers (all of the supported kind).
pub(crate) fn build(
    entry: &Function,
    body: &[Statement],
    n: &Names,
    barriers: usize,
) -> Result<Function, PtxError> {
    let name = entry.name.as_str();
    let body = loop_body(body, n, name, barriers)?;
    let sync = end_point(n, name, barriers)?;
    let mut decls = common_decls(n, name)?;
    let mut before = grid_prologue(n, name)?;
    decls.extend(sync.decls);
    before.extend(sync.init);
    before.extend(code(n, name, LOOP_HEAD)?);
    before.extend(decompose(n, name)?);
    let mut after = code(n, name, "@L@next:")?;
    after.extend(sync.end);
    after.extend(code(n, name, LOOP_STEP)?);
    let extra = [
        ("u32", PARAM_GRID[0]),
        ("u32", PARAM_GRID[1]),
        ("u32", PARAM_GRID[2]),
    ];
    assemble(
        entry,
        SUFFIX,
        &extra,
        body,
        Parts {
            decls,
            before,
            after,
        },
    )
}
