//! A kernel alone on an engine: launched under a configuration, one launch
//! at a time (each slice waits for the previous one, as on one stream), the
//! clock read when the last completes. Works on any [`Engine`]; the caller
//! gives it one with nothing else running.

use tally_gpu::Partition;

use super::{Engine, EngineError, KernelId, LaunchRequest};
use crate::kernel_config::KernelConfig;

/// Microseconds from the first launch to the last completion of `kernel`
/// on `sms` under `config`, on an otherwise idle `engine`.
pub fn time_alone(
    engine: &mut dyn Engine,
    kernel: KernelId,
    config: KernelConfig,
    sms: Partition,
) -> Result<f64, EngineError> {
    let start = engine.now();
    let blocks = engine.kernel(kernel).blocks();
    let mut done = 0;
    let mut out = Vec::new();
    while done < blocks {
        let (n, workers, preemptible) = config.next_launch(blocks - done);
        engine.submit(LaunchRequest {
            job: 0,
            kernel,
            first_block: done,
            blocks: n,
            workers_per_sm: workers,
            max_workers: config.max_workers(),
            preemptible,
            sms,
            priority: 0,
            with_overhead: true,
            host_delay_us: 0.0,
            max_sms: None,
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
    Ok(engine.now() - start)
}
