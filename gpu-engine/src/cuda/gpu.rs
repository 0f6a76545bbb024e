//! `CudaGpu`: one real GPU opened for `tally run --backend cuda`, shared
//! by every engine of a comparison (one per policy, and the HP job alone):
//! the primary context, the kernel library loaded with its transformed
//! variants, each kernel's stand-in with its seeded device arguments, and
//! the time alone of every launch plan measured so far. Opening it checks
//! what the engine needs (a driver with event timing, cubins the driver
//! can load, a device of the spec's SM count and a compute capability the
//! library is built for) and fails with the reason otherwise.
#![allow(unsafe_code)]

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use cudarc::driver::sys;
use tally_gpu::cuda::device::{describe_device, DeviceDescription};
use tally_gpu::cuda::driver::{check, require_cubin_driver, require_driver};
use tally_gpu::cuda::primary::PrimaryContext;
use tally_gpu::cuda::timer::{Timer, EVENT_TIMING_DRIVER};
use tally_gpu::cuda::{Arch, TimingConfig};
use tally_gpu::{GpuError, GpuSpec, KernelSpec};
use tally_kernels::cuda_backend::{DeviceArgs, LoadedLibrary};
use tally_kernels::launch_plan::LaunchPlan;
use tally_kernels::{stand_in, StandIn};

use super::launch::{PlannedLaunch, TaskSlot};

/// A kernel's stand-in on the device.
#[derive(Debug)]
pub struct Prepared {
    pub standin: StandIn,
    pub args: Rc<DeviceArgs>,
}

/// The opened GPU. Fields drop in order: the stand-ins' arguments and
/// the timing slot, then the library, then the context.
#[derive(Debug)]
pub struct CudaGpu {
    prepared: RefCell<Vec<Prepared>>,
    by_key: RefCell<HashMap<String, u32>>,
    alone: RefCell<HashMap<(u32, String), f64>>,
    /// Counter and flag of the alone measurements' preemptive launches.
    timing_slot: TaskSlot,
    spec: GpuSpec,
    device: DeviceDescription,
    timing: TimingConfig,
    seed: u64,
    /// `(least, greatest)` stream priority.
    priorities: (i32, i32),
    library: LoadedLibrary,
    primary: PrimaryContext,
}

impl CudaGpu {
    /// Open device `ordinal` as `spec` (`--gpu auto` derives it), with
    /// arguments seeded by `seed` and alone times measured as `timing`.
    pub fn open(
        ordinal: usize,
        spec: GpuSpec,
        seed: u64,
        timing: TimingConfig,
    ) -> Result<Rc<CudaGpu>, GpuError> {
        // cudarc panics on a symbol the driver lacks: stop first with the
        // versions named.
        require_driver("tally run --backend cuda", EVENT_TIMING_DRIVER)?;
        require_cubin_driver()?;
        let device = describe_device(ordinal)?;
        if spec.sm_count != device.sm_count {
            return Err(GpuError::Device(format!(
                "--gpu {} has {} SMs but device {ordinal} ({}) has {}: run with `--gpu auto`",
                spec.name, spec.sm_count, device.name, device.sm_count
            )));
        }
        let arch = Arch::from_capability(device.cc_major, device.cc_minor).ok_or_else(|| {
            GpuError::Device(format!(
                "compute capability {} of {} is not one the kernel library is built for (8.0 to 9.0)",
                device.compute_capability(),
                device.name
            ))
        })?;
        let primary = PrimaryContext::retain(ordinal)?;
        let (mut least, mut greatest) = (0, 0);
        // SAFETY: the primary context is current (`retain`); writes only
        // the two out-parameters.
        unsafe {
            check(
                "cuCtxGetStreamPriorityRange",
                sys::cuCtxGetStreamPriorityRange(&mut least, &mut greatest),
            )?;
        }
        let timing_slot = TaskSlot::alloc(1)?;
        Ok(Rc::new(CudaGpu {
            prepared: RefCell::new(Vec::new()),
            by_key: RefCell::new(HashMap::new()),
            alone: RefCell::new(HashMap::new()),
            timing_slot,
            spec,
            device,
            timing,
            seed,
            priorities: (least, greatest),
            library: LoadedLibrary::with_variants(arch),
            primary,
        }))
    }

    pub fn spec(&self) -> &GpuSpec {
        &self.spec
    }

    pub fn description(&self) -> &DeviceDescription {
        &self.device
    }

    pub fn timing(&self) -> TimingConfig {
        self.timing
    }

    pub fn primary(&self) -> &PrimaryContext {
        &self.primary
    }

    pub fn library(&self) -> &LoadedLibrary {
        &self.library
    }

    /// The stream priority of a job of scheduler priority `priority`: the
    /// device's greatest for HP (`> 0`), its least otherwise.
    pub fn stream_priority(&self, priority: u8) -> i32 {
        if priority > 0 {
            self.priorities.1
        } else {
            self.priorities.0
        }
    }

    /// `spec`'s stand-in prepared (its arguments allocated and seeded);
    /// its index and grid. Identical stand-ins (every layer of a model)
    /// are one, with one set of arguments.
    pub fn prepare(&self, spec: &KernelSpec) -> Result<(u32, [u32; 3]), GpuError> {
        let s = stand_in(spec).map_err(|e| GpuError::Library(e.to_string()))?;
        let key = format!(
            "{}:{:?}:{:?}",
            s.launch.entry, s.launch.grid, s.launch.params
        );
        if let Some(&i) = self.by_key.borrow().get(&key) {
            return Ok((i, s.launch.grid));
        }
        // Load the original entry now: a refused or failing build shows at
        // registration, not mid-run.
        self.library.kernel(&s.launch.entry)?;
        let args = Rc::new(DeviceArgs::new(
            &s.launch,
            &self.library,
            &self.primary,
            self.seed,
        )?);
        let grid = s.launch.grid;
        let mut prepared = self.prepared.borrow_mut();
        let i = prepared.len() as u32;
        prepared.push(Prepared { standin: s, args });
        self.by_key.borrow_mut().insert(key, i);
        Ok((i, grid))
    }

    /// The launch of `plan` of prepared kernel `i` on `stream`.
    pub fn planned(
        &self,
        i: u32,
        plan: &LaunchPlan,
        stream: sys::CUstream,
        slot: Option<(&TaskSlot, usize)>,
    ) -> Result<PlannedLaunch, GpuError> {
        let prepared = self.prepared.borrow();
        let p = &prepared[i as usize];
        let entry = plan.entry.name(&p.standin.launch.entry);
        let kernel = self.library.kernel(&entry)?;
        PlannedLaunch::new(
            kernel.kernel,
            p.standin.launch.block,
            Rc::clone(&p.args),
            plan.clone(),
            self.primary.context(),
            stream,
            slot,
        )
    }

    /// The time alone of `plan` of kernel `i` on the whole GPU, measured
    /// once (median of the timing configuration's repetitions, CUDA
    /// events, on the primary stream) and remembered.
    pub fn alone_us(&self, i: u32, plan: &LaunchPlan) -> Result<f64, GpuError> {
        let key = (i, format!("{plan:?}"));
        if let Some(&t) = self.alone.borrow().get(&key) {
            return Ok(t);
        }
        let launch = self.planned(i, plan, self.primary.stream(), Some((&self.timing_slot, 0)))?;
        let t = Timer::new(&launch)?.time(self.timing)?.median_us;
        self.alone.borrow_mut().insert(key, t);
        Ok(t)
    }

    /// The alone time of `plan` of kernel `i` if measured.
    pub fn known_alone_us(&self, i: u32, plan: &LaunchPlan) -> Option<f64> {
        self.alone.borrow().get(&(i, format!("{plan:?}"))).copied()
    }

    /// What `run.json` records of the device and the measurement.
    pub fn settings(&self) -> Vec<(&'static str, String)> {
        let d = &self.device;
        vec![
            ("device", format!("{} (ordinal {})", d.name, d.ordinal)),
            ("compute_capability", d.compute_capability()),
            ("cuda_driver", d.cuda_version.clone()),
            (
                "driver_release",
                d.driver_release.clone().unwrap_or_else(|| "unknown".into()),
            ),
            ("compute_mode", d.compute_mode.clone()),
            (
                "stream_priorities",
                format!(
                    "HP streams at {} (greatest), BE at {} (least)",
                    self.priorities.1, self.priorities.0
                ),
            ),
            (
                "kernels",
                "library stand-ins sized to each kernel's FLOPs and DRAM bytes, launched as \
                 the transformed module's original, sliced, PTB or preemptive-PTB entry"
                    .into(),
            ),
            (
                "alone_times",
                format!(
                    "median of {} timed launches after {} warm-up, CUDA events, whole GPU",
                    self.timing.repetitions, self.timing.warmup
                ),
            ),
            (
                "retreat_flag",
                "device memory, raised by cuStreamWriteValue32 (a stream memory operation, no \
                 kernel) on the job's side stream (highest priority) ordered after the \
                 launch's own clearing of it"
                    .into(),
            ),
            (
                "completions",
                "CUDA events polled by the host: asleep until a launch can have ended \
                 (its stream's earlier launches and 90 % of its time alone), then every 2 us"
                    .into(),
            ),
        ]
    }
}
