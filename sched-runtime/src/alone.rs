//! Standalone timings on the engine: a kernel under a launch plan with the
//! GPU to itself (the reference for normalised throughput and the timings
//! Tally's configuration choice compares).

use tally_gpu::{GpuSpec, KernelSpec, Partition};

use crate::config::KernelConfig;
use crate::engine::{EngineError, LaunchRequest, SimEngine};

/// Microseconds `kernel` takes alone on `sms` under `config`, launch
/// overheads included (one per launch: each slice is a launch).
pub fn kernel_alone_us(
    gpu: &GpuSpec,
    kernel: &KernelSpec,
    config: KernelConfig,
    sms: Partition,
) -> Result<f64, EngineError> {
    let mut engine = SimEngine::new(gpu);
    let id = engine.add_kernel(kernel)?;
    let blocks = kernel.blocks();
    let mut done = 0;
    let mut out = Vec::new();
    while done < blocks {
        let (n, workers, preemptible) = config.next_launch(blocks - done);
        engine.submit(LaunchRequest {
            job: 0,
            kernel: id,
            first_block: done,
            blocks: n,
            workers_per_sm: workers,
            preemptible,
            sms,
            priority: 0,
            with_overhead: true,
        })?;
        out.clear();
        while out.is_empty() {
            let t = engine
                .next_event_time()
                .expect("a submitted launch always has a next event");
            engine.advance_to(t, &mut out)?;
        }
        done += out.iter().map(|c| c.blocks_done).sum::<u64>();
    }
    Ok(engine.now())
}
