//! The sync-aware pass: how a persistent loop iteration ends so that the
//! whole CTA rejoins before the next block starts, even when some threads
//! left the body early (a rewritten `ret`) while others still execute
//! `__syncthreads()` barriers.
//!
//! Without barriers in the body the end point is a plain non-`.aligned`
//! `barrier.sync 0` (threads arrive from divergent paths).
//!
//! With barriers, every body barrier becomes non-`.aligned` `barrier.sync
//! 0`, and the end point runs a done-counter protocol on a function-scope
//! shared slot `done` (zeroed by the leader before the loop):
//!
//! ```text
//! atom.shared.add.u32 t, [done], 1;       // I have finished this block
//! wait: barrier.sync 0;                   // stand in at the others' barriers
//!       ld.volatile.shared.u32 d, [done];
//!       if d < ntid.x*ntid.y*ntid.z goto wait;
//! barrier.sync 0;                         // every thread has read `done`
//! @leader st.shared.u32 [done], 0;
//! ```
//!
//! A waiting thread keeps arriving at barrier 0, so it counts as arrived at
//! every barrier the others still execute, exactly as an exited thread does
//! on the hardware. The last thread's increment happens before its arrival
//! at the round that completes, so every thread reads `d == total` after
//! that same round and all leave the wait loop together. The second barrier
//! keeps the leader's reset after everyone's last read; the reset itself is
//! ordered before the next increment by the next barrier every thread
//! passes: the task broadcast in the preemptive variant, and an explicit
//! extra `barrier.sync 0` in plain PTB, which has no per-iteration barrier
//! of its own.

use super::names::Names;
use super::refuse::{classify_barrier, BarrierKind};
use super::rewrite::{code, returns_to_branch, substitute_block_index};
use crate::ptx::ast::*;
use crate::ptx::error::PtxError;
use crate::ptx::walk::for_each_instr_mut;

/// Extra declarations for the done-counter protocol.
const DONE_DECLS: &str = "
.shared .align 4 .u32 @S@done;
.reg .b32 @R@n, @R@d, @R@tt;
";

/// Before the loop: the leader predicate, the CTA size, and a zeroed
/// `done` slot (shared memory starts undefined), published by a barrier.
const DONE_INIT: &str = "
mov.u32 @R@n, %ntid.x;
mov.u32 @R@tt, %ntid.y;
mul.lo.u32 @R@n, @R@n, @R@tt;
mov.u32 @R@tt, %ntid.z;
mul.lo.u32 @R@n, @R@n, @R@tt;
@@R@lead st.shared.u32 [@S@done], 0;
barrier.sync 0;
";

const DONE_END: &str = "
atom.shared.add.u32 @R@tt, [@S@done], 1;
@L@wait:
barrier.sync 0;
ld.volatile.shared.u32 @R@d, [@S@done];
setp.lt.u32 @R@p, @R@d, @R@n;
@@R@p bra @L@wait;
barrier.sync 0;
@@R@lead st.shared.u32 [@S@done], 0;
";

/// Leader predicate declaration; the preemptive variant always needs it,
/// plain PTB only for the done-counter protocol.
pub(crate) const LEADER_DECL: &str = ".reg .pred @R@lead;";

/// Leader predicate: `tid.x == tid.y == tid.z == 0`.
pub(crate) const LEADER: &str = "
mov.u32 @R@t, %tid.x;
mov.u32 @R@x, %tid.y;
or.b32 @R@t, @R@t, @R@x;
mov.u32 @R@x, %tid.z;
or.b32 @R@t, @R@t, @R@x;
setp.eq.u32 @R@lead, @R@t, 0;
";

/// What the sync-aware pass adds to a persistent variant.
#[derive(Debug, Default)]
pub(crate) struct SyncParts {
    /// Declarations (the caller declares and sets `@R@lead`).
    pub decls: Vec<Statement>,
    /// Runs once before the loop, after the leader predicate is set.
    pub init: Vec<Statement>,
    /// The end-of-iteration point (after the `next` label).
    pub end: Vec<Statement>,
}

/// Rewrites every `__syncthreads()`-style barrier in `body` to the
/// non-`.aligned` `barrier.sync 0` (threads may now arrive divergently).
/// The caller has refused every other barrier kind already.
pub(crate) fn rewrite_barriers(body: &mut [Statement]) {
    for_each_instr_mut(body, &mut |i| {
        if classify_barrier(i) == Some(BarrierKind::CtaSync0) {
            i.opcode = "barrier".to_string();
            i.modifiers = vec!["sync".to_string()];
            i.operands = vec![Operand::Imm {
                text: "0".to_string(),
                negative: false,
                float: false,
            }];
        }
    });
}

/// Builds the end point for a body with `barriers` CTA barriers.
/// `order_reset` adds the extra barrier plain PTB needs (see module doc).
/// With barriers, the caller must declare and set `@R@lead` ([`LEADER`])
/// before `init` runs.
pub(crate) fn end_point(
    n: &Names,
    entry: &str,
    barriers: usize,
    order_reset: bool,
) -> Result<SyncParts, PtxError> {
    if barriers == 0 {
        return Ok(SyncParts {
            decls: Vec::new(),
            init: Vec::new(),
            end: code(n, entry, "barrier.sync 0;")?,
        });
    }
    let mut end = code(n, entry, DONE_END)?;
    if order_reset {
        end.extend(code(n, entry, "barrier.sync 0;")?);
    }
    Ok(SyncParts {
        decls: code(n, entry, DONE_DECLS)?,
        init: code(n, entry, DONE_INIT)?,
        end,
    })
}

/// The original body as a persistent loop iteration runs it: block index
/// substituted, every return a branch to the end of the iteration
/// (`<label>next`), and barriers made safe for early returners.
pub(crate) fn loop_body(body: &[Statement], n: &Names, barriers: usize) -> Vec<Statement> {
    let mut body = body.to_vec();
    substitute_block_index(&mut body, n);
    returns_to_branch(&mut body, &format!("{}next", n.label));
    if barriers > 0 {
        rewrite_barriers(&mut body);
    }
    body
}
