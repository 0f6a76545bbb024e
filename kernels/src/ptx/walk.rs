//! Traversals over function bodies: visiting every instruction or operand
//! (through nested scopes), and collecting the names a body uses. Nesting
//! depth is bounded by the parser, so plain recursion is safe.

use super::ast::*;

/// Calls `f` on every instruction in `stmts`, nested scopes included.
pub fn for_each_instr<'a>(stmts: &'a [Statement], f: &mut impl FnMut(&'a Instruction)) {
    for s in stmts {
        match s {
            Statement::Instr(i) => f(i),
            Statement::Block(inner, _) => for_each_instr(inner, f),
            _ => {}
        }
    }
}

/// Mutable counterpart of [`for_each_instr`].
pub fn for_each_instr_mut(stmts: &mut [Statement], f: &mut impl FnMut(&mut Instruction)) {
    for s in stmts {
        match s {
            Statement::Instr(i) => f(i),
            Statement::Block(inner, _) => for_each_instr_mut(inner, f),
            _ => {}
        }
    }
}

/// Calls `f` on every operand of `op` that is itself no list: the operand,
/// or the elements of vectors, call lists and address lists.
pub fn for_each_leaf_mut(op: &mut Operand, f: &mut impl FnMut(&mut Operand)) {
    match op {
        Operand::Vector(items) | Operand::List(items) | Operand::AddrList(items) => {
            for item in items {
                for_each_leaf_mut(item, f);
            }
        }
        _ => f(op),
    }
}

/// Read-only counterpart of [`for_each_leaf_mut`].
pub fn for_each_leaf<'a>(op: &'a Operand, f: &mut impl FnMut(&'a Operand)) {
    match op {
        Operand::Vector(items) | Operand::List(items) | Operand::AddrList(items) => {
            for item in items {
                for_each_leaf(item, f);
            }
        }
        _ => f(op),
    }
}

/// Every name an operand mentions (registers, symbols, labels, address
/// bases, predicates).
pub fn operand_names<'a>(op: &'a Operand, out: &mut Vec<&'a str>) {
    for_each_leaf(op, &mut |leaf| match leaf {
        Operand::Var { name, .. } | Operand::Not(name) => out.push(name),
        Operand::Addr {
            base: AddrBase::Var(name),
            ..
        } => out.push(name),
        Operand::Pipe(a, b) => {
            out.push(a);
            out.push(b);
        }
        _ => {}
    });
}

/// Every name declared or used in `stmts`: declarators, labels, guards and
/// operands, nested scopes included.
pub fn body_names<'a>(stmts: &'a [Statement], out: &mut Vec<&'a str>) {
    for s in stmts {
        match s {
            Statement::Decl(d) => out.extend(d.declarators.iter().map(|x| x.name.as_str())),
            Statement::Label(l, _) => out.push(l),
            Statement::Instr(i) => {
                if let Some(g) = &i.guard {
                    out.push(&g.pred);
                }
                for op in &i.operands {
                    operand_names(op, out);
                }
            }
            Statement::Block(inner, _) => body_names(inner, out),
            Statement::Pragma(_) | Statement::Verbatim(_) => {}
        }
    }
}
