//! Every kernel of every zoo model has a library stand-in for the CUDA
//! backend, and the stand-in does the kernel's work: it moves the kernel's
//! compulsory DRAM bytes and, for the tiled products (GEMMs, implicit-GEMM
//! convolutions, attention), does its FLOPs.

use std::collections::HashMap;

use tally_gpu::cuda::{assemble, compile_to_ptx, locate_nvrtc, locate_ptxas, Arch};
use tally_gpu::{GpuSpec, KernelKind, Occupancy};
use tally_kernels::{stand_in, KernelResources};
use tally_profiler::model::ParamsOverride;
use tally_profiler::zoo;

/// Registers and static shared memory of every library entry for sm_90,
/// from ptxas when it is installed, else a generous 128 registers.
fn entry_resources() -> HashMap<String, (u32, u32)> {
    let mut out = HashMap::new();
    if locate_nvrtc().is_err() || locate_ptxas().is_err() {
        eprintln!("NVRTC / ptxas not installed: assuming 128 registers per thread");
        return out;
    }
    for (file, source) in tally_kernels::library::SOURCES {
        let ptx = compile_to_ptx(source, file, Arch::Sm90).expect("compiles");
        for r in assemble(&ptx, file, Arch::Sm90).expect("assembles") {
            out.insert(r.name, (r.registers, r.shared_bytes));
        }
    }
    out
}

/// Every stand-in launches on an H200 (the device the GPU check runs on):
/// grid within limits, occupancy of at least one block per SM with the
/// entry's real registers and shared memory; and every kernel survives the
/// trip to the `--counters ncu` child process unchanged.
#[test]
fn every_zoo_stand_in_launches_on_an_h200() {
    let h200 = GpuSpec::preset("h200").expect("preset");
    let resources = entry_resources();
    // The FP32 variants too (FFMA products, TF32 convolutions).
    let fp32 = [
        "resnet50:train-fp32@8",
        "bert-base:train-fp32@8",
        "pointnet:train-fp32@8",
    ];
    for name in zoo::NAMES.iter().copied().chain(fp32) {
        let model = zoo::build(name, &ParamsOverride::default()).expect("zoo model");
        for (k, _) in model.unique_kernels() {
            let s = stand_in(&k).expect("a stand-in");
            // `--counters ncu` hands the kernel to its child as TOML.
            let text = toml::to_string(&k).expect("serialises");
            let back: tally_gpu::KernelSpec = toml::from_str(&text).expect("parses");
            assert_eq!(back, k, "{name} {}", k.name);
            let (regs, smem) = resources.get(&s.launch.entry).copied().unwrap_or((128, 0));
            let launched = s.launched(regs, smem);
            launched
                .validate()
                .unwrap_or_else(|e| panic!("{name} {}: {e}", k.name));
            let occ = Occupancy::of(&launched, &h200)
                .unwrap_or_else(|e| panic!("{name} {} -> {}: {e}", k.name, s.launch.entry));
            assert!(occ.blocks_per_sm >= 1);
        }
    }
}

/// Stand-ins known to miss their kernel's bytes by more than 1.6x, for the
/// library to fix (tally-kernels `standin.rs`): a one-row layer norm (the
/// batch-1 decode steps of `llama2-7b`, 24 KB, launch-bound) moves 2x; the
/// batched 2500x3x3 transform of PointNet's input T-Net, sent to the GEMV
/// stand-in, moves half its bytes.
const KNOWN_GAPS: [&str; 2] = [
    "input_layernorm/layer_norm_fwd -> layer_norm_f16 bytes x2.000",
    "feat.stn.apply/gemv_f16_m3 -> gemv_f16",
];

#[test]
fn every_zoo_kernel_has_a_stand_in_that_does_its_work() {
    let mut worst: Vec<(f64, String)> = Vec::new();
    let mut kernels = 0;
    for name in zoo::NAMES {
        let model = zoo::build(name, &ParamsOverride::default()).expect("zoo model");
        for (k, _) in model.unique_kernels() {
            kernels += 1;
            let s = stand_in(&k).unwrap_or_else(|e| panic!("{name}: {e}"));
            let bytes = k.memory.compulsory_bytes();
            let byte_ratio = s.bytes / bytes;
            let tiled = s.flops > 0.0
                && matches!(
                    k.kind,
                    KernelKind::Gemm | KernelKind::Conv | KernelKind::Attention
                )
                && s.launch.entry != "gemv_f16"
                && s.launch.entry != "conv2d_depthwise_f16";
            let flop_ratio = if tiled {
                s.flops / k.work.total_flops()
            } else {
                1.0
            };
            let off = byte_ratio.ln().abs().max(flop_ratio.ln().abs());
            worst.push((
                off,
                format!(
                    "{name} {} -> {} bytes x{byte_ratio:.3} flops x{flop_ratio:.3}",
                    k.name, s.launch.entry
                ),
            ));
        }
    }
    worst.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (_, line) in worst.iter().take(12) {
        println!("{line}");
    }
    println!("{kernels} kernels");
    assert!(kernels > 100, "{kernels}");
    // FLOPs and bytes within 25 % for all but a handful of kernels: the
    // FP32 products whose traffic is below what any product of their FLOPs
    // moves (a depthwise weight gradient's long, thin reduction), where the
    // stand-in is the squarest product of those FLOPs (measured: 1 kernel,
    // at 1.5x the bytes) and none beyond 1.6x, except the known gaps below.
    let (off, line) = worst
        .iter()
        .find(|(_, line)| !KNOWN_GAPS.iter().any(|g| line.contains(g)))
        .expect("kernels");
    assert!(*off < 1.6f64.ln(), "{line}");
    let outside = worst.iter().filter(|(o, _)| *o >= 1.25f64.ln()).count();
    assert!(
        outside * 100 <= kernels,
        "{outside} of {kernels} kernels off by 25 % or more"
    );
}

/// `--kernel-resources`: a kernel takes its stand-in's entry's launch from
/// `resources.json` (block size, registers, static shared memory) with the
/// same number of threads; a kernel whose entry has no row is left alone;
/// an unknown entry is an error naming the file and row.
#[test]
fn kernel_resources_apply_the_stand_in_entrys_launch_and_keep_the_threads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("resources.json");
    std::fs::write(
        &path,
        r#"[{"entry":"gemm_f16_mma","file":"gemm.cu","kind":"gemm","variant":"original","status":"ok","registers":83,"shared_bytes":10240},
            {"entry":"gemm_f16_mma","file":"gemm.cu","kind":"gemm","variant":"ptb","status":"ok","registers":92,"shared_bytes":10244}]"#,
    )
    .unwrap();
    let r = KernelResources::read(&path).unwrap();
    let model = zoo::resolve_model("bert-base", &ParamsOverride::default()).unwrap();
    let (mut k, _) = model
        .unique_kernels()
        .into_iter()
        .find(|(k, _)| k.kind == KernelKind::Gemm)
        .unwrap();
    assert_eq!(stand_in(&k).unwrap().launch.entry, "gemm_f16_mma");
    let threads = k.grid.count() * k.block.count();
    assert!(r.apply(&mut k));
    assert_eq!(
        (k.block.x, k.registers_per_thread, k.shared_mem_static),
        (128, 83, 10240)
    );
    assert!(k.grid.count() * 128 >= threads && (k.grid.count() - 1) * 128 < threads);
    // No row for layer norm: left alone.
    let (mut s, _) = model
        .unique_kernels()
        .into_iter()
        .find(|(k, _)| k.kind == KernelKind::LayerNorm)
        .unwrap();
    let before = s.clone();
    assert!(!r.apply(&mut s));
    assert_eq!(s, before);
    std::fs::write(&path, "[{\"entry\":\"nope\",\"variant\":\"original\",\"status\":\"ok\",\"registers\":1,\"shared_bytes\":0}]").unwrap();
    let e = KernelResources::read(&path).unwrap_err().to_string();
    assert!(
        e.contains("resources.json") && e.contains("row 1") && e.contains("nope"),
        "{e}"
    );
}
