//! Round trips on every fixture present (hand-written and NVRTC-generated):
//! parse -> print -> parse gives an equal AST, for the originals and for
//! their transformed modules; transforming keeps the original entries.

mod common;

use tally_kernels::ptx::ast::*;
use tally_kernels::ptx::{
    analyze_module, parse_module, transform_module, transform_module_skipping, Variants,
};

#[test]
fn every_fixture_round_trips() {
    let fixtures = common::all_fixtures();
    assert!(fixtures.len() >= 4, "hand-written fixtures at least");
    for path in fixtures {
        let src = common::read(&path);
        let m = parse_module(&src).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let printed = m.to_string();
        let again = parse_module(&printed)
            .unwrap_or_else(|e| panic!("{} reprinted: {e}\n{printed}", path.display()));
        assert_eq!(m, again, "{}", path.display());
        // Printing is a fixed point after one round.
        assert_eq!(printed, again.to_string(), "{}", path.display());
    }
}

#[test]
fn transformed_fixtures_round_trip_and_keep_originals() {
    for path in common::all_fixtures() {
        let m = parse_module(&common::read(&path)).unwrap();
        let (t, _refused) = transform_module_skipping(&m, Variants::ALL);
        let again =
            parse_module(&t.to_string()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(t, again, "{}", path.display());
        assert_eq!(
            &t.items[..m.items.len()],
            &m.items[..],
            "{}: originals first, unchanged",
            path.display()
        );
    }
}

#[test]
fn supported_fixtures_get_all_three_variants() {
    for path in common::all_fixtures() {
        if common::is_unsupported(&path) {
            continue;
        }
        let m = parse_module(&common::read(&path)).unwrap();
        let info = analyze_module(&m);
        if info
            .entries
            .iter()
            .any(|e| e.refusal.is_some() || e.persistent_refusal.is_some())
        {
            continue; // e.g. multi_entry: one entry calls a .func that reads %ctaid
        }
        let t = transform_module(&m, Variants::ALL)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for e in &info.entries {
            for suffix in ["__tally_sliced", "__tally_ptb", "__tally_preempt"] {
                let name = format!("{}{suffix}", e.name);
                let f = t
                    .function(&name)
                    .unwrap_or_else(|| panic!("{}: missing {name}", path.display()));
                assert_eq!(f.kind, FnKind::Entry);
                let orig = m.function(&e.name).unwrap();
                let n = orig.params.as_ref().map_or(0, Vec::len);
                assert_eq!(
                    f.params.as_ref().unwrap()[..n],
                    orig.params.as_ref().unwrap()[..]
                );
                assert_eq!(f.directives, orig.directives);
            }
        }
    }
}

#[test]
fn landed_library_fixtures_transform_fully() {
    // Present once the NVRTC fixtures land; until then this checks nothing.
    for stem in [
        "gemm",
        "conv",
        "elementwise",
        "softmax",
        "layer_norm",
        "reduction",
        "attention",
        "embedding",
        "optimizer",
        "copy",
        "grid3d",
        "early_return",
        "barrier_loop",
        "shared_arrays",
    ] {
        for arch in ["sm_90", "sm_80"] {
            let path = common::fixture_dir("ptx").join(format!("{stem}.{arch}.ptx"));
            if !path.exists() {
                continue;
            }
            let m = parse_module(&common::read(&path)).unwrap();
            transform_module(&m, Variants::ALL)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
    }
}

#[test]
fn summary_reports_barriers_and_early_returns() {
    let m = parse_module(&common::handwritten("sync_early_return.ptx")).unwrap();
    let info = analyze_module(&m);
    let e = &info.entries[0];
    assert_eq!(e.name, "sync_early");
    assert!(e.uses_barriers);
    assert!(e.has_early_return);
    assert!(e.refusal.is_none() && e.persistent_refusal.is_none());
    assert_eq!(e.params.len(), 2);
    assert_eq!(e.params[0].size, Some(8));
    assert_eq!(e.params[1].size, Some(4));

    let m = parse_module(&common::handwritten("record3d.ptx")).unwrap();
    let e = &analyze_module(&m).entries[0];
    assert!(!e.uses_barriers);
    assert!(
        !e.has_early_return,
        "a branch to the final ret is not an early return"
    );

    let m = parse_module(&common::handwritten("syntax_zoo.ptx")).unwrap();
    let e = &analyze_module(&m).entries[0];
    assert!(!e.uses_barriers, "bar.warp.sync is warp-level");
    assert_eq!(e.params[1].size, Some(16));
}
