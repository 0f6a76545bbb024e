//! The PTX module AST: header, module-level declarations, functions and
//! their statements. Texts (types, literals, names) are kept as written so
//! printing reproduces the module; source positions ride along as [`Pos`].

/// A source position. Positions are metadata, not meaning: every `Pos`
/// compares equal to every other, so a parse -> print -> parse round trip
/// yields an equal AST even though the printer lays text out afresh.
#[derive(Debug, Clone, Copy, Default)]
pub struct Pos {
    pub line: u32,
    pub column: u32,
}

impl PartialEq for Pos {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for Pos {}

/// A whole `.ptx` file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Module {
    /// `.version 9.5` as written (`"9.5"`).
    pub version: Option<String>,
    /// `.target sm_90, debug` -> `["sm_90", "debug"]`.
    pub target: Vec<String>,
    /// `.address_size 64`.
    pub address_size: Option<u32>,
    pub items: Vec<Item>,
}

/// One module-level item, in source order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    Var(VarDecl),
    Function(Function),
    /// `.file`, `.section`, module `.pragma`, `.alias` ...: kept as written.
    Verbatim(Verbatim),
}

/// Source text the transforms never look inside, kept byte for byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verbatim {
    pub text: String,
    pub pos: Pos,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Linkage {
    Visible,
    Extern,
    Weak,
    Common,
}

/// A state space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Space {
    Reg,
    Sreg,
    Const,
    Global,
    Local,
    Param,
    Shared,
    Tex,
}

/// `.ptr [.space] [.align N]` on a kernel pointer parameter.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PtrAttr {
    pub space: Option<Space>,
    pub align: Option<u64>,
}

/// A variable, register or parameter declaration:
/// `[linkage] space [.align N] [.vN] type [.ptr ...] declarator, ...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VarDecl {
    pub linkage: Option<Linkage>,
    pub space: Space,
    pub align: Option<u64>,
    /// `.v2` / `.v4` / `.v8` -> 2 / 4 / 8.
    pub vector: Option<u32>,
    /// Type without the dot: `"b32"`, `"pred"`, `"f16x2"`, `"texref"`.
    pub ty: String,
    pub ptr: Option<PtrAttr>,
    pub declarators: Vec<Declarator>,
    pub pos: Pos,
}

/// One declared name: `%r<12>`, `tile[1024]`, `dyn[]`, `x = 0f3F800000`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declarator {
    pub name: String,
    /// `%r<12>` declares `%r0` .. `%r11`.
    pub range: Option<u32>,
    /// Array dimensions; `None` is an unsized `[]`.
    pub dims: Vec<Option<u64>>,
    pub init: Option<Init>,
}

/// A variable initialiser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Init {
    /// A constant expression, as tokens: `0f40000000`, `- 1`, `generic ( x )`.
    Expr(Vec<ExprTok>),
    /// `{ a, b, { c } }`.
    List(Vec<Init>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExprTok {
    Int(String),
    Float(String),
    Ident(String),
    Punct(char),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FnKind {
    Entry,
    Func,
}

/// A `.entry` kernel or `.func` device function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    pub linkage: Option<Linkage>,
    pub kind: FnKind,
    /// `.func (.param .b32 func_retval0) f(...)`; `None` when absent.
    pub returns: Option<Vec<VarDecl>>,
    pub name: String,
    /// `None` when the parameter list is omitted (`.func f;`).
    pub params: Option<Vec<VarDecl>>,
    pub directives: Vec<FnDirective>,
    /// `None` for a declaration (`.extern .func f(...);`).
    pub body: Option<Vec<Statement>>,
    pub pos: Pos,
}

/// What sits between a function's parameters and its body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FnDirective {
    /// `.maxntid 256, 1, 1`, `.minnctapersm 2`, `.noreturn`,
    /// `.explicitcluster`, `.reqnctapercluster 2, 1, 1` ...
    Perf {
        name: String,
        args: Vec<u64>,
        pos: Pos,
    },
    /// `.pragma "nounroll";`
    Pragma(Vec<String>),
}

/// One statement of a function body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Statement {
    Decl(VarDecl),
    Label(String, Pos),
    Instr(Instruction),
    /// A nested `{ ... }` scope (inline asm and call sequences emit them).
    Block(Vec<Statement>, Pos),
    /// `.pragma "nounroll";`
    Pragma(Vec<String>),
    /// `.loc`, `.file`, `.callprototype`, ...: kept as written.
    Verbatim(Verbatim),
}

/// `@!%p1 ld.global.u32 %r1, [%rd1+8];`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instruction {
    pub guard: Option<Guard>,
    /// The opcode without modifiers: `"ld"`.
    pub opcode: String,
    /// Dotted modifiers without dots, in order: `["global", "u32"]`.
    pub modifiers: Vec<String>,
    pub operands: Vec<Operand>,
    pub pos: Pos,
}

/// `@%p` (negated: false) or `@!%p` (negated: true).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guard {
    pub negated: bool,
    pub pred: String,
}

/// An instruction operand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operand {
    /// A register, special register or symbol, with an optional component:
    /// `%r1`, `%ctaid.x` (`comp: Some("x")`), `$L__BB0_3`, `param0`.
    Var { name: String, comp: Option<String> },
    /// Integer or float literal text; `negative` for a leading `-`.
    Imm {
        text: String,
        negative: bool,
        float: bool,
    },
    /// `[base+offset]`, `[base]`, `[8]`.
    Addr { base: AddrBase, offset: i64 },
    /// Brackets holding a list, as in texture fetches: `[tex, {%f1, %f2}]`.
    AddrList(Vec<Operand>),
    /// `{%f1, %f2}`.
    Vector(Vec<Operand>),
    /// Call argument or return lists: `(param0, param1)`.
    List(Vec<Operand>),
    /// The `_` sink.
    Sink,
    /// `!%p` (negated predicate operand).
    Not(String),
    /// `%r24|%p2` (value and predicate destinations of `shfl`, `setp`).
    Pipe(String, String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AddrBase {
    Var(String),
    /// An absolute address literal, as written.
    Imm(String),
}

impl Space {
    pub fn name(self) -> &'static str {
        match self {
            Space::Reg => "reg",
            Space::Sreg => "sreg",
            Space::Const => "const",
            Space::Global => "global",
            Space::Local => "local",
            Space::Param => "param",
            Space::Shared => "shared",
            Space::Tex => "tex",
        }
    }

    pub fn from_name(s: &str) -> Option<Space> {
        Some(match s {
            "reg" => Space::Reg,
            "sreg" => Space::Sreg,
            "const" => Space::Const,
            "global" => Space::Global,
            "local" => Space::Local,
            "param" => Space::Param,
            "shared" => Space::Shared,
            "tex" => Space::Tex,
            _ => return None,
        })
    }
}

impl Linkage {
    pub fn name(self) -> &'static str {
        match self {
            Linkage::Visible => "visible",
            Linkage::Extern => "extern",
            Linkage::Weak => "weak",
            Linkage::Common => "common",
        }
    }

    pub fn from_name(s: &str) -> Option<Linkage> {
        Some(match s {
            "visible" => Linkage::Visible,
            "extern" => Linkage::Extern,
            "weak" => Linkage::Weak,
            "common" => Linkage::Common,
            _ => return None,
        })
    }
}

impl Module {
    /// All functions, in source order.
    pub fn functions(&self) -> impl Iterator<Item = &Function> {
        self.items.iter().filter_map(|i| match i {
            Item::Function(f) => Some(f),
            _ => None,
        })
    }

    /// The function named `name`, if any.
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions().find(|f| f.name == name)
    }
}

impl Instruction {
    /// `opcode.mod1.mod2`, as written.
    pub fn full_opcode(&self) -> String {
        let mut s = self.opcode.clone();
        for m in &self.modifiers {
            s.push('.');
            s.push_str(m);
        }
        s
    }

    pub fn has_modifier(&self, m: &str) -> bool {
        self.modifiers.iter().any(|x| x == m)
    }
}

impl Operand {
    /// A plain register or symbol operand without component.
    pub fn var(name: impl Into<String>) -> Operand {
        Operand::Var {
            name: name.into(),
            comp: None,
        }
    }
}
