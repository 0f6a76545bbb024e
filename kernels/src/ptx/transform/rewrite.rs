//! The pieces every variant shares: the original-grid parameters and
//! prologue, the linear-index -> (x, y, z) decomposition, the operand-level
//! substitution of `%ctaid` / `%nctaid`, turning `ret`/`exit` into branches,
//! and assembling the new entry around the rewritten body.

use super::names::Names;
use crate::ptx::ast::*;
use crate::ptx::error::PtxError;
use crate::ptx::parser::parse_statements;
use crate::ptx::walk::{for_each_instr_mut, for_each_leaf_mut};

/// Names of the parameters every variant appends: the original grid.
pub const PARAM_GRID: [&str; 3] = ["__tally_grid_x", "__tally_grid_y", "__tally_grid_z"];

/// Registers (and the predicate) every variant declares. `L` is the linear
/// index of the original block being run; `x`, `y`, `z` its coordinates.
const COMMON_DECLS: &str = "
.reg .b32 @R@gx, @R@gy, @R@gz, @R@gxy, @R@total, @R@L, @R@x, @R@y, @R@z, @R@t;
.reg .pred @R@p;
";

/// Loads the original grid and its block count. The host guarantees the
/// count fits in 32 bits (the task counter is a u32).
const GRID_PROLOGUE: &str = "
ld.param.u32 @R@gx, [__tally_grid_x];
ld.param.u32 @R@gy, [__tally_grid_y];
ld.param.u32 @R@gz, [__tally_grid_z];
mul.lo.u32 @R@gxy, @R@gx, @R@gy;
mul.lo.u32 @R@total, @R@gxy, @R@gz;
";

/// `x = L % gx, y = (L / gx) % gy, z = L / (gx*gy)`. Only reached with
/// `L < total`, so no divisor is zero.
const DECOMPOSE: &str = "
rem.u32 @R@x, @R@L, @R@gx;
div.u32 @R@t, @R@L, @R@gx;
rem.u32 @R@y, @R@t, @R@gy;
div.u32 @R@z, @R@L, @R@gxy;
";

/// Parses generated code; a failure is a bug in a template, reported as a
/// transform error rather than a panic.
pub(crate) fn code(names: &Names, entry: &str, template: &str) -> Result<Vec<Statement>, PtxError> {
    parse_statements(&names.expand(template)).map_err(|e| PtxError::Transform {
        entry: entry.to_string(),
        message: format!("internal error in generated code: {e}"),
    })
}

pub(crate) fn common_decls(n: &Names, entry: &str) -> Result<Vec<Statement>, PtxError> {
    code(n, entry, COMMON_DECLS)
}

pub(crate) fn grid_prologue(n: &Names, entry: &str) -> Result<Vec<Statement>, PtxError> {
    code(n, entry, GRID_PROLOGUE)
}

pub(crate) fn decompose(n: &Names, entry: &str) -> Result<Vec<Statement>, PtxError> {
    code(n, entry, DECOMPOSE)
}

/// Rewrites every read of `%ctaid.{x,y,z}` to the current original block's
/// coordinate and every `%nctaid.{x,y,z}` to the original grid, in any
/// operand of any instruction.
pub(crate) fn substitute_block_index(body: &mut [Statement], n: &Names) {
    for_each_instr_mut(body, &mut |i| {
        for op in &mut i.operands {
            for_each_leaf_mut(op, &mut |leaf| {
                let Operand::Var {
                    name,
                    comp: Some(c),
                } = leaf
                else {
                    return;
                };
                let reg = match (name.as_str(), c.as_str()) {
                    ("%ctaid", "x") => "x",
                    ("%ctaid", "y") => "y",
                    ("%ctaid", "z") => "z",
                    ("%nctaid", "x") => "gx",
                    ("%nctaid", "y") => "gy",
                    ("%nctaid", "z") => "gz",
                    _ => return,
                };
                *leaf = Operand::var(format!("{}{reg}", n.reg));
            });
        }
    });
}

/// Turns every `ret` / `exit` of the entry body (guards kept) into a branch
/// to `label`, the end of the current iteration of a persistent loop.
/// Called `.func`s are separate functions and keep returning normally.
pub(crate) fn returns_to_branch(body: &mut [Statement], label: &str) {
    for_each_instr_mut(body, &mut |i| {
        if i.opcode == "ret" || i.opcode == "exit" {
            i.opcode = "bra".to_string();
            i.modifiers.clear();
            i.operands = vec![Operand::var(label)];
        }
    });
}

/// A `.param` declaration of one scalar.
pub(crate) fn scalar_param(ty: &str, name: &str) -> VarDecl {
    VarDecl {
        linkage: None,
        space: Space::Param,
        align: None,
        vector: None,
        ty: ty.to_string(),
        ptr: None,
        declarators: vec![Declarator {
            name: name.to_string(),
            range: None,
            dims: Vec::new(),
            init: None,
        }],
        pos: Pos::default(),
    }
}

/// The pieces of a generated entry's body, in order.
#[derive(Debug, Default)]
pub(crate) struct Parts {
    /// Declarations added by the variant (go after the original's).
    pub decls: Vec<Statement>,
    /// Code before the original body.
    pub before: Vec<Statement>,
    /// Code after it.
    pub after: Vec<Statement>,
}

/// Builds `orig.name + suffix`: the original's linkage, parameters (plus
/// `extra` appended), directives, and a body of the original's top-level
/// declarations, the variant's declarations, `parts.before`, the rest of
/// the rewritten original body, and `parts.after`. Declarations are hoisted
/// so every register is declared before the generated code uses it.
pub(crate) fn assemble(
    orig: &Function,
    suffix: &str,
    extra: &[(&str, &str)],
    body: Vec<Statement>,
    parts: Parts,
) -> Result<Function, PtxError> {
    let mut params = orig.params.clone().unwrap_or_default();
    for (ty, name) in extra {
        let clash = params
            .iter()
            .any(|p| p.declarators.iter().any(|d| d.name == *name));
        if clash {
            return Err(PtxError::Transform {
                entry: orig.name.clone(),
                message: format!(
                    "the entry already has a parameter named `{name}` (already transformed?)"
                ),
            });
        }
        params.push(scalar_param(ty, name));
    }
    let (decls, rest): (Vec<Statement>, Vec<Statement>) = body
        .into_iter()
        .partition(|s| matches!(s, Statement::Decl(_)));
    let mut new_body = decls;
    new_body.extend(parts.decls);
    new_body.extend(parts.before);
    new_body.extend(rest);
    new_body.extend(parts.after);
    Ok(Function {
        linkage: orig.linkage,
        kind: FnKind::Entry,
        returns: None,
        name: format!("{}{suffix}", orig.name),
        params: Some(params),
        directives: orig.directives.clone(),
        body: Some(new_body),
        pos: orig.pos,
    })
}
