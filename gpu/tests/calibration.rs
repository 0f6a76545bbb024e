//! Calibration of the simulated GPU against public measurements
//! (`../shared/ANCHORS.md`): the V100 co-location microbenchmarks of the
//! SoCC'25 study and spec-sheet peaks on H100. The figures the model gives
//! are written in `gpu/src/sim/mod.rs`.

use tally_gpu::{Dim3, GpuSpec, KernelKind, KernelSpec, MemoryUse, SimBackend, Work};

const MB: f64 = 1024.0 * 1024.0;

/// A microbenchmark kernel: `blocks` x 512 threads, each lane loading 16 B
/// vectors; it reads `passes` times over a `buffer`-byte array.
fn streaming(blocks: u32, buffer: f64, passes: f64) -> KernelSpec {
    let bytes = buffer * passes;
    KernelSpec {
        name: format!("stream_{blocks}b_{}mb_x{passes}", buffer / MB),
        kind: KernelKind::Elementwise,
        grid: Dim3::linear(blocks),
        block: Dim3::linear(512),
        registers_per_thread: 32,
        shared_mem_static: 0,
        shared_mem_dynamic: 0,
        work: Work {
            fadd: bytes / 4.0,
            other_warp_insts: bytes / 512.0 * 4.0,
            ..Work::default()
        },
        memory: MemoryUse {
            l1_bytes: bytes,
            l2_bytes: bytes,
            dram_read_bytes: buffer,
            dram_write_bytes: 0.0,
            l2_working_set: if passes > 1.0 { buffer } else { 0.0 },
            inflight_bytes_per_warp: 512.0,
        },
    }
}

fn pair_slowdown(gpu: &str, a: &KernelSpec, b: &KernelSpec, sms: u32) -> (f64, f64) {
    let sim = SimBackend::noiseless(GpuSpec::preset(gpu).expect("preset"));
    let pa = sim.prepare(a, sms).expect("fits");
    let pb = sim.prepare(b, sms).expect("fits");
    let (ca, cb) = sim.co_run_us(&pa, &pb);
    (ca / sim.standalone_us(&pa), cb / sim.standalone_us(&pb))
}

#[test]
fn v100_dram_streaming_pair() {
    // Measured: 1.54x with 40 blocks each, 1.86x with 80 blocks each.
    let k40 = streaming(40, 512.0 * MB, 1.0);
    let (sa, sb) = pair_slowdown("v100", &k40, &k40, 40);
    println!("v100 DRAM streaming pair, 40 blocks: {sa:.3}x");
    assert!((sa - sb).abs() < 1e-6, "symmetric pair");
    assert!((1.4..=1.7).contains(&sa), "{sa}");
    let k80 = streaming(80, 512.0 * MB, 1.0);
    let (s80, _) = pair_slowdown("v100", &k80, &k80, 40);
    println!("v100 DRAM streaming pair, 80 blocks: {s80:.3}x");
    assert!(s80 > sa && s80 < 2.0, "{s80}");
}

#[test]
fn v100_l2_resident_pair() {
    // Measured: 1.63-1.82x for 1-3 MB working sets (L2 is 6 MB).
    for mb in [1.0, 2.0, 3.0] {
        let k = streaming(40, mb * MB, 200.0);
        let (s, _) = pair_slowdown("v100", &k, &k, 40);
        println!("v100 L2-resident pair, {mb} MB: {s:.3}x");
        assert!((1.5..=1.9).contains(&s), "{mb} MB: {s}");
    }
}

#[test]
fn h100_gemm_near_tensor_peak() {
    let gpu = GpuSpec::preset("h100-sxm").expect("preset");
    let sim = SimBackend::noiseless(gpu.clone());
    for n in [4096u32, 8192] {
        let (bm, bn, bk, stages) = (256.0, 128.0, 32.0, 4.0);
        let nf = f64::from(n);
        let tiles = (nf / bm) * (nf / bn);
        // Hopper GEMMs run 2-CTA clusters whose TMA multicast loads the
        // shared 128-wide operand panel once per pair of CTAs.
        let operand_bytes = tiles * (bm + bn / 2.0) * nf * 2.0 + nf * nf * 2.0;
        let gemm = KernelSpec {
            name: format!("gemm_{n}"),
            kind: KernelKind::Gemm,
            grid: Dim3::new(n / 128, n / 256, 1),
            block: Dim3::linear(256),
            registers_per_thread: 232,
            shared_mem_static: 0,
            shared_mem_dynamic: (stages * (bm + bn) * bk * 2.0) as u32,
            work: Work {
                tensor_flops: 2.0 * nf * nf * nf,
                other_warp_insts: tiles * (nf / bk) * 8.0 * 12.0,
                ..Work::default()
            },
            memory: MemoryUse {
                l1_bytes: operand_bytes,
                l2_bytes: operand_bytes,
                dram_read_bytes: 2.0 * nf * nf * 2.0,
                dram_write_bytes: nf * nf * 2.0,
                l2_working_set: 2.0 * (128f64).sqrt() * bm * 512.0 * 2.0,
                inflight_bytes_per_warp: stages * (bm + bn) * bk * 2.0 / 8.0,
            },
        };
        let p = sim.prepare(&gemm, gpu.sm_count).expect("fits");
        let t = sim.standalone_us(&p);
        let peak = 2.0 * nf.powi(3) / (gpu.tensor_tflops() * 1e12) * 1e6;
        println!(
            "h100 gemm {n}^3: {t:.1} us, peak-FLOP time {peak:.1} us, ratio {:.3}",
            t / peak
        );
        assert!(t >= peak && t <= 1.25 * peak, "{t} vs {peak}");
    }
}

#[test]
fn h100_streaming_near_dram_bandwidth() {
    let gpu = GpuSpec::preset("h100-sxm").expect("preset");
    let sim = SimBackend::noiseless(gpu.clone());
    // out = a + b over 64 Mi fp16 elements: 3 x 128 MiB moved.
    let elements = 64.0 * MB;
    let bytes = 3.0 * elements * 2.0;
    let grid = (elements / (512.0 * 8.0)) as u32;
    let add = KernelSpec {
        name: "add".into(),
        kind: KernelKind::Elementwise,
        grid: Dim3::linear(grid),
        block: Dim3::linear(512),
        registers_per_thread: 24,
        shared_mem_static: 0,
        shared_mem_dynamic: 0,
        work: Work {
            fadd: elements,
            other_warp_insts: elements / 32.0 * 6.0,
            ..Work::default()
        },
        memory: MemoryUse {
            l1_bytes: bytes,
            l2_bytes: bytes,
            dram_read_bytes: 2.0 * elements * 2.0,
            dram_write_bytes: elements * 2.0,
            l2_working_set: 0.0,
            inflight_bytes_per_warp: 512.0,
        },
    };
    let p = sim.prepare(&add, gpu.sm_count).expect("fits");
    let t = sim.standalone_us(&p);
    let ideal = bytes / (gpu.dram_gbps * 1e9) * 1e6;
    println!(
        "h100 streaming add: {t:.1} us, bytes/BW {ideal:.1} us, ratio {:.3}",
        t / ideal
    );
    assert!(t >= ideal && t <= 1.25 * ideal, "{t} vs {ideal}");
}
