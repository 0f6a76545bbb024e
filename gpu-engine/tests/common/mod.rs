//! A deterministic model of a device for `DeviceEngine`'s tests: each
//! job's stream runs its launches in order; a launch runs its blocks in
//! waves of as many as it has workers (one per SM without persistent
//! workers), a fixed time per block; raising a preemptive launch's retreat
//! flag lets the blocks already taken finish and no more start; the
//! stand-in has two thirds of the spec's blocks, so every request goes
//! through the block map. Streams do not slow each other.

use tally_gpu::{GpuSpec, KernelSpec};
use tally_gpu_engine::{Device, DeviceKernel, Finished, Ticket};
use tally_kernels::launch_plan::{Entry, LaunchPlan};
use tally_sched::engine::EngineError;

pub const BLOCK_US: f64 = 50.0;

#[derive(Debug)]
struct Run {
    stream: usize,
    start: f64,
    /// Blocks in flight at once.
    wave: u64,
    blocks: u64,
    end: f64,
    run: u64,
    preemptive: bool,
    reported: bool,
}

#[derive(Debug)]
pub struct ModelDevice {
    gpu: GpuSpec,
    clock: f64,
    runs: Vec<Run>,
}

impl ModelDevice {
    pub fn new() -> ModelDevice {
        ModelDevice {
            gpu: GpuSpec::preset("a100-40gb").unwrap(),
            clock: 0.0,
            runs: Vec::new(),
        }
    }

    fn waves(blocks: u64, wave: u64) -> f64 {
        blocks.div_ceil(wave.max(1)) as f64
    }

    fn shape(&self, plan: &LaunchPlan) -> (u64, u64) {
        let grid: u64 = plan.grid.iter().map(|&g| u64::from(g)).product();
        match plan.entry {
            // Persistent workers over the blocks left from the counter.
            Entry::Ptb | Entry::Preempt => {
                let total: u64 = plan
                    .original_grid
                    .unwrap()
                    .iter()
                    .map(|&g| u64::from(g))
                    .product();
                let left = total - u64::from(plan.counter_start.unwrap_or(0));
                (grid, left)
            }
            _ => (u64::from(self.gpu.sm_count).min(grid), grid),
        }
    }
}

impl Device for ModelDevice {
    fn gpu(&self) -> &GpuSpec {
        &self.gpu
    }

    fn now_us(&self) -> f64 {
        self.clock
    }

    fn prepare(&mut self, spec: &KernelSpec) -> Result<(DeviceKernel, [u32; 3]), EngineError> {
        let blocks = (spec.blocks() * 2 / 3).max(1) as u32;
        Ok((DeviceKernel(0), [blocks, 1, 1]))
    }

    fn alone_us(&self, _: DeviceKernel, plan: &LaunchPlan) -> Result<f64, EngineError> {
        let (wave, blocks) = self.shape(plan);
        Ok(Self::waves(blocks, wave) * BLOCK_US)
    }

    fn enqueue(
        &mut self,
        stream: usize,
        _priority: u8,
        _kernel: DeviceKernel,
        plan: &LaunchPlan,
    ) -> Result<Ticket, EngineError> {
        let (wave, blocks) = self.shape(plan);
        let after = self
            .runs
            .iter()
            .filter(|r| r.stream == stream)
            .map(|r| r.end)
            .fold(self.clock, f64::max);
        self.runs.push(Run {
            stream,
            start: after,
            wave,
            blocks,
            end: after + Self::waves(blocks, wave) * BLOCK_US,
            run: blocks,
            preemptive: plan.entry == Entry::Preempt,
            reported: false,
        });
        Ok(Ticket(self.runs.len() as u64 - 1))
    }

    fn retreat(&mut self, ticket: Ticket) {
        let now = self.clock;
        let r = &mut self.runs[ticket.0 as usize];
        if !r.preemptive || r.end <= now {
            return;
        }
        // Waves begun by now finish; no block starts after.
        let begun = if now < r.start {
            0
        } else {
            ((now - r.start) / BLOCK_US).floor() as u64 + 1
        };
        r.run = (begun * r.wave).min(r.blocks);
        r.end = r.end.min(r.start + begun as f64 * BLOCK_US);
    }

    fn poll(&mut self, out: &mut Vec<Finished>) -> Result<(), EngineError> {
        let mut done: Vec<(f64, usize)> = self
            .runs
            .iter()
            .enumerate()
            .filter(|(_, r)| !r.reported && r.end <= self.clock)
            .map(|(i, r)| (r.end, i))
            .collect();
        done.sort_by(|a, b| a.0.total_cmp(&b.0));
        for (end, i) in done {
            self.runs[i].reported = true;
            out.push(Finished {
                ticket: Ticket(i as u64),
                end_us: end,
                blocks_run: self.runs[i].run,
            });
        }
        Ok(())
    }

    fn wait_until(&mut self, t: f64) -> Result<(), EngineError> {
        self.clock = self.clock.max(t);
        Ok(())
    }

    fn next_check(&self) -> Option<f64> {
        self.runs
            .iter()
            .filter(|r| !r.reported)
            .map(|r| r.end.max(self.clock))
            .min_by(f64::total_cmp)
    }
}
