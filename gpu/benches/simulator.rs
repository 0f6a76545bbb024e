//! Simulator speed: standalone and pair evaluations per second on one core
//! (target: at least 1 million pair evaluations per second). Run with
//! `cargo bench -p tally-gpu --bench simulator`; criterion prints the time
//! per evaluation, whose inverse is the rate.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use tally_gpu::{Dim3, GpuSpec, KernelKind, KernelSpec, MemoryUse, SimBackend, Work};

fn kernel(blocks: u32, tensor_flops: f64, bytes: f64, working_set: f64) -> KernelSpec {
    KernelSpec {
        name: "bench".into(),
        kind: KernelKind::Gemm,
        grid: Dim3::linear(blocks),
        block: Dim3::linear(256),
        registers_per_thread: 128,
        shared_mem_static: 0,
        shared_mem_dynamic: 48 * 1024,
        work: Work {
            tensor_flops,
            other_warp_insts: tensor_flops / 4096.0,
            ..Work::default()
        },
        memory: MemoryUse {
            l1_bytes: bytes,
            l2_bytes: bytes,
            dram_read_bytes: bytes / 4.0,
            dram_write_bytes: bytes / 8.0,
            l2_working_set: working_set,
            inflight_bytes_per_warp: 1024.0,
        },
    }
}

fn bench(c: &mut Criterion) {
    let sim = SimBackend::noiseless(GpuSpec::preset("h100-sxm").expect("preset"));
    let gemm = sim
        .prepare(&kernel(1024, 6.9e10, 2e8, 8e6), 64)
        .expect("fits");
    let stream = sim.prepare(&kernel(4096, 0.0, 8e8, 0.0), 64).expect("fits");
    // Working sets that together overflow the 50 MB L2: the capacity split
    // is solved too (the slowest path).
    let cached_a = sim
        .prepare(&kernel(2048, 1e9, 4e8, 40e6), 64)
        .expect("fits");
    let cached_b = sim
        .prepare(&kernel(2048, 1e9, 4e8, 30e6), 64)
        .expect("fits");

    c.bench_function("standalone evaluation", |b| {
        b.iter(|| sim.standalone_us(black_box(&stream)))
    });
    c.bench_function("pair evaluation (compute + memory)", |b| {
        b.iter(|| sim.co_run_us(black_box(&gemm), black_box(&stream)))
    });
    c.bench_function("pair evaluation (contended L2 capacity)", |b| {
        b.iter(|| sim.co_run_us(black_box(&cached_a), black_box(&cached_b)))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
