//! Tests that run the real CUDA compiler tools (NVRTC and ptxas, no GPU):
//! `scripts/test.sh` installs them with `scripts/install-cuda-tools.sh`.
//! Without them these tests fail with the tools' "not found" message,
//! which says how to install them — they never pass silently.

mod common;

use tally_gpu::cuda::{assemble, compile_to_ptx, Arch, ToolError};
use tally_kernels::build::{build_library, KernelVariant, VariantStatus};
use tally_kernels::ptx::{parse_module, transform_module, transform_module_skipping, Variants};

/// The `fixtures/cuda` kernels the transformer takes (the `unsupported_*`
/// ones it must refuse are tested elsewhere).
const TRANSFORMABLE_FIXTURES: [&str; 6] = [
    "grid3d",
    "early_return",
    "barrier_loop",
    "partial_warp_return",
    "multi_entry",
    "shared_arrays",
];

fn cuda_fixture(stem: &str) -> String {
    common::read(&common::fixture_dir("cuda").join(format!("{stem}.cu")))
}

#[test]
fn the_library_builds_in_every_variant_for_sm80_and_sm90() {
    for arch in [Arch::Sm80, Arch::Sm90] {
        let built = build_library(arch).unwrap_or_else(|e| panic!("{arch}: {e}"));
        let kernels = tally_kernels::library::kernels().unwrap();
        assert_eq!(built.rows.len(), kernels.len() * KernelVariant::ALL.len());
        for r in &built.rows {
            match &r.status {
                VariantStatus::Ok(res) => {
                    assert!(res.registers > 0, "{arch} {} {:?}", r.entry, r.variant);
                    // The library's kernels never spill, and no variant may
                    // make them.
                    assert_eq!(
                        res.spill_store_bytes + res.spill_load_bytes,
                        0,
                        "{arch} {} {:?}",
                        r.entry,
                        r.variant
                    );
                }
                other => panic!("{arch} {} {:?}: {other:?}", r.entry, r.variant),
            }
        }
        // Preemptive variants hold the broadcast task slot in shared memory.
        for r in built
            .rows
            .iter()
            .filter(|r| r.variant == KernelVariant::PreemptivePtb)
        {
            let original = built
                .rows
                .iter()
                .find(|o| o.entry == r.entry && o.variant == KernelVariant::Original)
                .unwrap();
            let (VariantStatus::Ok(p), VariantStatus::Ok(o)) = (&r.status, &original.status) else {
                unreachable!()
            };
            assert!(p.shared_bytes > o.shared_bytes, "{}", r.entry);
        }
    }
}

/// The committed golden PTX is exactly what the pinned NVRTC emits, so the
/// tool-free parser and transformer tests test real compiler output: every
/// library source (as `library::SOURCES` holds it, `prelude.cuh` prepended)
/// for sm_80 and sm_90, and the NVRTC-compiled `fixtures/cuda` kernels for
/// sm_90.
///
/// To regenerate the fixtures after changing a source, run it once with
/// `TALLY_BLESS_PTX` set (to anything):
/// `TALLY_BLESS_PTX=1 cargo test -p tally-kernels --test cuda_tools golden_ptx_matches_nvrtc`
/// writes the NVRTC output over each `fixtures/ptx/<stem>.<sm>.ptx` instead
/// of comparing; then run the tests again without it.
#[test]
fn golden_ptx_matches_nvrtc() {
    let bless = std::env::var_os("TALLY_BLESS_PTX").is_some();
    let check = |fixture: &str, ptx: String, what: &str| {
        let path = common::fixture_dir("ptx").join(fixture);
        if bless {
            std::fs::write(&path, ptx).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        } else {
            assert_eq!(
                ptx,
                common::read(&path),
                "{what}: regenerate the fixture (TALLY_BLESS_PTX=1)"
            );
        }
    };
    let mut checked = 0;
    for (file, source) in tally_kernels::library::SOURCES {
        let stem = file.trim_end_matches(".cu");
        for arch in [Arch::Sm80, Arch::Sm90] {
            let ptx = compile_to_ptx(source, file, arch).unwrap();
            check(
                &format!("{stem}.{}.ptx", arch.sm()),
                ptx,
                &format!("{file} for {arch}"),
            );
            checked += 1;
        }
    }
    for stem in TRANSFORMABLE_FIXTURES {
        let ptx = compile_to_ptx(&cuda_fixture(stem), &format!("{stem}.cu"), Arch::Sm90).unwrap();
        check(&format!("{stem}.sm_90.ptx"), ptx, &format!("{stem}.cu"));
        checked += 1;
    }
    assert_eq!(checked, 26);
}

/// CUDA C that is not in the library — 3-D grids, early returns, barriers
/// in loops, several entries, shared arrays — compiled now, transformed,
/// and assembled for both architectures.
#[test]
fn kernels_outside_the_library_transform_and_assemble() {
    for stem in TRANSFORMABLE_FIXTURES {
        for arch in [Arch::Sm80, Arch::Sm90] {
            let ptx = compile_to_ptx(&cuda_fixture(stem), stem, arch).unwrap();
            let m = parse_module(&ptx).unwrap_or_else(|e| panic!("{stem}: {e}"));
            let (t, refused) = transform_module_skipping(&m, Variants::ALL);
            // multi_entry holds one entry whose callee reads %ctaid: refused
            // by design (transforms rewrite entries only); every other entry
            // of every fixture transforms.
            if stem == "multi_entry" {
                assert_eq!(refused.len(), 1, "{refused:?}");
                assert!(refused[0].to_string().contains("%ctaid"), "{}", refused[0]);
            } else {
                assert!(refused.is_empty(), "{stem}: {refused:?}");
                transform_module(&m, Variants::ALL).unwrap();
            }
            let resources = assemble(&t.to_string(), stem, arch)
                .unwrap_or_else(|e| panic!("{stem} for {arch}: {e}"));
            let entries = resources.iter().filter(|r| r.is_entry).count();
            let originals = m
                .functions()
                .filter(|f| f.kind == tally_kernels::ptx::ast::FnKind::Entry)
                .count();
            // The original entries plus three variants of each transformed one.
            let transformed = originals - refused.len();
            assert_eq!(entries, originals + 3 * transformed, "{stem} for {arch}");
        }
    }
}

#[test]
fn nvrtc_errors_carry_the_compiler_log() {
    let bad = "extern \"C\" __global__ void k(float* x) { x[0] = undefined_name; }";
    match compile_to_ptx(bad, "bad.cu", Arch::Sm90) {
        Err(ToolError::Compile { name, log, .. }) => {
            assert_eq!(name, "bad.cu");
            assert!(log.contains("undefined_name"), "{log}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn ptxas_rejections_carry_its_log() {
    let broken = ".version 9.5\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n\tmov.u32 %r1, 1;\n\tret;\n}\n";
    match assemble(broken, "broken.ptx", Arch::Sm90) {
        Err(ToolError::Assemble { log, .. }) => assert!(log.contains("%r1"), "{log}"),
        other => panic!("{other:?}"),
    }
}
