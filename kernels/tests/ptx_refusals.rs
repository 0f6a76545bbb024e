//! Refusals: constructs the transforms cannot support are reported per
//! entry with the construct and its line, on the NVRTC fixtures once they
//! land and on hand-written equivalents now.

mod common;

use tally_kernels::ptx::{analyze_module, parse_module, transform_module, PtxError, Variants};

const HEADER: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

/// Builds a module with one entry `k` whose body is `body`, preceded by
/// `pre` module items and followed by `directives`.
fn module(pre: &str, directives: &str, body: &str) -> String {
    assert!(pre.is_empty() || pre.ends_with('\n'));
    format!("{HEADER}{pre}.visible .entry k()\n{directives}{{\n{body}\n}}\n")
}

fn refusal(src: &str, v: Variants) -> (String, String, u32) {
    let m = parse_module(src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    match transform_module(&m, v) {
        Err(PtxError::Unsupported {
            entry,
            construct,
            line,
            ..
        }) => (entry, construct, line),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn refuses_cluster_grid_sync_and_dynamic_parallelism() {
    // (pre, directives, body, construct named, text on the reported line)
    let cases: &[(&str, &str, &str, &str, &str)] = &[
        ("", "", "\t.reg .b32 %r1;\n\tmov.u32 %r1, %clusterid.x;\n\tret;", "%clusterid", "%clusterid"),
        ("", "", "\t.reg .b32 %r1;\n\tmov.u32 %r1, %cluster_ctarank;\n\tret;", "%cluster_ctarank", "%cluster_ctarank"),
        ("", "", "\t.reg .pred %p;\n\tmov.pred %p, %is_explicit_cluster;\n\tret;", "%is_explicit_cluster", "%is_explicit"),
        ("", ".reqnctapercluster 2, 1, 1\n", "\tret;", ".reqnctapercluster", ".reqnctapercluster"),
        ("", ".explicitcluster\n", "\tret;", ".explicitcluster", ".explicitcluster"),
        ("", ".maxclusterrank 4\n", "\tret;", ".maxclusterrank", ".maxclusterrank"),
        ("", "", "\tbarrier.cluster.arrive;\n\tbarrier.cluster.wait;\n\tret;", "barrier.cluster", "barrier.cluster.arrive"),
        ("", "", "\t.reg .b32 %r1;\n\tmov.u32 %r1, %envreg2;\n\tret;", "%envreg2", "%envreg2"),
        ("", "", "\t.reg .b64 %rd1;\n\tmov.u64 %rd1, %gridid;\n\tret;", "%gridid", "%gridid"),
        ("", "", "\tgriddepcontrol.wait;\n\tret;", "griddepcontrol", "griddepcontrol"),
        (
            ".extern .func (.param .b32 r) cudaLaunchDeviceV2(.param .b64 a, .param .b64 b);\n",
            "",
            "\t.param .b32 r;\n\t.param .b64 a;\n\t.param .b64 b;\n\tcall.uni (r), cudaLaunchDeviceV2, (a, b);\n\tret;",
            "cudaLaunchDeviceV2",
            "call.uni",
        ),
        (
            ".func (.param .b32 r) tid() {\n\t.reg .b32 %r1;\n\tmov.u32 %r1, %ctaid.x;\n\tst.param.b32 [r], %r1;\n\tret;\n}\n",
            "",
            "\t.param .b32 r;\n\tcall.uni (r), tid, ();\n\tret;",
            "inside .func `tid`",
            "%ctaid.x",
        ),
    ];
    for (pre, dirs, body, construct, needle) in cases {
        let src = module(pre, dirs, body);
        let (entry, got, got_line) = refusal(&src, Variants::SLICED);
        assert_eq!(entry, "k");
        assert!(got.contains(construct), "{got} should name {construct}");
        let expected = src.lines().position(|l| l.contains(needle)).unwrap() as u32 + 1;
        assert_eq!(got_line, expected, "{construct}: {got}\n{src}");
    }
}

#[test]
fn ctaid_in_func_message_says_why() {
    let src = module(
        ".func (.param .b32 r) tid() {\n\t.reg .b32 %r1;\n\tmov.u32 %r1, %nctaid.y;\n\tst.param.b32 [r], %r1;\n\tret;\n}\n",
        "",
        "\t.param .b32 r;\n\tcall.uni (r), tid, ();\n\tret;",
    );
    let m = parse_module(&src).unwrap();
    let e = transform_module(&m, Variants::ALL).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("%nctaid.y") && msg.contains("only rewrites entries"),
        "{msg}"
    );
}

#[test]
fn refuses_unsafe_barriers_for_persistent_variants_only() {
    let cases = [
        ("\tbar.sync 1;\n\tret;", "bar.sync 1"),
        ("\tbar.sync 0, 64;\n\tret;", "bar.sync 0, 64"),
        (
            "\tbarrier.sync.aligned 2;\n\tret;",
            "barrier.sync.aligned 2",
        ),
        ("\tbar.arrive 0, 64;\n\tret;", "bar.arrive"),
        (
            "\t.reg .b32 %r1;\n\t.reg .pred %p;\n\tbar.red.popc.u32 %r1, 0, %p;\n\tret;",
            "bar.red",
        ),
        (
            "\t.reg .pred %p;\n\tbarrier.red.or.pred %p, 0, %p;\n\tret;",
            "barrier.red",
        ),
        ("\t.reg .b32 %r1;\n\tbar.sync %r1;\n\tret;", "bar.sync %r1"),
    ];
    for (body, construct) in cases {
        let src = module("", "", body);
        for v in [Variants::PTB, Variants::PREEMPT, Variants::ALL] {
            let (_, got, line) = refusal(&src, v);
            assert!(got.contains(construct), "{got} should name {construct}");
            assert!(line >= 5);
        }
        let m = parse_module(&src).unwrap();
        transform_module(&m, Variants::SLICED)
            .unwrap_or_else(|e| panic!("sliced needs no pass: {e}"));
        let info = analyze_module(&m);
        assert!(info.entries[0].refusal.is_none());
        assert!(info.entries[0].persistent_refusal.is_some());
    }
}

#[test]
fn refuses_barriers_and_exit_in_callees_for_persistent_variants() {
    for (func_body, what) in [("\tbar.sync 0;\n\tret;", "bar.sync"), ("\texit;", "exit")] {
        let src = module(
            &format!(".func f()\n{{\n{func_body}\n}}\n"),
            "",
            "\tcall.uni f, ();\n\tret;",
        );
        let (_, got, _) = refusal(&src, Variants::PTB);
        assert!(got.contains(what) && got.contains("`f`"), "{got}");
        transform_module(&parse_module(&src).unwrap(), Variants::SLICED).unwrap();
    }
}

#[test]
fn accepts_syncthreads_spellings() {
    let body = "\tbar.sync 0;\n\tbar.cta.sync 0;\n\tbarrier.sync 0;\n\tbarrier.sync.aligned 0;\n\tbar.sync 0x0;\n\tbar.warp.sync -1;\n\tret;";
    let m = parse_module(&module("", "", body)).unwrap();
    let t = transform_module(&m, Variants::ALL).unwrap();
    let ptb = t.function("k__tally_ptb").unwrap().to_string();
    assert!(
        !ptb.contains("bar.sync 0") && !ptb.contains("barrier.sync.aligned"),
        "{ptb}"
    );
    assert!(ptb.contains("bar.warp.sync"), "warp barrier untouched");
}

#[test]
fn unsupported_fixtures_are_refused_naming_construct_and_line() {
    let expectations = [
        ("unsupported_cluster", "cluster"),
        ("unsupported_grid_sync", "%envreg"),
        ("unsupported_dynamic_parallelism", "dynamic parallelism"),
    ];
    for path in common::all_fixtures() {
        if !common::is_unsupported(&path) {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let src = common::read(&path);
        let m = parse_module(&src).unwrap();
        let Err(e) = transform_module(&m, Variants::ALL) else {
            panic!("{name}: transformed, expected a refusal")
        };
        let PtxError::Unsupported {
            construct, line, ..
        } = &e
        else {
            panic!("{name}: {e:?}")
        };
        if let Some((_, word)) = expectations.iter().find(|(stem, _)| name.starts_with(stem)) {
            assert!(construct.contains(word), "{name}: {construct}");
        }
        // The reported line holds the construct.
        // (A call spans several lines; its position is its first line.)
        let text: String = src
            .lines()
            .skip((*line as usize).saturating_sub(1))
            .take(4)
            .collect();
        let key = construct.split('`').nth(1).unwrap_or("");
        let key = key.trim_start_matches('.');
        assert!(
            text.contains(key.split('.').next().unwrap_or(key)),
            "{name}: line {line} `{text}` vs {construct}"
        );
    }
}
