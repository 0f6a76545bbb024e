//! `ModuleInfo` / `EntryInfo`: a per-entry summary for the CLI and the
//! scheduler (parameters, barriers, early returns, and why an entry would
//! be refused), computed without transforming anything.

use super::refuse::{check_entry, check_persistent, classify_barrier};
use crate::ptx::ast::*;
use crate::ptx::error::PtxError;
use crate::ptx::walk::for_each_instr;

/// One kernel parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamInfo {
    pub name: String,
    /// Type without the dot (`"u64"`, `"b8"`).
    pub ty: String,
    /// Size in bytes (element size times array length), if the type is known.
    pub size: Option<u64>,
    pub align: Option<u64>,
}

/// What the transforms need to know about one `.entry`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryInfo {
    pub name: String,
    pub params: Vec<ParamInfo>,
    /// The body has CTA barriers (`bar` / `barrier` of any kind except the
    /// warp-level `bar.warp.sync` and `barrier.cluster`).
    pub uses_barriers: bool,
    /// A `ret` / `exit` other than an unguarded one ending the body.
    pub has_early_return: bool,
    /// Why no variant can be built, if so.
    pub refusal: Option<PtxError>,
    /// Why the PTB / preemptive variants cannot be built (the sliced one
    /// may still be), if so. Set whenever `refusal` is.
    pub persistent_refusal: Option<PtxError>,
}

/// Summary of a module's entries, in source order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleInfo {
    pub entries: Vec<EntryInfo>,
}

fn type_size(ty: &str) -> Option<u64> {
    Some(match ty {
        "b8" | "u8" | "s8" | "e4m3" | "e5m2" => 1,
        "b16" | "u16" | "s16" | "f16" | "bf16" => 2,
        "b32" | "u32" | "s32" | "f32" | "f16x2" | "bf16x2" | "tf32" => 4,
        "b64" | "u64" | "s64" | "f64" => 8,
        "b128" => 16,
        _ => return None,
    })
}

fn param_info(p: &VarDecl) -> Vec<ParamInfo> {
    p.declarators
        .iter()
        .map(|d| {
            let elems = d
                .dims
                .iter()
                .try_fold(u64::from(p.vector.unwrap_or(1)), |acc, dim| {
                    dim.and_then(|n| acc.checked_mul(n))
                });
            ParamInfo {
                name: d.name.clone(),
                ty: p.ty.clone(),
                size: type_size(&p.ty)
                    .zip(elems)
                    .and_then(|(s, n)| s.checked_mul(n)),
                align: p.align,
            }
        })
        .collect()
}

/// Summarises every `.entry` of `m` that has a body.
pub fn analyze_module(m: &Module) -> ModuleInfo {
    let mut entries = Vec::new();
    for f in m.functions() {
        if f.kind != FnKind::Entry {
            continue;
        }
        let Some(body) = &f.body else { continue };
        let mut uses_barriers = false;
        for_each_instr(body, &mut |i| {
            uses_barriers |= classify_barrier(i).is_some()
        });
        let last_is_ret = matches!(
            body.iter().rev().find(|s| matches!(s, Statement::Instr(_) | Statement::Block(..))),
            Some(Statement::Instr(i)) if (i.opcode == "ret" || i.opcode == "exit") && i.guard.is_none()
        );
        let mut returns = 0usize;
        for_each_instr(body, &mut |i| {
            returns += usize::from(i.opcode == "ret" || i.opcode == "exit")
        });
        let has_early_return = returns > usize::from(last_is_ret);
        let refusal = check_entry(m, f).err();
        let persistent_refusal = refusal.clone().or_else(|| check_persistent(m, f).err());
        entries.push(EntryInfo {
            name: f.name.clone(),
            params: f.params.iter().flatten().flat_map(param_info).collect(),
            uses_barriers,
            has_early_return,
            refusal,
            persistent_refusal,
        });
    }
    ModuleInfo { entries }
}
