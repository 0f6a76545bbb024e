//! Kernel transforms: for every `.entry E` of a module, new entries
//! `E__tally_sliced`, `E__tally_ptb` and `E__tally_preempt` that the
//! scheduler can launch in slices or as (preemptible) persistent thread
//! blocks, with the original entries kept unchanged.
//!
//! Conventions shared by all variants (see [`rewrite`]): parameters
//! `__tally_grid_{x,y,z}` (u32, the original grid) are appended after the
//! original ones, then the variant's own; `total = gx*gy*gz` must fit in
//! 32 bits; a linear block index `L` maps to `x = L % gx, y = (L / gx) %
//! gy, z = L / (gx*gy)`, and every read of `%ctaid.{x,y,z}` /
//! `%nctaid.{x,y,z}` in the body becomes that coordinate / the original
//! grid. Generated names use prefixes checked to be fresh ([`names`]).
//! Entries with constructs no variant supports are refused ([`refuse`]).

mod names;
pub mod preempt;
pub mod ptb;
mod refuse;
mod rewrite;
pub mod sliced;
mod summary;
mod sync;

pub use rewrite::PARAM_GRID;
pub use summary::{analyze_module, EntryInfo, ModuleInfo, ParamInfo};

use crate::ptx::ast::*;
use crate::ptx::error::PtxError;

/// Which variants [`transform_module`] generates for each entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Variants {
    pub sliced: bool,
    pub ptb: bool,
    pub preempt: bool,
}

impl Variants {
    pub const ALL: Variants = Variants {
        sliced: true,
        ptb: true,
        preempt: true,
    };
    pub const SLICED: Variants = Variants {
        sliced: true,
        ptb: false,
        preempt: false,
    };
    pub const PTB: Variants = Variants {
        sliced: false,
        ptb: true,
        preempt: false,
    };
    pub const PREEMPT: Variants = Variants {
        sliced: false,
        ptb: false,
        preempt: true,
    };

    /// Whether a persistent (PTB or preemptive) variant is requested.
    pub fn persistent(self) -> bool {
        self.ptb || self.preempt
    }
}

/// An instruction as shown in messages: opcode and operands, no `;`.
pub(crate) fn shown(i: &Instruction) -> String {
    let text = i.to_string();
    text.trim_end_matches(';').replace(" \t", " ")
}

/// Returns `m` with, for every `.entry` that has a body, the requested
/// variants appended as new entries (in entry order: sliced, ptb, preempt).
/// Fails on the first entry that cannot be transformed, naming it.
pub fn transform_module(m: &Module, variants: Variants) -> Result<Module, PtxError> {
    transform(m, variants, false).map(|(out, _)| out)
}

/// Like [`transform_module`], but an entry that is refused is skipped
/// (keeping its sliced variant when only the persistent ones are refused)
/// and its refusal collected, so the rest of the module is still usable.
pub fn transform_module_skipping(m: &Module, variants: Variants) -> (Module, Vec<PtxError>) {
    match transform(m, variants, true) {
        Ok(r) => r,
        // Only internal errors (a name clash) get here; report them likewise.
        Err(e) => (m.clone(), vec![e]),
    }
}

fn transform(
    m: &Module,
    variants: Variants,
    skip: bool,
) -> Result<(Module, Vec<PtxError>), PtxError> {
    let mut out = m.clone();
    let mut refused = Vec::new();
    for f in m.functions() {
        if f.kind != FnKind::Entry {
            continue;
        }
        let Some(body) = &f.body else { continue };
        if let Err(e) = refuse::check_entry(m, f) {
            if !skip {
                return Err(e);
            }
            refused.push(e);
            continue;
        }
        let mut variants = variants;
        let barriers = if variants.persistent() {
            match refuse::check_persistent(m, f) {
                Ok(n) => n,
                Err(e) if skip => {
                    refused.push(e);
                    variants.ptb = false;
                    variants.preempt = false;
                    0
                }
                Err(e) => return Err(e),
            }
        } else {
            0
        };
        let names = names::Names::for_entry(m, f);
        let mut new = Vec::new();
        if variants.sliced {
            new.push(sliced::build(f, body, &names)?);
        }
        if variants.ptb {
            new.push(ptb::build(f, body, &names, barriers)?);
        }
        if variants.preempt {
            new.push(preempt::build(f, body, &names, barriers)?);
        }
        for g in new {
            if m.function(&g.name).is_some() {
                return Err(PtxError::Transform {
                    entry: f.name.clone(),
                    message: format!("the module already has a function named `{}`", g.name),
                });
            }
            out.items.push(Item::Function(g));
        }
    }
    Ok((out, refused))
}
