//! Lexer and parser unit tests, including the positions reported for
//! malformed input.

use tally_kernels::ptx::ast::*;
use tally_kernels::ptx::lexer::{int_value, tokenize, TokenKind};
use tally_kernels::ptx::{parse_module, parse_statements, PtxError};

fn kinds(src: &str) -> Vec<TokenKind> {
    tokenize(src)
        .expect("lexes")
        .into_iter()
        .map(|t| t.kind)
        .collect()
}

fn err_pos(src: &str) -> (u32, u32, String) {
    match parse_module(src) {
        Err(e @ PtxError::Syntax { .. }) => {
            let (l, c) = e.position().expect("has position");
            (l, c, e.to_string())
        }
        other => panic!("expected a syntax error, got {other:?}"),
    }
}

const HEADER: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

#[test]
fn lexes_identifiers_of_every_shape() {
    let k = kinds("%r12 %ctaid $L__BB0_3 __cudart_x _Z3fooPf_param_0 _ foo$1");
    let names: Vec<_> = k
        .iter()
        .map(|t| match t {
            TokenKind::Ident(s) => s.as_str(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        names,
        [
            "%r12",
            "%ctaid",
            "$L__BB0_3",
            "__cudart_x",
            "_Z3fooPf_param_0",
            "_",
            "foo$1"
        ]
    );
}

#[test]
fn lexes_dotted_parts_with_adjacency() {
    let toks = tokenize("ld.global.u32 .reg %ctaid.x").unwrap();
    assert_eq!(toks[0].kind, TokenKind::Ident("ld".into()));
    assert_eq!(toks[1].kind, TokenKind::Directive("global".into()));
    assert!(!toks[1].spaced);
    assert!(toks[3].spaced, ".reg follows a space");
    assert_eq!(toks[5].kind, TokenKind::Directive("x".into()));
    assert!(!toks[5].spaced);
}

#[test]
fn lexes_numbers() {
    assert_eq!(
        kinds("12 0x1F 017 0b101 4U 0f3F800000 0d3FF0000000000000 1.5 2e3 0"),
        vec![
            TokenKind::Int("12".into()),
            TokenKind::Int("0x1F".into()),
            TokenKind::Int("017".into()),
            TokenKind::Int("0b101".into()),
            TokenKind::Int("4U".into()),
            TokenKind::Float("0f3F800000".into()),
            TokenKind::Float("0d3FF0000000000000".into()),
            TokenKind::Float("1.5".into()),
            TokenKind::Float("2e3".into()),
            TokenKind::Int("0".into()),
        ]
    );
    assert_eq!(int_value("0x1F"), Some(31));
    assert_eq!(int_value("017"), Some(15));
    assert_eq!(int_value("0b101"), Some(5));
    assert_eq!(int_value("4U"), Some(4));
    assert_eq!(int_value("0"), Some(0));
    assert_eq!(int_value("99999999999999999999999"), None);
}

#[test]
fn lexes_strings_punctuation_and_skips_comments() {
    let k =
        kinds("\"nounroll\" { } ( ) [ ] , ; : @ ! + - < > | = // tail\n/* block\n comment */ x");
    assert_eq!(k[0], TokenKind::Str("nounroll".into()));
    let puncts: String = k[1..18]
        .iter()
        .map(|t| match t {
            TokenKind::Punct(c) => *c,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(puncts, "{}()[],;:@!+-<>|=");
    assert_eq!(k[18], TokenKind::Ident("x".into()));
    assert_eq!(k.len(), 19);
}

#[test]
fn token_positions_are_line_and_column() {
    let toks = tokenize("a\n  /* c */ b\n\tc").unwrap();
    assert_eq!((toks[0].line, toks[0].column), (1, 1));
    assert_eq!((toks[1].line, toks[1].column), (2, 11));
    assert_eq!((toks[2].line, toks[2].column), (3, 2));
}

#[test]
fn lexer_errors_have_positions() {
    for (src, line, col) in [
        ("a\n  #", 2, 3),
        ("x 0f3F80", 1, 3),
        ("\n\"open", 2, 1),
        ("ab /* never closed", 1, 4),
        ("089", 1, 1),
        ("12abc", 1, 1),
        ("% x", 1, 1),
    ] {
        let e = tokenize(src).expect_err(src);
        assert_eq!(e.position(), Some((line, col)), "{src:?}: {e}");
    }
}

#[test]
fn parses_header_and_module_variables() {
    let src = format!(
        "{HEADER}.global .align 4 .u32 c[4] = {{1, 2, 3, 4}};\n.extern .shared .align 16 .b8 dyn[];\n\
         .const .align 4 .f32 h = 0f3F000000;\n.weak .global .s32 w = -7;\n.global .u32 m[2][3];\n"
    );
    let m = parse_module(&src).unwrap();
    assert_eq!(m.version.as_deref(), Some("8.0"));
    assert_eq!(m.target, ["sm_80"]);
    assert_eq!(m.address_size, Some(64));
    let vars: Vec<&VarDecl> = m
        .items
        .iter()
        .map(|i| match i {
            Item::Var(v) => v,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(vars[0].space, Space::Global);
    assert_eq!(vars[0].align, Some(4));
    assert_eq!(vars[0].declarators[0].dims, [Some(4)]);
    assert!(matches!(&vars[0].declarators[0].init, Some(Init::List(l)) if l.len() == 4));
    assert_eq!(vars[1].linkage, Some(Linkage::Extern));
    assert_eq!(vars[1].space, Space::Shared);
    assert_eq!(vars[1].declarators[0].dims, [None]);
    assert_eq!(vars[3].linkage, Some(Linkage::Weak));
    assert_eq!(vars[4].declarators[0].dims, [Some(2), Some(3)]);
}

#[test]
fn parses_functions_params_and_directives() {
    let src = format!(
        "{HEADER}.func (.param .b32 r) f(.param .b32 a)\n{{\n\tret;\n}}\n\
         .visible .entry k(\n\t.param .u64 .ptr .global .align 1 k_p0,\n\t.param .align 8 .b8 k_p1[16]\n)\n\
         .maxntid 128, 1, 1\n.minnctapersm 2\n.maxnreg 32\n.pragma \"nounroll\";\n{{\n\tret;\n}}\n\
         .extern .func g(.param .b32 x);\n"
    );
    let m = parse_module(&src).unwrap();
    let f = m.function("f").unwrap();
    assert_eq!(f.kind, FnKind::Func);
    assert_eq!(f.returns.as_ref().unwrap()[0].declarators[0].name, "r");
    let k = m.function("k").unwrap();
    assert_eq!(k.linkage, Some(Linkage::Visible));
    let params = k.params.as_ref().unwrap();
    assert_eq!(
        params[0].ptr,
        Some(PtrAttr {
            space: Some(Space::Global),
            align: Some(1)
        })
    );
    assert_eq!(params[1].align, Some(8));
    assert_eq!(params[1].declarators[0].dims, [Some(16)]);
    assert_eq!(k.directives.len(), 4);
    assert!(
        matches!(&k.directives[0], FnDirective::Perf { name, args, .. } if name == "maxntid" && args == &[128, 1, 1])
    );
    assert!(matches!(&k.directives[3], FnDirective::Pragma(s) if s == &["nounroll"]));
    let g = m.function("g").unwrap();
    assert_eq!(g.linkage, Some(Linkage::Extern));
    assert!(g.body.is_none());
}

#[test]
fn parses_statements_and_operands() {
    let body = parse_statements(
        ".reg .b32 %r<12>;\n.reg .pred %p<3>;\n.reg .v4 .f32 %v;\n.shared .align 4 .b8 t[64];\n.local .b8 d[8];\n\
         $L__BB0_3:\n@!%p1 ld.global.u32 %r1, [%rd1+8];\n@%p2 st.shared.u32 [t+-4], %r2;\n\
         mov.u32 %r3, %ctaid.x;\nld.global.v4.u32 {%r4, _, %r5, _}, [%rd2];\n\
         shfl.sync.down.b32 %r6|%p1, %r7, 1, 31, -1;\ncall.uni (retval0), f, (param0, param1);\n\
         { .reg .pred p; { setp.eq.u32 p, %r1, 0; } }\n.loc 1 2 3\n.pragma \"nounroll\";\n\
         tex.2d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [tex0, {%r1, %r2}];\nret;",
    )
    .unwrap();
    assert!(
        matches!(&body[0], Statement::Decl(d) if d.declarators[0].range == Some(12) && d.ty == "b32")
    );
    assert!(matches!(&body[2], Statement::Decl(d) if d.vector == Some(4)));
    assert!(matches!(&body[5], Statement::Label(l, _) if l == "$L__BB0_3"));
    let Statement::Instr(ld) = &body[6] else {
        panic!()
    };
    assert_eq!(
        ld.guard,
        Some(Guard {
            negated: true,
            pred: "%p1".into()
        })
    );
    assert_eq!(ld.opcode, "ld");
    assert_eq!(ld.modifiers, ["global", "u32"]);
    assert_eq!(
        ld.operands[1],
        Operand::Addr {
            base: AddrBase::Var("%rd1".into()),
            offset: 8
        }
    );
    let Statement::Instr(st) = &body[7] else {
        panic!()
    };
    assert_eq!(
        st.operands[0],
        Operand::Addr {
            base: AddrBase::Var("t".into()),
            offset: -4
        }
    );
    let Statement::Instr(mov) = &body[8] else {
        panic!()
    };
    assert_eq!(
        mov.operands[1],
        Operand::Var {
            name: "%ctaid".into(),
            comp: Some("x".into())
        }
    );
    let Statement::Instr(v) = &body[9] else {
        panic!()
    };
    assert!(matches!(&v.operands[0], Operand::Vector(items) if items[1] == Operand::Sink));
    let Statement::Instr(sh) = &body[10] else {
        panic!()
    };
    assert_eq!(sh.operands[0], Operand::Pipe("%r6".into(), "%p1".into()));
    assert!(matches!(
        &sh.operands[4],
        Operand::Imm { negative: true, .. }
    ));
    let Statement::Instr(call) = &body[11] else {
        panic!()
    };
    assert!(matches!(&call.operands[2], Operand::List(a) if a.len() == 2));
    assert!(
        matches!(&body[12], Statement::Block(inner, _) if matches!(&inner[1], Statement::Block(..)))
    );
    assert!(matches!(&body[13], Statement::Verbatim(v) if v.text == ".loc 1 2 3"));
    assert!(matches!(&body[14], Statement::Pragma(_)));
    let Statement::Instr(tex) = &body[15] else {
        panic!()
    };
    assert!(matches!(&tex.operands[1], Operand::AddrList(items) if items.len() == 2));
}

#[test]
fn missing_semicolon_points_past_previous_token() {
    let src = format!("{HEADER}.entry k()\n{{\n\tmov.u32 %r1, %r2\n\tret;\n}}\n");
    let (l, c, msg) = err_pos(&src);
    assert_eq!((l, c), (6, 18), "{msg}");
    assert!(msg.contains("`;`"), "{msg}");
}

#[test]
fn unbalanced_braces_point_at_the_open_brace() {
    let src = format!("{HEADER}.entry k()\n{{\n\t{{\n\tret;\n}}\n");
    let (l, c, msg) = err_pos(&src);
    assert_eq!((l, c), (5, 1), "{msg}");
    assert!(msg.contains("`}`"), "{msg}");
    // A stray closing brace at module level.
    let (l, c, _) = err_pos(&format!("{HEADER}}}\n"));
    assert_eq!((l, c), (4, 1));
}

#[test]
fn bad_register_declaration_is_located() {
    let src = format!("{HEADER}.entry k()\n{{\n\t.reg .b32 %r<;\n}}\n");
    let (l, c, msg) = err_pos(&src);
    assert_eq!((l, c), (6, 15), "{msg}");
    assert!(msg.contains("register count"), "{msg}");
    let (l, c, msg) = err_pos(&format!("{HEADER}.entry k()\n{{\n\t.reg %r1;\n}}\n"));
    assert_eq!((l, c), (6, 7), "{msg}");
}

#[test]
fn unknown_token_is_located() {
    let src = format!("{HEADER}.entry k()\n{{\n\tadd.u32 %r1, %r2, #3;\n}}\n");
    let (l, c, msg) = err_pos(&src);
    assert_eq!((l, c), (6, 20), "{msg}");
}

#[test]
fn other_malformed_inputs_are_errors_not_panics() {
    for src in [
        ".version",
        ".version 8.0 .version 8.0",
        ".target",
        ".entry",
        ".entry k(",
        ".entry k(.param .u32)",
        ".entry k() { @ }",
        ".entry k() { ld.global.u32 %r1, [%r2+; }",
        ".entry k() { mov.u32 %r1, - %r2; }",
        ".global .u32 x = ;",
        ".global .u32 x = {1, 2",
        ".section .debug { ",
        "foo",
        ".entry k() { ld [99999999999999999999999]; }",
    ] {
        assert!(parse_module(src).is_err(), "{src:?}");
    }
}

#[test]
fn deep_nesting_is_capped() {
    let deep = format!(
        "{HEADER}.entry k()\n{{{}{}}}",
        "{".repeat(10_000),
        "}".repeat(10_000)
    );
    let e = parse_module(&deep).expect_err("too deep");
    assert!(e.to_string().contains("nested"), "{e}");
    let ok = format!(
        "{HEADER}.entry k()\n{{{} ret; {}}}",
        "{".repeat(20),
        "}".repeat(20)
    );
    parse_module(&ok).expect("moderate nesting is fine");
    let init = format!(
        "{HEADER}.global .u32 x[1] = {}1{};",
        "{".repeat(10_000),
        "}".repeat(10_000)
    );
    assert!(parse_module(&init).is_err());
}
