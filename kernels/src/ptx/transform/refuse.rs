//! Refusals: the constructs the transforms cannot make sliceable or
//! preemptible, found per entry (its directives, its body and every `.func`
//! it can call), each reported as [`PtxError::Unsupported`] with the
//! construct and its line.
//!
//! Two tiers: [`check_entry`] refuses what no variant can handle (clusters,
//! grid sync, dynamic parallelism, `%ctaid` inside a `.func`); and
//! [`check_persistent`] additionally refuses barriers the sync-aware pass
//! cannot make safe, which only matters for the PTB and preemptive
//! variants (slicing runs the body once per block, as the original does).

use std::collections::{BTreeSet, HashMap};

use crate::ptx::ast::*;
use crate::ptx::error::PtxError;
use crate::ptx::lexer::int_value;
use crate::ptx::walk::{for_each_instr, for_each_leaf};

/// Special registers that tie a block to a cluster.
const CLUSTER_SREGS: &[&str] = &[
    "%clusterid",
    "%nclusterid",
    "%cluster_ctaid",
    "%cluster_nctaid",
    "%cluster_ctarank",
    "%cluster_nctarank",
    "%is_explicit_cluster",
];

/// Entry directives that launch the kernel in clusters.
const CLUSTER_DIRECTIVES: &[&str] = &[
    "reqnctapercluster",
    "explicitcluster",
    "maxclusterrank",
    "blocksareclusters",
];

/// Device-runtime functions that launch kernels from the device, matched
/// as substrings of a callee whose name mentions `cuda`: relocatable builds
/// call `__cudaCDP2LaunchDeviceV2` / `__cudaCDP2GetParameterBufferV2`.
const DYNAMIC_PARALLELISM: &[&str] = &["LaunchDevice", "GetParameterBuffer"];

/// How an instruction synchronises the CTA, as far as the transforms care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BarrierKind {
    /// `bar.sync 0`, `bar.cta.sync 0`, `barrier.sync[.aligned] 0`: what
    /// `__syncthreads()` compiles to; the sync-aware pass handles these.
    CtaSync0,
    /// Any other CTA barrier (other id, thread count, arrive, reduction).
    Other,
}

/// Classifies `bar` / `barrier` instructions; `None` for everything else,
/// including the warp-level `bar.warp.sync` and `barrier.cluster` (refused
/// separately).
pub(crate) fn classify_barrier(i: &Instruction) -> Option<BarrierKind> {
    if i.opcode != "bar" && i.opcode != "barrier" {
        return None;
    }
    let mods: Vec<&str> = i
        .modifiers
        .iter()
        .map(String::as_str)
        .filter(|m| *m != "cta")
        .collect();
    match mods.first().copied() {
        Some("warp" | "cluster") => None,
        None | Some("sync") => {
            let only_aligned = mods.iter().skip(1).all(|m| *m == "aligned");
            let id_zero = matches!(
                i.operands.as_slice(),
                [Operand::Imm { text, negative: false, float: false }] if int_value(text) == Some(0)
            );
            if only_aligned && id_zero {
                Some(BarrierKind::CtaSync0)
            } else {
                Some(BarrierKind::Other)
            }
        }
        Some(_) => Some(BarrierKind::Other),
    }
}

/// The callee of a `call`: the first plain name among its operands.
pub(crate) fn callee(i: &Instruction) -> Option<&str> {
    if i.opcode != "call" {
        return None;
    }
    i.operands.iter().find_map(|op| match op {
        Operand::Var { name, comp: None } => Some(name.as_str()),
        _ => None,
    })
}

fn unsupported(entry: &str, construct: String, pos: Pos) -> PtxError {
    PtxError::Unsupported {
        entry: entry.to_string(),
        construct,
        line: pos.line,
        column: pos.column,
    }
}

/// The `.func`s `entry` can reach through calls, in a stable order. An
/// indirect call (through a register) could reach any function with a body.
pub(crate) fn reachable_funcs<'m>(m: &'m Module, entry: &'m Function) -> Vec<&'m Function> {
    let funcs: HashMap<&str, &Function> = m
        .functions()
        .filter(|f| f.kind == FnKind::Func)
        .map(|f| (f.name.as_str(), f))
        .collect();
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut stack = vec![entry];
    let mut out = Vec::new();
    while let Some(f) = stack.pop() {
        let Some(body) = &f.body else { continue };
        let mut called: Vec<&str> = Vec::new();
        let mut indirect = false;
        for_each_instr(body, &mut |i| {
            if let Some(c) = callee(i) {
                if funcs.contains_key(c) {
                    called.push(c);
                } else if c.starts_with('%') {
                    indirect = true;
                }
            }
        });
        if indirect {
            called.extend(funcs.keys().copied());
        }
        for c in called {
            if seen.insert(c) {
                if let Some(g) = funcs.get(c) {
                    out.push(*g);
                    stack.push(g);
                }
            }
        }
    }
    out
}

/// The first construct in `i` that no variant supports.
fn instr_refusal(i: &Instruction, in_func: Option<&str>) -> Option<String> {
    if i.opcode == "barrier" && i.modifiers.first().is_some_and(|m| m == "cluster") {
        return Some(format!("`{}` (cluster barrier)", i.full_opcode()));
    }
    if i.opcode == "griddepcontrol" {
        return Some(format!(
            "`{}` (programmatic dependent launch)",
            i.full_opcode()
        ));
    }
    if let Some(c) = callee(i) {
        if c.contains("cuda") && DYNAMIC_PARALLELISM.iter().any(|d| c.contains(d)) {
            return Some(format!("call to `{c}` (dynamic parallelism)"));
        }
    }
    let mut found = None;
    for op in &i.operands {
        for_each_leaf(op, &mut |leaf| {
            let Operand::Var { name, comp } = leaf else {
                return;
            };
            if found.is_some() {
                return;
            }
            let n = name.as_str();
            if CLUSTER_SREGS.contains(&n) {
                found = Some(format!("`{n}` (cluster special register)"));
            } else if n == "%gridid" {
                found = Some("`%gridid`".to_string());
            } else if n
                .strip_prefix("%envreg")
                .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
            {
                found = Some(format!("`{n}` read (grid sync / cooperative launch)"));
            } else if n == "%ctaid" || n == "%nctaid" {
                let shown = match comp {
                    Some(c) => format!("{n}.{c}"),
                    None => n.to_string(),
                };
                if let Some(func) = in_func {
                    found = Some(format!(
                        "`{shown}` read inside .func `{func}` (the transform only rewrites entries; \
                         pass the block index as a parameter instead)"
                    ));
                } else if !matches!(comp.as_deref(), Some("x" | "y" | "z")) {
                    found = Some(format!("`{shown}` (whole-vector block index read)"));
                }
            }
        });
    }
    found
}

/// Refuses `entry` if any variant would be wrong for it.
pub(crate) fn check_entry(m: &Module, entry: &Function) -> Result<(), PtxError> {
    for d in &entry.directives {
        if let FnDirective::Perf { name, pos, .. } = d {
            if CLUSTER_DIRECTIVES.contains(&name.as_str()) {
                return Err(unsupported(
                    &entry.name,
                    format!("`.{name}` (cluster launch)"),
                    *pos,
                ));
            }
        }
    }
    let scan = |body: &[Statement], in_func: Option<&str>| -> Result<(), PtxError> {
        let mut err = None;
        for_each_instr(body, &mut |i| {
            if err.is_none() {
                err = instr_refusal(i, in_func).map(|c| unsupported(&entry.name, c, i.pos));
            }
        });
        err.map_or(Ok(()), Err)
    };
    if let Some(body) = &entry.body {
        scan(body, None)?;
    }
    for f in reachable_funcs(m, entry) {
        if let Some(body) = &f.body {
            scan(body, Some(&f.name))?;
        }
    }
    Ok(())
}

/// Refuses `entry` for the PTB and preemptive variants if its barriers are
/// not all `__syncthreads()`-style, or a callee synchronises or exits (a
/// `.func` is not rewritten, so its barriers and `exit`s would misbehave
/// inside the worker loop). Returns how many CTA barriers the body has.
pub(crate) fn check_persistent(m: &Module, entry: &Function) -> Result<usize, PtxError> {
    let mut count = 0;
    let mut err = None;
    if let Some(body) = &entry.body {
        for_each_instr(body, &mut |i| {
            match classify_barrier(i) {
            Some(BarrierKind::CtaSync0) => count += 1,
            Some(BarrierKind::Other) if err.is_none() => {
                err = Some(unsupported(
                    &entry.name,
                    format!(
                        "`{}` (only `bar.sync 0` / `barrier.sync 0` can be made safe for persistent blocks)",
                        crate::ptx::transform::shown(i)
                    ),
                    i.pos,
                ))
            }
            _ => {}
        }
        });
    }
    if let Some(e) = err {
        return Err(e);
    }
    for f in reachable_funcs(m, entry) {
        let Some(body) = &f.body else { continue };
        for_each_instr(body, &mut |i| {
            if err.is_some() {
                return;
            }
            if classify_barrier(i).is_some() {
                err = Some(unsupported(
                    &entry.name,
                    format!("`{}` inside .func `{}` called from the entry (barriers in callees are not rewritten)", i.full_opcode(), f.name),
                    i.pos,
                ));
            } else if i.opcode == "exit" {
                err = Some(unsupported(
                    &entry.name,
                    format!("`exit` inside .func `{}` called from the entry (it would end a persistent worker)", f.name),
                    i.pos,
                ));
            }
        });
        if let Some(e) = err {
            return Err(e);
        }
    }
    Ok(count)
}
