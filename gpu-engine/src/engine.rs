//! `DeviceEngine`: the scheduler's [`Engine`] over a [`Device`]. The
//! scheduler speaks in the spec's blocks; the device runs the kernel's
//! stand-in, whose grid is sized to the spec's work. Each request becomes
//! a range of stand-in blocks through the kernel's [`BlockMap`] (one per
//! job and kernel, begun afresh by a request from block 0, so a resumed
//! kernel starts exactly where the device stopped) and one launch of the
//! transformed module through [`plan`]; each finished launch becomes a
//! completion in spec blocks. A request whose range holds no stand-in
//! block (the stand-in has fewer blocks) completes at once.
//!
//! A request's modelled host costs (`with_overhead`, `host_delay_us`: the
//! simulator's launch overhead and Tally's forwarding) are not added: on a
//! device the launch pays its own.
//!
//! Refused, with the reason: an SM partition other than the whole GPU
//! (green contexts are not wired in), and a time-slice context switch
//! (taking a launch's blocks off the SMs mid-block), which one process
//! cannot do on a real GPU.

use std::collections::HashMap;

use tally_gpu::{GpuSpec, KernelSpec, Occupancy, Partition};
use tally_kernels::launch_plan::{plan, BlockMap, LaunchPlan, RangeLaunch};
use tally_sched::engine::{Completion, Engine, EngineError, KernelId, LaunchId, LaunchRequest};
use tally_sched::kernel_config::KernelConfig;

use crate::device::{Device, DeviceKernel, Finished, Ticket};

#[derive(Debug)]
struct KernelInfo {
    spec: KernelSpec,
    device: DeviceKernel,
    standin_grid: [u32; 3],
    blocks_per_sm: u32,
}

impl KernelInfo {
    fn standin_blocks(&self) -> u64 {
        self.standin_grid.iter().map(|&g| u64::from(g)).product()
    }
}

/// Persistent workers in all: per SM over the partition, at most
/// `max_workers` (None: one CTA per block).
fn total_workers(per_sm: Option<u32>, max_workers: Option<u32>, sms: Partition) -> Option<u32> {
    per_sm.map(|w| {
        let all = w.saturating_mul(sms.sm_count);
        max_workers.map_or(all, |m| m.min(all))
    })
}

/// A launch on the device, as the scheduler asked for it.
#[derive(Debug)]
struct Pending {
    id: LaunchId,
    req: LaunchRequest,
    standin_blocks: u64,
}

/// The engine over device `D`.
#[derive(Debug)]
pub struct DeviceEngine<D: Device> {
    device: D,
    gpu: GpuSpec,
    kernels: Vec<KernelInfo>,
    index: HashMap<String, KernelId>,
    maps: HashMap<(usize, KernelId), BlockMap>,
    pending: HashMap<Ticket, Pending>,
    tickets: HashMap<LaunchId, Ticket>,
    /// Requests with no stand-in block left, complete at once.
    at_once: Vec<Completion>,
    next_id: u64,
    /// What the scheduler asked that the device cannot do; every later
    /// call to advance the clock reports it.
    refused: Option<EngineError>,
}

impl<D: Device> DeviceEngine<D> {
    pub fn new(device: D) -> DeviceEngine<D> {
        let gpu = device.gpu().clone();
        DeviceEngine {
            device,
            gpu,
            kernels: Vec::new(),
            index: HashMap::new(),
            maps: HashMap::new(),
            pending: HashMap::new(),
            tickets: HashMap::new(),
            at_once: Vec::new(),
            next_id: 0,
            refused: None,
        }
    }

    pub fn device(&self) -> &D {
        &self.device
    }

    fn info(&self, id: KernelId) -> &KernelInfo {
        &self.kernels[id.0 as usize]
    }

    fn bad(&self, id: KernelId, reason: String) -> EngineError {
        EngineError::BadLaunch {
            kernel: self.info(id).spec.name.clone(),
            reason,
        }
    }

    fn whole_gpu_only(&self, id: KernelId, sms: Partition) -> Result<(), EngineError> {
        if sms == Partition::whole(&self.gpu) {
            return Ok(());
        }
        Err(self.bad(
            id,
            format!(
                "SMs {}..{}: this engine launches on the whole GPU only (partitions need green contexts, not wired in)",
                sms.first_sm,
                sms.first_sm + sms.sm_count
            ),
        ))
    }

    /// The stand-in launch of `blocks` stand-in blocks from `first`.
    fn plan_of(
        &self,
        id: KernelId,
        first: u64,
        blocks: u64,
        workers: Option<u32>,
        preemptible: bool,
    ) -> Result<LaunchPlan, EngineError> {
        let r = RangeLaunch {
            grid: self.info(id).standin_grid,
            first_block: first,
            blocks,
            workers,
            preemptible,
        };
        plan(&r).map_err(|e| self.bad(id, e.to_string()))
    }

    /// Refuse, at the next step, what a policy asked of running launch
    /// `id` that the device cannot do.
    fn refuse_running(&mut self, id: LaunchId, reason: &str) {
        if let Some(t) = self.tickets.get(&id) {
            let kernel = self.pending[t].req.kernel;
            self.refused = Some(self.bad(kernel, reason.to_string()));
        }
    }

    fn refusal(&mut self) -> Result<(), EngineError> {
        match self.refused.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Completions of the launches the device finished, and of those with
    /// nothing to run.
    fn collect(&mut self, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        out.append(&mut self.at_once);
        let mut finished: Vec<Finished> = Vec::new();
        self.device.poll(&mut finished)?;
        for f in finished {
            let Some(p) = self.pending.remove(&f.ticket) else {
                continue;
            };
            self.tickets.remove(&p.id);
            let retreated = f.blocks_run < p.standin_blocks;
            let map = self
                .maps
                .get_mut(&(p.req.job, p.req.kernel))
                .expect("a pending launch has its block map");
            let blocks_done = map.record(p.req.first_block, p.req.blocks, f.blocks_run, retreated);
            out.push(Completion {
                launch: p.id,
                job: p.req.job,
                kernel: p.req.kernel,
                blocks_done,
                retreated,
                time_us: f.end_us,
            });
        }
        Ok(())
    }
}

impl<D: Device> Engine for DeviceEngine<D> {
    fn gpu(&self) -> &GpuSpec {
        &self.gpu
    }

    fn now(&self) -> f64 {
        self.device.now_us()
    }

    fn add_kernel(&mut self, spec: &KernelSpec) -> Result<KernelId, EngineError> {
        let key = spec.op_id();
        if let Some(&id) = self.index.get(&key) {
            return Ok(id);
        }
        let occupancy = Occupancy::of(spec, &self.gpu)?;
        let (device, standin_grid) = self.device.prepare(spec)?;
        let id = KernelId(self.kernels.len() as u32);
        self.kernels.push(KernelInfo {
            spec: spec.clone(),
            device,
            standin_grid,
            blocks_per_sm: occupancy.blocks_per_sm.max(1),
        });
        self.index.insert(key, id);
        Ok(id)
    }

    fn kernel(&self, id: KernelId) -> &KernelSpec {
        &self.info(id).spec
    }

    fn blocks_per_sm(&self, id: KernelId) -> u32 {
        self.info(id).blocks_per_sm
    }

    fn alone_us(
        &self,
        id: KernelId,
        config: KernelConfig,
        sms: Partition,
    ) -> Result<f64, EngineError> {
        self.whole_gpu_only(id, sms)?;
        let info = self.info(id);
        let (spec_blocks, standin) = (info.spec.blocks().max(1), info.standin_blocks());
        let (first_launch, workers_per_sm, preemptible) = config.next_launch(spec_blocks);
        let workers = total_workers(workers_per_sm, config.max_workers(), sms);
        // As many launches as the configuration makes of the spec's grid,
        // each over its share of the stand-in's.
        let launches = spec_blocks.div_ceil(first_launch.max(1));
        let mut total = 0.0;
        let mut map = BlockMap::new(spec_blocks, standin);
        for i in 0..launches {
            let first = i * first_launch;
            let count = first_launch.min(spec_blocks - first);
            let (sf, sc) = map.standin_range(first, count);
            if sc > 0 {
                let p = self.plan_of(id, sf, sc, workers, preemptible)?;
                total += self.device.alone_us(info.device, &p)?;
            }
            map.record(first, count, sc, false);
        }
        Ok(total)
    }

    fn submit(&mut self, req: LaunchRequest) -> Result<LaunchId, EngineError> {
        self.whole_gpu_only(req.kernel, req.sms)?;
        if let Some(cap) = req.max_sms {
            // An SM cap is a per-client MPS setting, fixed when the client
            // starts: one process cannot set it per launch.
            return Err(self.bad(
                req.kernel,
                format!("at most {cap} SMs at once: an MPS share, which one process cannot set per launch"),
            ));
        }
        let (spec_blocks, standin) = {
            let info = self.info(req.kernel);
            (info.spec.blocks().max(1), info.standin_blocks())
        };
        let key = (req.job, req.kernel);
        if req.first_block == 0 || !self.maps.contains_key(&key) {
            // A run of the kernel begins.
            self.maps.insert(key, BlockMap::new(spec_blocks, standin));
        }
        let (first, count) = self.maps[&key].standin_range(req.first_block, req.blocks);
        let id = LaunchId(self.next_id);
        self.next_id += 1;
        if count == 0 {
            let map = self.maps.get_mut(&key).expect("inserted above");
            let blocks_done = map.record(req.first_block, req.blocks, 0, false);
            self.at_once.push(Completion {
                launch: id,
                job: req.job,
                kernel: req.kernel,
                blocks_done,
                retreated: false,
                time_us: self.device.now_us(),
            });
            return Ok(id);
        }
        let workers = total_workers(req.workers_per_sm, req.max_workers, req.sms);
        let p = self.plan_of(req.kernel, first, count, workers, req.preemptible)?;
        let device = self.info(req.kernel).device;
        let ticket = self.device.enqueue(req.job, req.priority, device, &p)?;
        self.tickets.insert(id, ticket);
        self.pending.insert(
            ticket,
            Pending {
                id,
                req,
                standin_blocks: count,
            },
        );
        Ok(id)
    }

    fn retreat(&mut self, id: LaunchId) -> bool {
        let Some(&ticket) = self.tickets.get(&id) else {
            return false;
        };
        if !self.pending[&ticket].req.preemptible {
            return false;
        }
        self.device.retreat(ticket);
        true
    }

    fn set_suspended(&mut self, id: LaunchId, suspended: bool) {
        // A launch on the device cannot stop dispatching its own blocks.
        if suspended {
            self.refuse_running(
                id,
                "holding back a running launch's blocks needs a preemptive launch on a real GPU",
            );
        }
    }

    fn set_context_saved(&mut self, id: LaunchId, saved: bool) {
        if saved {
            self.refuse_running(
                id,
                "a time-slice switch takes a launch's blocks off the SMs mid-block, which the driver does between processes, not one process on a real GPU",
            );
        }
    }

    fn next_event_time(&self) -> Option<f64> {
        if !self.at_once.is_empty() || self.refused.is_some() {
            return Some(self.device.now_us());
        }
        if self.pending.is_empty() {
            return None;
        }
        self.device.next_check()
    }

    fn advance_to(&mut self, t: f64, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        self.refusal()?;
        self.device.wait_until(t)?;
        self.collect(out)
    }

    fn settle(&mut self, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        self.refusal()?;
        self.collect(out)
    }
}
