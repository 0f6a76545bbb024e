//! Parser: tokens to the [`Module`] AST. A hand-written recursive-descent
//! parser over the lexer's tokens; every failure is a [`PtxError::Syntax`]
//! with the position of the offending token. Nesting (`{ ... }` scopes,
//! initialiser lists) is capped at [`MAX_DEPTH`] so hostile input cannot
//! exhaust the stack.

use super::ast::*;
use super::error::PtxError;
use super::lexer::{int_value, tokenize, Token, TokenKind};

/// Deepest nesting of `{ ... }` scopes or initialiser lists accepted. Real
/// PTX nests two or three deep (inline asm inside a call sequence).
pub const MAX_DEPTH: usize = 64;

/// Parses a whole PTX module.
pub fn parse_module(src: &str) -> Result<Module, PtxError> {
    let tokens = tokenize(src)?;
    let mut p = Parser {
        src,
        toks: &tokens,
        i: 0,
    };
    p.module()
}

/// Parses a sequence of function-body statements (no surrounding braces),
/// as found between an entry's `{` and `}`. The transforms use it to build
/// the code they insert from readable PTX text.
pub fn parse_statements(src: &str) -> Result<Vec<Statement>, PtxError> {
    let tokens = tokenize(src)?;
    let mut p = Parser {
        src,
        toks: &tokens,
        i: 0,
    };
    let stmts = p.statements(0, None)?;
    Ok(stmts)
}

/// Directives whose arguments are a comma-separated integer list, allowed
/// between a function's parameters and its body.
const PERF_DIRECTIVES: &[&str] = &[
    "maxntid",
    "reqntid",
    "minnctapersm",
    "maxnctapersm",
    "maxnreg",
    "reqnctapercluster",
    "explicitcluster",
    "maxclusterrank",
    "noreturn",
    "blocksareclusters",
];

struct Parser<'a> {
    src: &'a str,
    toks: &'a [Token],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&TokenKind> {
        self.toks.get(self.i).map(|t| &t.kind)
    }

    fn peek_at(&self, ahead: usize) -> Option<&Token> {
        self.toks.get(self.i + ahead)
    }

    fn pos(&self) -> Pos {
        match self.toks.get(self.i) {
            Some(t) => Pos {
                line: t.line,
                column: t.column,
            },
            None => self.end_pos(),
        }
    }

    fn end_pos(&self) -> Pos {
        match self.toks.last() {
            Some(t) => Pos {
                line: t.line,
                column: t.end_column,
            },
            None => Pos { line: 1, column: 1 },
        }
    }

    fn bump(&mut self) -> Option<&Token> {
        let t = self.toks.get(self.i);
        if t.is_some() {
            self.i += 1;
        }
        t
    }

    fn found(&self) -> String {
        self.toks
            .get(self.i)
            .map_or_else(|| "end of input".to_string(), |t| t.kind.describe())
    }

    /// An "expected X" error at the current token.
    fn expected(&self, what: &str) -> PtxError {
        let pos = self.pos();
        PtxError::syntax(pos.line, pos.column, what, self.found())
    }

    /// A missing separator or terminator (`;`, `,`, `]`). When the current
    /// token starts a new line (a forgotten `;`), the error points just past
    /// the previous token, where the missing piece belongs.
    fn missing(&self, what: &str) -> PtxError {
        let prev = self.i.checked_sub(1).and_then(|j| self.toks.get(j));
        let pos = match (prev, self.toks.get(self.i)) {
            (Some(p), Some(cur)) if cur.line != p.line => Pos {
                line: p.line,
                column: p.end_column,
            },
            (Some(p), None) => Pos {
                line: p.line,
                column: p.end_column,
            },
            _ => self.pos(),
        };
        PtxError::syntax(pos.line, pos.column, what, self.found())
    }

    fn is_punct(&self, c: char) -> bool {
        self.peek() == Some(&TokenKind::Punct(c))
    }

    fn eat_punct(&mut self, c: char) -> bool {
        if self.is_punct(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn expect_punct(&mut self, c: char) -> Result<(), PtxError> {
        if self.eat_punct(c) {
            Ok(())
        } else {
            Err(self.missing(&format!("`{c}`")))
        }
    }

    fn directive(&self) -> Option<&str> {
        match self.peek() {
            Some(TokenKind::Directive(d)) => Some(d),
            _ => None,
        }
    }

    fn ident(&mut self, what: &str) -> Result<String, PtxError> {
        match self.peek() {
            Some(TokenKind::Ident(s)) => {
                let s = s.clone();
                self.i += 1;
                Ok(s)
            }
            _ => Err(self.expected(what)),
        }
    }

    fn int(&mut self, what: &str) -> Result<u64, PtxError> {
        match self.peek() {
            Some(TokenKind::Int(s)) => match int_value(s) {
                Some(v) => {
                    self.i += 1;
                    Ok(v)
                }
                None => Err(self.expected("an integer that fits in 64 bits")),
            },
            _ => Err(self.expected(what)),
        }
    }

    /// Source text from token `from` through the token before the cursor.
    fn verbatim_from(&self, from: usize) -> Verbatim {
        let start = self.toks.get(from).map_or(0, |t| t.start);
        let end = self
            .i
            .checked_sub(1)
            .and_then(|j| self.toks.get(j))
            .map_or(start, |t| t.end);
        let text = self
            .src
            .get(start..end.max(start))
            .unwrap_or_default()
            .to_string();
        let pos = self.toks.get(from).map_or_else(Pos::default, |t| Pos {
            line: t.line,
            column: t.column,
        });
        Verbatim { text, pos }
    }

    /// Consumes the rest of the current line (`.loc`, `.file` have no `;`).
    fn verbatim_line(&mut self) -> Verbatim {
        let from = self.i;
        let line = self.toks.get(from).map_or(0, |t| t.line);
        while self.toks.get(self.i).is_some_and(|t| t.line == line) {
            self.i += 1;
        }
        self.verbatim_from(from)
    }

    /// Consumes through the next `;` at brace depth 0, or through a braced
    /// group (`.section .debug_info { ... }`).
    fn verbatim_until_semi(&mut self, depth: usize) -> Result<Verbatim, PtxError> {
        let from = self.i;
        let open_pos = self.pos();
        let mut level = 0usize;
        loop {
            match self.bump().map(|t| &t.kind) {
                None => {
                    return Err(PtxError::syntax(
                        open_pos.line,
                        open_pos.column,
                        "`;` ending this directive",
                        "end of input",
                    ))
                }
                Some(TokenKind::Punct('{')) => {
                    level += 1;
                    if depth + level > MAX_DEPTH {
                        return Err(self.expected("shallower nesting"));
                    }
                }
                Some(TokenKind::Punct('}')) => {
                    if level == 0 {
                        return Err(PtxError::syntax(
                            open_pos.line,
                            open_pos.column,
                            "a balanced directive",
                            "`}`",
                        ));
                    }
                    level -= 1;
                    if level == 0 && !self.is_punct(';') {
                        return Ok(self.verbatim_from(from));
                    }
                }
                Some(TokenKind::Punct(';')) if level == 0 => return Ok(self.verbatim_from(from)),
                Some(_) => {}
            }
        }
    }

    fn module(&mut self) -> Result<Module, PtxError> {
        let mut m = Module::default();
        while let Some(kind) = self.peek() {
            let pos = self.pos();
            let TokenKind::Directive(d) = kind else {
                return Err(self.expected("a module-level directive"));
            };
            match d.as_str() {
                "version" => {
                    if m.version.is_some() {
                        return Err(self.expected("a single `.version`"));
                    }
                    self.i += 1;
                    match self.peek() {
                        Some(TokenKind::Float(s) | TokenKind::Int(s)) => {
                            m.version = Some(s.clone());
                            self.i += 1;
                        }
                        _ => return Err(self.expected("a version number")),
                    }
                }
                "target" => {
                    if !m.target.is_empty() {
                        return Err(self.expected("a single `.target`"));
                    }
                    self.i += 1;
                    m.target.push(self.ident("a target name")?);
                    while self.eat_punct(',') {
                        m.target.push(self.ident("a target name")?);
                    }
                }
                "address_size" => {
                    if m.address_size.is_some() {
                        return Err(self.expected("a single `.address_size`"));
                    }
                    self.i += 1;
                    let v = self.int("an address size")?;
                    m.address_size = Some(u32::try_from(v).map_err(|_| self.expected("32 or 64"))?);
                }
                "file" | "loc" => {
                    let v = self.verbatim_line();
                    m.items.push(Item::Verbatim(v));
                }
                "section" | "pragma" | "alias" => {
                    let v = self.verbatim_until_semi(0)?;
                    m.items.push(Item::Verbatim(v));
                }
                _ => {
                    let item = self.function_or_var(pos)?;
                    m.items.push(item);
                }
            }
        }
        Ok(m)
    }

    fn function_or_var(&mut self, pos: Pos) -> Result<Item, PtxError> {
        // Look past linkage to see whether a function follows.
        let mut j = self.i;
        while let Some(TokenKind::Directive(d)) = self.toks.get(j).map(|t| &t.kind) {
            if Linkage::from_name(d).is_some() {
                j += 1;
            } else {
                break;
            }
        }
        match self.toks.get(j).map(|t| &t.kind) {
            Some(TokenKind::Directive(d)) if d == "entry" || d == "func" => {
                Ok(Item::Function(self.function(pos)?))
            }
            Some(TokenKind::Directive(d)) if Space::from_name(d).is_some() => {
                let decl = self.decl_statement()?;
                Ok(Item::Var(decl))
            }
            _ => Err(self.expected("`.entry`, `.func` or a variable declaration")),
        }
    }

    fn linkage(&mut self) -> Result<Option<Linkage>, PtxError> {
        let mut linkage = None;
        while let Some(l) = self.directive().and_then(Linkage::from_name) {
            if linkage.is_some() {
                return Err(self.expected("a single linkage directive"));
            }
            linkage = Some(l);
            self.i += 1;
        }
        Ok(linkage)
    }

    fn function(&mut self, pos: Pos) -> Result<Function, PtxError> {
        let linkage = self.linkage()?;
        let kind = match self.directive() {
            Some("entry") => FnKind::Entry,
            Some("func") => FnKind::Func,
            _ => return Err(self.expected("`.entry` or `.func`")),
        };
        self.i += 1;
        let returns = if kind == FnKind::Func && self.is_punct('(') {
            Some(self.param_list()?)
        } else {
            None
        };
        let name = self.ident("a function name")?;
        let params = if self.is_punct('(') {
            Some(self.param_list()?)
        } else {
            None
        };
        let mut directives = Vec::new();
        loop {
            let dpos = self.pos();
            match self.directive() {
                Some(d) if PERF_DIRECTIVES.contains(&d) => {
                    let name = d.to_string();
                    self.i += 1;
                    let mut args = Vec::new();
                    if matches!(self.peek(), Some(TokenKind::Int(_))) {
                        args.push(self.int("an integer")?);
                        while self.eat_punct(',') {
                            args.push(self.int("an integer")?);
                        }
                    }
                    directives.push(FnDirective::Perf {
                        name,
                        args,
                        pos: dpos,
                    });
                }
                Some("pragma") => {
                    self.i += 1;
                    directives.push(FnDirective::Pragma(self.pragma_strings()?));
                }
                _ => break,
            }
        }
        let body = if self.eat_punct(';') {
            None
        } else if self.is_punct('{') {
            let open = self.pos();
            self.i += 1;
            Some(self.statements(1, Some(open))?)
        } else {
            return Err(self.expected("`{` starting the function body or `;`"));
        };
        Ok(Function {
            linkage,
            kind,
            returns,
            name,
            params,
            directives,
            body,
            pos,
        })
    }

    fn param_list(&mut self) -> Result<Vec<VarDecl>, PtxError> {
        self.expect_punct('(')?;
        let mut params = Vec::new();
        if self.eat_punct(')') {
            return Ok(params);
        }
        loop {
            let head = self.decl_head()?;
            let d = self.declarator(0)?;
            params.push(VarDecl {
                declarators: vec![d],
                ..head
            });
            if self.eat_punct(')') {
                return Ok(params);
            }
            if !self.eat_punct(',') {
                return Err(self.missing("`,` or `)` in the parameter list"));
            }
        }
    }

    fn pragma_strings(&mut self) -> Result<Vec<String>, PtxError> {
        let mut strings = Vec::new();
        loop {
            match self.peek() {
                Some(TokenKind::Str(s)) => {
                    strings.push(s.clone());
                    self.i += 1;
                }
                _ => return Err(self.expected("a pragma string")),
            }
            if self.eat_punct(';') {
                return Ok(strings);
            }
            if !self.eat_punct(',') {
                return Err(self.missing("`;` ending the pragma"));
            }
        }
    }

    /// `[linkage] space [.align N] [.vN] type [.ptr [.space] [.align N]]`;
    /// the declarators are parsed by the caller.
    fn decl_head(&mut self) -> Result<VarDecl, PtxError> {
        let pos = self.pos();
        let linkage = self.linkage()?;
        let space = match self.directive().and_then(Space::from_name) {
            Some(s) => s,
            None => return Err(self.expected("a state space (`.reg`, `.param`, `.shared`, ...)")),
        };
        self.i += 1;
        let mut decl = VarDecl {
            linkage,
            space,
            align: None,
            vector: None,
            ty: String::new(),
            ptr: None,
            declarators: Vec::new(),
            pos,
        };
        while let Some(d) = self.directive() {
            let d = d.to_string();
            match d.as_str() {
                "align" => {
                    self.i += 1;
                    let a = self.int("an alignment")?;
                    match &mut decl.ptr {
                        Some(ptr) if ptr.align.is_none() => ptr.align = Some(a),
                        Some(_) => return Err(self.expected("a single `.align`")),
                        None if decl.align.is_none() => decl.align = Some(a),
                        None => return Err(self.expected("a single `.align`")),
                    }
                }
                "v2" | "v4" | "v8" if decl.vector.is_none() && decl.ty.is_empty() => {
                    self.i += 1;
                    decl.vector = d[1..].parse().ok();
                }
                "ptr" if decl.ptr.is_none() && !decl.ty.is_empty() => {
                    self.i += 1;
                    decl.ptr = Some(PtrAttr::default());
                }
                _ => {
                    if let (Some(ptr), Some(s)) = (&mut decl.ptr, Space::from_name(&d)) {
                        if ptr.space.is_some() || ptr.align.is_some() {
                            return Err(self.expected("a declared name"));
                        }
                        ptr.space = Some(s);
                        self.i += 1;
                    } else if decl.ty.is_empty()
                        && Space::from_name(&d).is_none()
                        && Linkage::from_name(&d).is_none()
                        && !matches!(d.as_str(), "ptr" | "v2" | "v4" | "v8")
                    {
                        decl.ty = d;
                        self.i += 1;
                    } else {
                        return Err(self.expected("a declared name"));
                    }
                }
            }
        }
        if decl.ty.is_empty() {
            return Err(self.expected("a type (`.b32`, `.u64`, `.pred`, ...)"));
        }
        Ok(decl)
    }

    fn declarator(&mut self, depth: usize) -> Result<Declarator, PtxError> {
        let name = self.ident("a declared name")?;
        let mut d = Declarator {
            name,
            range: None,
            dims: Vec::new(),
            init: None,
        };
        if self.eat_punct('<') {
            let n = self.int("a register count")?;
            d.range =
                Some(u32::try_from(n).map_err(|_| self.expected("a register count below 2^32"))?);
            self.expect_punct('>')?;
        }
        while self.eat_punct('[') {
            if self.eat_punct(']') {
                d.dims.push(None);
            } else {
                d.dims.push(Some(self.int("an array size")?));
                self.expect_punct(']')?;
            }
        }
        if self.eat_punct('=') {
            d.init = Some(self.init(depth)?);
        }
        Ok(d)
    }

    fn init(&mut self, depth: usize) -> Result<Init, PtxError> {
        if depth >= MAX_DEPTH {
            return Err(self.expected("shallower initialiser nesting"));
        }
        if self.eat_punct('{') {
            let mut items = Vec::new();
            if self.eat_punct('}') {
                return Ok(Init::List(items));
            }
            loop {
                items.push(self.init(depth + 1)?);
                if self.eat_punct('}') {
                    return Ok(Init::List(items));
                }
                if !self.eat_punct(',') {
                    return Err(self.expected("`,` or `}` in the initialiser"));
                }
            }
        }
        let mut toks = Vec::new();
        let mut parens = 0usize;
        loop {
            let tok = match self.peek() {
                Some(TokenKind::Punct(',' | ';' | '}')) | None if parens == 0 => break,
                Some(TokenKind::Int(s)) => ExprTok::Int(s.clone()),
                Some(TokenKind::Float(s)) => ExprTok::Float(s.clone()),
                Some(TokenKind::Ident(s)) => ExprTok::Ident(s.clone()),
                Some(TokenKind::Punct(c @ ('+' | '-' | '!' | '<' | '>' | '|'))) => {
                    ExprTok::Punct(*c)
                }
                Some(TokenKind::Punct('(')) => {
                    parens += 1;
                    if parens > MAX_DEPTH {
                        return Err(self.expected("shallower parentheses"));
                    }
                    ExprTok::Punct('(')
                }
                Some(TokenKind::Punct(')')) if parens > 0 => {
                    parens -= 1;
                    ExprTok::Punct(')')
                }
                _ => return Err(self.expected("a constant expression")),
            };
            toks.push(tok);
            self.i += 1;
        }
        if toks.is_empty() {
            return Err(self.expected("an initial value"));
        }
        Ok(Init::Expr(toks))
    }

    /// A declaration statement with one or more declarators and its `;`.
    fn decl_statement(&mut self) -> Result<VarDecl, PtxError> {
        let mut decl = self.decl_head()?;
        loop {
            decl.declarators.push(self.declarator(0)?);
            if self.eat_punct(';') {
                return Ok(decl);
            }
            if !self.eat_punct(',') {
                return Err(self.missing("`;`"));
            }
        }
    }

    /// Statements up to the `}` closing a scope opened at `open` (or to the
    /// end of input when `open` is `None`). Nested scopes recurse, at most
    /// [`MAX_DEPTH`] deep.
    fn statements(&mut self, depth: usize, open: Option<Pos>) -> Result<Vec<Statement>, PtxError> {
        let mut out = Vec::new();
        loop {
            let pos = self.pos();
            let Some(kind) = self.peek() else {
                return match open {
                    None => Ok(out),
                    Some(o) => Err(PtxError::syntax(
                        o.line,
                        o.column,
                        "`}` closing this scope",
                        "end of input",
                    )),
                };
            };
            match kind {
                TokenKind::Punct('}') => {
                    if open.is_none() {
                        return Err(self.expected("a statement"));
                    }
                    self.i += 1;
                    return Ok(out);
                }
                TokenKind::Punct('{') => {
                    if depth >= MAX_DEPTH {
                        return Err(self.expected("scopes nested at most 64 deep"));
                    }
                    self.i += 1;
                    let inner = self.statements(depth + 1, Some(pos))?;
                    out.push(Statement::Block(inner, pos));
                }
                TokenKind::Directive(d) => match d.as_str() {
                    "loc" | "file" => out.push(Statement::Verbatim(self.verbatim_line())),
                    "pragma" => {
                        self.i += 1;
                        out.push(Statement::Pragma(self.pragma_strings()?));
                    }
                    d if Space::from_name(d).is_some() || Linkage::from_name(d).is_some() => {
                        out.push(Statement::Decl(self.decl_statement()?));
                    }
                    _ => out.push(Statement::Verbatim(self.verbatim_until_semi(depth)?)),
                },
                TokenKind::Ident(name) => {
                    if self.peek_at(1).map(|t| &t.kind) == Some(&TokenKind::Punct(':')) {
                        out.push(Statement::Label(name.clone(), pos));
                        self.i += 2;
                    } else {
                        out.push(Statement::Instr(self.instruction(None, pos)?));
                    }
                }
                TokenKind::Punct('@') => {
                    self.i += 1;
                    let negated = self.eat_punct('!');
                    let pred = self.ident("a guard predicate")?;
                    let guard = Guard { negated, pred };
                    out.push(Statement::Instr(self.instruction(Some(guard), pos)?));
                }
                _ => return Err(self.expected("a statement")),
            }
        }
    }

    fn instruction(&mut self, guard: Option<Guard>, pos: Pos) -> Result<Instruction, PtxError> {
        let opcode = self.ident("an opcode")?;
        let mut modifiers = Vec::new();
        while let Some(t) = self.toks.get(self.i) {
            match &t.kind {
                TokenKind::Directive(m) if !t.spaced => {
                    modifiers.push(m.clone());
                    self.i += 1;
                }
                _ => break,
            }
        }
        let mut operands = Vec::new();
        if !self.eat_punct(';') {
            loop {
                operands.push(self.operand(true)?);
                if self.eat_punct(';') {
                    break;
                }
                if !self.eat_punct(',') {
                    return Err(self.missing("`,` or `;`"));
                }
            }
        }
        Ok(Instruction {
            guard,
            opcode,
            modifiers,
            operands,
            pos,
        })
    }

    /// One operand; `compound` allows vectors, lists and address lists
    /// (their elements are simple operands, which bounds the nesting).
    fn operand(&mut self, compound: bool) -> Result<Operand, PtxError> {
        match self.peek() {
            Some(TokenKind::Ident(s)) if s == "_" => {
                self.i += 1;
                Ok(Operand::Sink)
            }
            Some(TokenKind::Ident(_)) => {
                let name = self.ident("an operand")?;
                let comp = match self.toks.get(self.i) {
                    Some(Token {
                        kind: TokenKind::Directive(c),
                        spaced: false,
                        ..
                    }) => {
                        let c = c.clone();
                        self.i += 1;
                        Some(c)
                    }
                    _ => None,
                };
                if comp.is_none() && self.eat_punct('|') {
                    let second = self.ident("a predicate after `|`")?;
                    return Ok(Operand::Pipe(name, second));
                }
                Ok(Operand::Var { name, comp })
            }
            Some(TokenKind::Punct('!')) => {
                self.i += 1;
                Ok(Operand::Not(self.ident("a predicate after `!`")?))
            }
            Some(TokenKind::Punct('-')) => {
                self.i += 1;
                // Only a literal may follow, so `- - - 1` cannot recurse.
                match self.peek() {
                    Some(TokenKind::Int(_) | TokenKind::Float(_)) => match self.operand(false)? {
                        Operand::Imm { text, float, .. } => Ok(Operand::Imm {
                            text,
                            negative: true,
                            float,
                        }),
                        _ => Err(self.expected("a literal after `-`")),
                    },
                    _ => Err(self.expected("a literal after `-`")),
                }
            }
            Some(TokenKind::Int(s)) => {
                let text = s.clone();
                if int_value(&text).is_none() {
                    return Err(self.expected("an integer that fits in 64 bits"));
                }
                self.i += 1;
                Ok(Operand::Imm {
                    text,
                    negative: false,
                    float: false,
                })
            }
            Some(TokenKind::Float(s)) => {
                let text = s.clone();
                self.i += 1;
                Ok(Operand::Imm {
                    text,
                    negative: false,
                    float: true,
                })
            }
            Some(TokenKind::Punct('[')) if compound => {
                self.i += 1;
                self.address()
            }
            Some(TokenKind::Punct('{')) if compound => {
                self.i += 1;
                Ok(Operand::Vector(self.operand_list('}')?))
            }
            Some(TokenKind::Punct('(')) if compound => {
                self.i += 1;
                Ok(Operand::List(self.operand_list(')')?))
            }
            _ => Err(self.expected("an operand")),
        }
    }

    fn operand_list(&mut self, close: char) -> Result<Vec<Operand>, PtxError> {
        let mut items = Vec::new();
        if self.eat_punct(close) {
            return Ok(items);
        }
        loop {
            items.push(self.operand(false)?);
            if self.eat_punct(close) {
                return Ok(items);
            }
            if !self.eat_punct(',') {
                return Err(self.expected(&format!("`,` or `{close}`")));
            }
        }
    }

    /// After `[`: `base`, `base+off`, `base+-off`, `base-off`, `imm`, or a
    /// list `[tex, {%f1, %f2}]`.
    fn address(&mut self) -> Result<Operand, PtxError> {
        let base = match self.peek() {
            Some(TokenKind::Ident(s)) => AddrBase::Var(s.clone()),
            Some(TokenKind::Int(s)) => AddrBase::Imm(s.clone()),
            _ => return Err(self.expected("an address")),
        };
        if let AddrBase::Imm(s) = &base {
            if int_value(s).is_none() {
                return Err(self.expected("an address that fits in 64 bits"));
            }
        }
        self.i += 1;
        if self.is_punct(',') {
            let AddrBase::Var(name) = base else {
                return Err(self.expected("`]` after an absolute address"));
            };
            let mut items = vec![Operand::var(name)];
            while self.eat_punct(',') {
                items.push(match self.peek() {
                    Some(TokenKind::Punct('{')) => {
                        self.i += 1;
                        Operand::Vector(self.operand_list('}')?)
                    }
                    _ => self.operand(false)?,
                });
            }
            self.expect_punct(']')?;
            return Ok(Operand::AddrList(items));
        }
        let mut offset: i64 = 0;
        loop {
            let sign = if self.eat_punct('+') {
                if self.eat_punct('-') {
                    -1
                } else {
                    1
                }
            } else if self.eat_punct('-') {
                -1
            } else {
                break;
            };
            let v = self.int("an address offset")?;
            let v =
                i64::try_from(v).map_err(|_| self.expected("an offset that fits in 64 bits"))?;
            offset = offset
                .checked_add(sign * v)
                .ok_or_else(|| self.expected("an offset that fits in 64 bits"))?;
        }
        self.expect_punct(']')?;
        Ok(Operand::Addr { base, offset })
    }
}
