//! The sync-aware pass: how a persistent loop iteration ends so that the
//! whole CTA rejoins before the next block starts, even when some threads
//! left the body early (a rewritten `ret`) while others still execute
//! `__syncthreads()` barriers.
//!
//! Without barriers in the body the end point is a plain non-`.aligned`
//! `barrier.sync 0` (threads arrive from divergent paths).
//!
//! With barriers, every barrier 0 of the variant (the body's, the end
//! point's and the preemptive variant's task broadcast) becomes the
//! non-`.aligned` vote `barrier.red.popc.u32 c, 0, v`, never mixed with
//! `barrier.sync` on the same barrier (the PTX ISA leaves mixing
//! undefined). A thread still in the body votes false at each of its
//! barriers; a thread that has finished the block (by falling through or
//! by an early return) waits at the end point, voting true:
//!
//! ```text
//! wait: barrier.red.popc.u32 c, 0, !never;   // I have finished this block
//!       if c < ntid.x*ntid.y*ntid.z goto wait;
//! ```
//!
//! A waiting thread keeps arriving at barrier 0, so it counts as arrived at
//! every barrier the others still execute, exactly as an exited thread does
//! on the hardware. Every participant of a round gets the same count, so
//! all threads see `c == n` in the same round (the first in which every
//! thread is waiting) and leave together: barrier rounds stay in step and
//! nothing needs resetting.
//!
//! The pass first used a shared `done` counter (`atom.add`, then a barrier
//! and a read, looping while `done < n`, and a leader resetting it). A
//! late thread's increment is not ordered against an early thread's read
//! in the same round, so some threads could leave one round before others;
//! the rounds then went out of step and the reset could land while a
//! lagging thread still waited (a hang, or a block re-run from a stale
//! task slot). The interpreter's adversarial schedules find that within a
//! few dozen schedules (`kernels/tests/ptx_schedules.rs`, on the kept
//! output `tests/fixtures/regressions/sync_done_counter.ptx`).

use super::names::Names;
use super::refuse::{classify_barrier, BarrierKind};
use super::rewrite::{code, returns_to_branch, substitute_block_index};
use crate::ptx::ast::*;
use crate::ptx::error::PtxError;
use crate::ptx::walk::for_each_instr_mut;

/// Extra declarations for the vote.
const VOTE_DECLS: &str = "
.reg .pred @R@never;
.reg .b32 @R@n, @R@c, @R@tt;
";

/// Before the loop: the CTA size, and the constant-false predicate a
/// thread still in the body votes with.
const VOTE_INIT: &str = "
mov.u32 @R@n, %ntid.x;
mov.u32 @R@tt, %ntid.y;
mul.lo.u32 @R@n, @R@n, @R@tt;
mov.u32 @R@tt, %ntid.z;
mul.lo.u32 @R@n, @R@n, @R@tt;
setp.ne.u32 @R@never, @R@n, @R@n;
";

/// A barrier 0 where every thread is still working (the body's, the task
/// broadcast): it votes false.
const VOTE_BUSY: &str = "barrier.red.popc.u32 @R@c, 0, @R@never;";

const VOTE_END: &str = "
@L@wait:
barrier.red.popc.u32 @R@c, 0, !@R@never;
setp.lt.u32 @R@p, @R@c, @R@n;
@@R@p bra @L@wait;
";

/// Leader predicate declaration (the preemptive variant's task fetch).
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
    /// Declarations.
    pub decls: Vec<Statement>,
    /// Runs once before the loop.
    pub init: Vec<Statement>,
    /// The end-of-iteration point (after the `next` label).
    pub end: Vec<Statement>,
    /// The form every other CTA-wide barrier 0 of the variant takes (the
    /// preemptive variant's task broadcast).
    pub barrier: Vec<Statement>,
}

/// Rewrites every `__syncthreads()`-style barrier in `body` to `vote` (the
/// non-`.aligned` busy vote: threads may now arrive divergently). The
/// caller has refused every other barrier kind already.
fn rewrite_barriers(body: &mut [Statement], vote: &Instruction) {
    for_each_instr_mut(body, &mut |i| {
        if classify_barrier(i) == Some(BarrierKind::CtaSync0) {
            i.opcode = vote.opcode.clone();
            i.modifiers = vote.modifiers.clone();
            i.operands = vote.operands.clone();
        }
    });
}

/// Builds the end point for a body with `barriers` CTA barriers.
pub(crate) fn end_point(n: &Names, entry: &str, barriers: usize) -> Result<SyncParts, PtxError> {
    if barriers == 0 {
        return Ok(SyncParts {
            decls: Vec::new(),
            init: Vec::new(),
            end: code(n, entry, "barrier.sync 0;")?,
            barrier: code(n, entry, "barrier.sync 0;")?,
        });
    }
    Ok(SyncParts {
        decls: code(n, entry, VOTE_DECLS)?,
        init: code(n, entry, VOTE_INIT)?,
        end: code(n, entry, VOTE_END)?,
        barrier: code(n, entry, VOTE_BUSY)?,
    })
}

/// The original body as a persistent loop iteration runs it: block index
/// substituted, every return a branch to the end of the iteration
/// (`<label>next`), and barriers made safe for early returners.
pub(crate) fn loop_body(
    body: &[Statement],
    n: &Names,
    entry: &str,
    barriers: usize,
) -> Result<Vec<Statement>, PtxError> {
    let mut body = body.to_vec();
    substitute_block_index(&mut body, n);
    returns_to_branch(&mut body, &format!("{}next", n.label));
    if barriers > 0 {
        let vote = code(n, entry, VOTE_BUSY)?;
        let Some(Statement::Instr(vote)) = vote.first() else {
            unreachable!("VOTE_BUSY is one instruction");
        };
        rewrite_barriers(&mut body, vote);
    }
    Ok(body)
}
