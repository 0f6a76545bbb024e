//! The engine contract on a real GPU: `DeviceEngine` over `CudaDevice`
//! put through the same checks as the simulated engine and the device
//! model. Needs an NVIDIA GPU, so it is ignored here and run by
//! `scripts/gpu-check.sh` (`cargo test --release -p tally-gpu-engine
//! --test cuda_contract -- --ignored`), on device `TALLY_GPU_CHECK_DEVICE`
//! (default 0).

use tally_gpu::cuda::TimingConfig;
use tally_gpu::{Dim3, GpuSpec, KernelKind, KernelSpec, MemoryUse, Partition, Work};
use tally_gpu_engine::{CudaDevice, CudaGpu, DeviceEngine};
use tally_sched::engine::contract::check_all;
use tally_sched::engine::Engine;
use tally_sched::kernel_config::KernelConfig;

/// A GEMM of 4e11 FLOPs over 4,096 blocks: its stand-in runs for
/// milliseconds on any supported GPU, so a retreat half way arrives well
/// before the end.
fn long_gemm() -> KernelSpec {
    KernelSpec {
        name: "contract-gemm".into(),
        kind: KernelKind::Gemm,
        grid: Dim3::linear(4096),
        block: Dim3::linear(256),
        registers_per_thread: 64,
        shared_mem_static: 16 * 1024,
        shared_mem_dynamic: 0,
        work: Work {
            ffma: 2.0e11,
            ..Work::default()
        },
        memory: MemoryUse {
            l1_bytes: 4.0e9,
            l2_bytes: 2.0e9,
            dram_read_bytes: 1.3e8,
            dram_write_bytes: 6.7e7,
            l2_working_set: 6.7e7,
            inflight_bytes_per_warp: 512.0,
        },
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: scripts/gpu-check.sh runs it"]
fn the_cuda_engine_keeps_the_engine_contract() {
    let ordinal: usize = std::env::var("TALLY_GPU_CHECK_DEVICE")
        .ok()
        .and_then(|d| d.parse().ok())
        .unwrap_or(0);
    let spec = GpuSpec::resolve_on("auto", ordinal).expect("a CUDA device");
    let timing = TimingConfig::new(1, 5).expect("timing");
    let gpu = CudaGpu::open(ordinal, spec, 0, timing).expect("device opens");
    let kernel = long_gemm();
    let mut make = || -> Box<dyn Engine> {
        Box::new(DeviceEngine::new(
            CudaDevice::new(std::rc::Rc::clone(&gpu)).expect("device session"),
        ))
    };
    // Measure the grid's time alone first: the retreat check asks for it
    // with a launch running, and a measurement then would wait for it.
    let mut first = make();
    let k = first.add_kernel(&kernel).expect("registered");
    let whole = Partition::whole(first.gpu());
    let alone = first
        .alone_us(k, KernelConfig::Original, whole)
        .expect("measured");
    eprintln!("contract kernel alone: {alone:.0} us");
    drop(first);
    check_all(&mut make, &kernel).expect("the CUDA engine keeps the contract");
}
