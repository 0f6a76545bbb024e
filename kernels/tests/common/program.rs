//! The interpreter's program: an entry's statements flattened into one
//! instruction list with label positions and the shared-memory layout.
//! Test support only.

use std::collections::HashMap;

use tally_kernels::ptx::ast::*;

use super::values::type_bytes;

/// The flattened program: instructions and label positions.
pub struct Program<'a> {
    pub code: Vec<&'a Instruction>,
    pub labels: HashMap<&'a str, usize>,
    pub shared_syms: HashMap<&'a str, u64>,
    pub shared_size: usize,
}

pub fn flatten<'a>(stmts: &'a [Statement], p: &mut Program<'a>, dynamic_shared: usize) {
    for s in stmts {
        match s {
            Statement::Instr(i) => p.code.push(i),
            Statement::Label(l, _) => {
                p.labels.insert(l.as_str(), p.code.len());
            }
            Statement::Block(inner, _) => flatten(inner, p, dynamic_shared),
            Statement::Decl(d) if d.space == Space::Shared => {
                for decl in &d.declarators {
                    let elems: u64 = decl.dims.iter().map(|x| x.unwrap_or(0)).product();
                    let mut size = type_bytes(&d.ty) * elems as usize;
                    if decl.dims.contains(&None) {
                        size = dynamic_shared;
                    }
                    let align = d.align.unwrap_or(4).max(4) as usize;
                    p.shared_size = p.shared_size.div_ceil(align) * align;
                    p.shared_syms
                        .insert(decl.name.as_str(), p.shared_size as u64);
                    p.shared_size += size.max(4);
                }
            }
            _ => {}
        }
    }
}
