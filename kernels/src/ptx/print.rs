//! Printer: the AST back to PTX text that `ptxas` accepts and that parses
//! to an equal AST. Layout is canonical (tabs, one statement a line), not
//! the original's; verbatim items are emitted byte for byte.

use std::fmt::{self, Display, Formatter, Write};

use super::ast::*;

impl Display for Module {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(v) = &self.version {
            writeln!(f, ".version {v}")?;
        }
        if !self.target.is_empty() {
            writeln!(f, ".target {}", self.target.join(", "))?;
        }
        if let Some(a) = self.address_size {
            writeln!(f, ".address_size {a}")?;
        }
        for item in &self.items {
            writeln!(f)?;
            match item {
                Item::Var(d) => writeln!(f, "{d};")?,
                Item::Function(func) => write!(f, "{func}")?,
                Item::Verbatim(v) => writeln!(f, "{}", v.text)?,
            }
        }
        Ok(())
    }
}

/// Prints the declaration without its terminating `;` (parameters have none).
impl Display for VarDecl {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(l) = self.linkage {
            write!(f, ".{} ", l.name())?;
        }
        write!(f, ".{}", self.space.name())?;
        if let Some(a) = self.align {
            write!(f, " .align {a}")?;
        }
        if let Some(v) = self.vector {
            write!(f, " .v{v}")?;
        }
        write!(f, " .{}", self.ty)?;
        if let Some(p) = &self.ptr {
            f.write_str(" .ptr")?;
            if let Some(s) = p.space {
                write!(f, " .{}", s.name())?;
            }
            if let Some(a) = p.align {
                write!(f, " .align {a}")?;
            }
        }
        for (i, d) in self.declarators.iter().enumerate() {
            f.write_str(if i == 0 { " " } else { ", " })?;
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl Display for Declarator {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        if let Some(r) = self.range {
            write!(f, "<{r}>")?;
        }
        for d in &self.dims {
            match d {
                Some(n) => write!(f, "[{n}]")?,
                None => f.write_str("[]")?,
            }
        }
        if let Some(init) = &self.init {
            write!(f, " = {init}")?;
        }
        Ok(())
    }
}

impl Display for Init {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Init::Expr(toks) => {
                for (i, t) in toks.iter().enumerate() {
                    if i > 0 {
                        f.write_char(' ')?;
                    }
                    match t {
                        ExprTok::Int(s) | ExprTok::Float(s) | ExprTok::Ident(s) => {
                            f.write_str(s)?
                        }
                        ExprTok::Punct(c) => f.write_char(*c)?,
                    }
                }
                Ok(())
            }
            Init::List(items) => {
                f.write_char('{')?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_char('}')
            }
        }
    }
}

fn write_params(f: &mut Formatter<'_>, params: &[VarDecl]) -> fmt::Result {
    if params.is_empty() {
        return f.write_str("()");
    }
    f.write_str("(\n")?;
    for (i, p) in params.iter().enumerate() {
        write!(f, "\t{p}")?;
        f.write_str(if i + 1 < params.len() { ",\n" } else { "\n" })?;
    }
    f.write_char(')')
}

impl Display for Function {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(l) = self.linkage {
            write!(f, ".{} ", l.name())?;
        }
        f.write_str(match self.kind {
            FnKind::Entry => ".entry ",
            FnKind::Func => ".func ",
        })?;
        if let Some(r) = &self.returns {
            write_params(f, r)?;
            f.write_char(' ')?;
        }
        f.write_str(&self.name)?;
        if let Some(p) = &self.params {
            write_params(f, p)?;
        }
        f.write_char('\n')?;
        for d in &self.directives {
            match d {
                FnDirective::Perf { name, args, .. } => {
                    write!(f, ".{name}")?;
                    for (i, a) in args.iter().enumerate() {
                        f.write_str(if i == 0 { " " } else { ", " })?;
                        write!(f, "{a}")?;
                    }
                    f.write_char('\n')?;
                }
                FnDirective::Pragma(strings) => writeln!(f, "{}", pragma(strings))?,
            }
        }
        match &self.body {
            None => f.write_str(";\n"),
            Some(body) => {
                f.write_str("{\n")?;
                write_statements(f, body, 1)?;
                f.write_str("}\n")
            }
        }
    }
}

fn pragma(strings: &[String]) -> String {
    let quoted: Vec<String> = strings.iter().map(|s| format!("\"{s}\"")).collect();
    format!(".pragma {};", quoted.join(", "))
}

fn write_statements(f: &mut Formatter<'_>, stmts: &[Statement], indent: usize) -> fmt::Result {
    let tabs = "\t".repeat(indent);
    for s in stmts {
        match s {
            Statement::Decl(d) => writeln!(f, "{tabs}{d};")?,
            Statement::Label(l, _) => writeln!(f, "{l}:")?,
            Statement::Instr(i) => writeln!(f, "{tabs}{i}")?,
            Statement::Block(inner, _) => {
                writeln!(f, "{tabs}{{")?;
                write_statements(f, inner, indent + 1)?;
                writeln!(f, "{tabs}}}")?;
            }
            Statement::Pragma(strings) => writeln!(f, "{tabs}{}", pragma(strings))?,
            Statement::Verbatim(v) => writeln!(f, "{tabs}{}", v.text)?,
        }
    }
    Ok(())
}

/// Prints the instruction with its `;`.
impl Display for Instruction {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(g) = &self.guard {
            write!(f, "@{}{} ", if g.negated { "!" } else { "" }, g.pred)?;
        }
        f.write_str(&self.full_opcode())?;
        for (i, op) in self.operands.iter().enumerate() {
            f.write_str(if i == 0 { " \t" } else { ", " })?;
            write!(f, "{op}")?;
        }
        f.write_char(';')
    }
}

fn write_list(f: &mut Formatter<'_>, open: char, items: &[Operand], close: char) -> fmt::Result {
    f.write_char(open)?;
    for (i, op) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{op}")?;
    }
    f.write_char(close)
}

impl Display for Operand {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Var { name, comp } => {
                f.write_str(name)?;
                if let Some(c) = comp {
                    write!(f, ".{c}")?;
                }
                Ok(())
            }
            Operand::Imm { text, negative, .. } => {
                if *negative {
                    f.write_char('-')?;
                }
                f.write_str(text)
            }
            Operand::Addr { base, offset } => {
                f.write_char('[')?;
                match base {
                    AddrBase::Var(s) | AddrBase::Imm(s) => f.write_str(s)?,
                }
                if *offset != 0 {
                    write!(f, "+{offset}")?;
                }
                f.write_char(']')
            }
            Operand::AddrList(items) => write_list(f, '[', items, ']'),
            Operand::Vector(items) => write_list(f, '{', items, '}'),
            Operand::List(items) => write_list(f, '(', items, ')'),
            Operand::Sink => f.write_char('_'),
            Operand::Not(p) => write!(f, "!{p}"),
            Operand::Pipe(a, b) => write!(f, "{a}|{b}"),
        }
    }
}
