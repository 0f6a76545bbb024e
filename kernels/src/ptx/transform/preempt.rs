//! The preemptive PTB variant `E__tally_preempt`: persistent workers that
//! take blocks from a global task counter and stop when the host raises a
//! retreat flag.
//!
//! Extra parameters: `__tally_counter` (u64, global pointer to a u32 task
//! counter the host zeroes before the first launch) and `__tally_retreat`
//! (u64, global pointer to a u32 flag). Each iteration the leader thread
//! (`tid == (0,0,0)`) reads the flag with `ld.volatile.global`; if it is set
//! the task is a stop sentinel (`0xFFFFFFFF`), else `atom.global.add.u32
//! task, [counter], 1`. It stores the task to a function-scope shared slot,
//! a CTA barrier publishes it (`barrier.sync 0`, or the sync-aware pass's
//! vote when the body has barriers), every thread loads it, and `task >=
//! total` (the sentinel always is) sends every thread to a real `ret`.
//! Otherwise the body runs for block `task`, ending at the sync-aware end
//! point ([`super::sync`]).
//!
//! **Resume invariant.** The counter is incremented only by a leader that
//! then runs that block to completion before it looks at the flag again,
//! and blocks are taken in order 0, 1, 2, ... So once every worker of a
//! retreated launch has exited, blocks `0 .. min(counter, total)` are done
//! and no other block has started; relaunching with the same counter (and
//! the flag cleared) resumes exactly there. A counter at or past `total`
//! means the grid is complete (workers that find no work still increment
//! it once each).

use super::names::Names;
use super::rewrite::{assemble, code, common_decls, decompose, grid_prologue, Parts, PARAM_GRID};
use super::sync::{end_point, loop_body, LEADER, LEADER_DECL};
use crate::ptx::ast::*;
use crate::ptx::error::PtxError;

pub const SUFFIX: &str = "__tally_preempt";
pub const PARAM_COUNTER: &str = "__tally_counter";
pub const PARAM_RETREAT: &str = "__tally_retreat";

const DECLS: &str = "
.shared .align 4 .u32 @S@task;
.reg .b64 @R@ctr, @R@rt;
";

const SETUP: &str = "
ld.param.u64 @R@ctr, [__tally_counter];
cvta.to.global.u64 @R@ctr, @R@ctr;
ld.param.u64 @R@rt, [__tally_retreat];
cvta.to.global.u64 @R@rt, @R@rt;
";

/// The leader's fetch of the next task; a CTA barrier (the sync-aware
/// pass's form of barrier 0) then publishes it to [`LOOP_DISPATCH`].
const LOOP_FETCH: &str = "
@L@loop:
@!@R@lead bra @L@fetched;
ld.volatile.global.u32 @R@t, [@R@rt];
setp.ne.u32 @R@p, @R@t, 0;
mov.u32 @R@L, 0xFFFFFFFF;
@!@R@p atom.global.add.u32 @R@L, [@R@ctr], 1;
st.shared.u32 [@S@task], @R@L;
@L@fetched:
";

const LOOP_DISPATCH: &str = "
ld.shared.u32 @R@L, [@S@task];
setp.ge.u32 @R@p, @R@L, @R@total;
@@R@p bra @L@exit;
";

const LOOP_STEP: &str = "
bra @L@loop;
@L@exit:
ret;
";

/// Builds the preemptive variant of `entry`, whose body has `barriers` CTA
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
    decls.extend(code(n, name, LEADER_DECL)?);
    decls.extend(code(n, name, DECLS)?);
    decls.extend(sync.decls);
    let mut before = grid_prologue(n, name)?;
    before.extend(code(n, name, SETUP)?);
    before.extend(code(n, name, LEADER)?);
    before.extend(sync.init);
    before.extend(code(n, name, LOOP_FETCH)?);
    before.extend(sync.barrier);
    before.extend(code(n, name, LOOP_DISPATCH)?);
    before.extend(decompose(n, name)?);
    let mut after = code(n, name, "@L@next:")?;
    after.extend(sync.end);
    after.extend(code(n, name, LOOP_STEP)?);
    let extra = [
        ("u32", PARAM_GRID[0]),
        ("u32", PARAM_GRID[1]),
        ("u32", PARAM_GRID[2]),
        ("u64", PARAM_COUNTER),
        ("u64", PARAM_RETREAT),
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
