//! `CudaBackend`: the `Backend` of a real NVIDIA GPU. Each kernel runs as
//! its library stand-in (`crate::standin`: the entry of its kind sized to
//! its FLOPs and DRAM bytes), on device buffers filled with seeded data,
//! timed with CUDA events (warm-up, repetitions, median and spread).
//! A partition smaller than the device is a green context of that many SMs;
//! the whole device is the primary context. A pair runs each side on its
//! own green context and stream, one side timed while the other is kept
//! running (see `timer`), then the roles swapped.
//!
//! Counters: the duration and the launch counters (grid, block, the
//! registers and shared memory ptxas reports for the entry, SM count,
//! waves, occupancy limits), which the launch fixes. The throughput, cache
//! and instruction counters need Nsight Compute: with an [`NcuRunner`]
//! (`--counters ncu`) every standalone row is re-run under ncu and carries
//! all of them; without, they are absent from the dataset, not zero
//! (`Backend::counters`). Pair rows hold durations only either way.
//!
//! Not run on a GPU in this repository's CI (none there); every entry
//! checks for a driver first, so without one the result is NO_DRIVER.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use super::args::DeviceArgs;
use super::launch::KernelLaunch;
use super::loaded::{LoadedKernel, LoadedLibrary};
use crate::library::LibraryKernel;
use crate::standin::{stand_in, StandIn};
use tally_gpu::cuda::device::{describe_device, DeviceDescription};
use tally_gpu::cuda::driver::{require_cubin_driver, require_driver};
use tally_gpu::cuda::green::{create_partitions, GreenPartition};
use tally_gpu::cuda::ncu::NcuRunner;
use tally_gpu::cuda::nvrtc::Arch;
use tally_gpu::cuda::primary::PrimaryContext;
use tally_gpu::cuda::timer::{chunk_launches, Timer, EVENT_TIMING_DRIVER};
use tally_gpu::cuda::timing::{Timing, TimingConfig};
use tally_gpu::GpuSpec;
use tally_gpu::KernelSpec;
use tally_gpu::Occupancy;
use tally_gpu::Partition;
use tally_gpu::{launch_counters, Counter, CounterSet, LAUNCH_COUNTERS};
use tally_gpu::{Backend, Measurement};
use tally_gpu::{GpuError, Result};

/// Argument sets kept allocated: a pair's two sides and the next kernel's
/// (the sweeps visit one kernel on many partitions in a row).
const ARGS_KEPT: usize = 4;

/// A real GPU measured through the driver API.
#[derive(Debug)]
pub struct CudaBackend {
    spec: GpuSpec,
    device: DeviceDescription,
    cfg: TimingConfig,
    seed: u64,
    /// Most recently used last; dropped (freed) before the contexts.
    args: RefCell<Vec<(String, Rc<DeviceArgs>)>>,
    /// Median solo time of each stand-in on each partition size, for
    /// sizing a co-runner's chunks.
    solo_us: RefCell<HashMap<(String, u32), f64>>,
    /// Green contexts by the SM sizes they were split into.
    partitions: RefCell<HashMap<Vec<u32>, Rc<Vec<GreenPartition>>>>,
    library: LoadedLibrary,
    primary: PrimaryContext,
    /// Standalone counters from Nsight Compute, when set.
    ncu: Option<NcuRunner>,
    /// Pair sides measured, and those with a timed repetition during which
    /// the co-runner's queue ran empty (see `timer`).
    co_sides: std::cell::Cell<(u64, u64)>,
}

impl CudaBackend {
    /// Open device `ordinal` to measure kernels as `spec` (which must be
    /// that device's: same SM count; `--gpu auto` derives it).
    pub fn open(ordinal: usize, spec: GpuSpec, seed: u64, cfg: TimingConfig) -> Result<Self> {
        if cfg.repetitions == 0 {
            return Err(GpuError::Device(
                "at least one timed repetition is needed".into(),
            ));
        }
        // Every driver call below exists from this release on; cudarc would
        // panic on a missing symbol, so an older driver stops here.
        require_driver("the CUDA backend", EVENT_TIMING_DRIVER)?;
        require_cubin_driver()?;
        let device = describe_device(ordinal)?;
        if spec.sm_count != device.sm_count {
            return Err(GpuError::Device(format!(
                "--gpu {} has {} SMs but device {ordinal} ({}) has {}: profile it as \
                 `--gpu auto` (or a spec of that device)",
                spec.name, spec.sm_count, device.name, device.sm_count
            )));
        }
        let arch = Arch::from_capability(device.cc_major, device.cc_minor).ok_or_else(|| {
            GpuError::Device(format!(
                "compute capability {} of {} is not one the kernel library is built for \
                 (8.0 to 9.0)",
                device.compute_capability(),
                device.name
            ))
        })?;
        let primary = PrimaryContext::retain(ordinal)?;
        let library = LoadedLibrary::new(arch);
        Ok(CudaBackend {
            spec,
            device,
            cfg,
            seed,
            args: RefCell::new(Vec::new()),
            solo_us: RefCell::new(HashMap::new()),
            partitions: RefCell::new(HashMap::new()),
            library,
            primary,
            ncu: None,
            co_sides: std::cell::Cell::new((0, 0)),
        })
    }

    /// Take every standalone row's counters from Nsight Compute.
    pub fn with_ncu(mut self, runner: NcuRunner) -> Result<Self> {
        ncu_child_can_run(&self.device.compute_mode)?;
        self.ncu = Some(runner);
        Ok(self)
    }

    /// Launch `kernel`'s stand-in once on `sm_count` SMs and wait: the
    /// child `NcuRunner` profiles.
    pub fn launch_once(&self, kernel: &KernelSpec, sm_count: u32) -> Result<()> {
        Partition::first(sm_count).check(&self.spec)?;
        let (s, loaded) = self.prepare(kernel)?;
        let args = self.args_for(&s.launch, 0)?;
        let (_parts, context, stream) = self.solo_place(sm_count)?;
        Self::launch(&s, &loaded, &args, context, stream).run_once()
    }

    /// Where a kernel runs alone on `sms` SMs: the primary context for the
    /// whole device, else a green context of that size (kept alive by the
    /// first value). Which SMs a green context gets is the driver's
    /// choice: only a partition's size is honoured, not its first SM.
    #[allow(clippy::type_complexity)]
    fn solo_place(
        &self,
        sms: u32,
    ) -> Result<(
        Option<Rc<Vec<GreenPartition>>>,
        cudarc::driver::sys::CUcontext,
        cudarc::driver::sys::CUstream,
    )> {
        if sms == self.device.sm_count {
            return Ok((None, self.primary.context(), self.primary.stream()));
        }
        let parts = self.partitions_for(&[sms])?;
        let (context, stream) = (parts[0].context(), parts[0].stream());
        Ok((Some(parts), context, stream))
    }

    /// The device's description (name, driver, clocks).
    pub fn device(&self) -> &DeviceDescription {
        &self.device
    }

    /// Device arguments of `launch` for pair side `side` (the two sides of
    /// a kernel paired with itself get separate buffers, as two jobs would).
    fn args_for(&self, launch: &LibraryKernel, side: usize) -> Result<Rc<DeviceArgs>> {
        let key = format!(
            "{side}:{}:{:?}:{:?}",
            launch.entry, launch.grid, launch.params
        );
        let mut cache = self.args.borrow_mut();
        if let Some(i) = cache.iter().position(|(k, _)| *k == key) {
            let hit = cache.remove(i);
            let args = Rc::clone(&hit.1);
            cache.push(hit);
            return Ok(args);
        }
        if cache.len() >= ARGS_KEPT {
            cache.remove(0);
        }
        let args = match DeviceArgs::new(launch, &self.library, &self.primary, self.seed) {
            Ok(a) => a,
            // Out of memory with others kept: free them and try once more.
            Err(_) if !cache.is_empty() => {
                cache.clear();
                DeviceArgs::new(launch, &self.library, &self.primary, self.seed)?
            }
            Err(e) => return Err(e),
        };
        let args = Rc::new(args);
        cache.push((key, Rc::clone(&args)));
        Ok(args)
    }

    /// Green contexts of `sizes` SMs, made once per split.
    fn partitions_for(&self, sizes: &[u32]) -> Result<Rc<Vec<GreenPartition>>> {
        if let Some(p) = self.partitions.borrow().get(sizes) {
            return Ok(Rc::clone(p));
        }
        let made = Rc::new(create_partitions(
            self.device.ordinal,
            self.device.cc_major,
            sizes,
        )?);
        self.partitions
            .borrow_mut()
            .insert(sizes.to_vec(), Rc::clone(&made));
        Ok(made)
    }

    /// How the green contexts of the pairs were made (each distinct way).
    fn green_provenance(&self) -> String {
        let mut seen: Vec<String> = Vec::new();
        for parts in self.partitions.borrow().values() {
            for p in parts.iter() {
                if !seen.iter().any(|s| s == p.provenance()) {
                    seen.push(p.provenance().to_string());
                }
            }
        }
        if seen.is_empty() {
            return "none made".into();
        }
        seen.sort();
        seen.join(" | ")
    }

    /// The stand-in of `k` and its loaded entry.
    fn prepare(&self, k: &KernelSpec) -> Result<(StandIn, LoadedKernel)> {
        let s = stand_in(k).map_err(|e| GpuError::Library(e.to_string()))?;
        let loaded = self.library.kernel(&s.launch.entry)?;
        Ok((s, loaded))
    }

    /// The stand-in's launch on `context` / `stream`.
    fn launch<'a>(
        s: &StandIn,
        loaded: &LoadedKernel,
        args: &'a DeviceArgs,
        context: cudarc::driver::sys::CUcontext,
        stream: cudarc::driver::sys::CUstream,
    ) -> KernelLaunch<'a> {
        KernelLaunch {
            kernel: loaded.kernel,
            grid: s.launch.grid,
            block: s.launch.block,
            args,
            context,
            stream,
        }
    }

    /// The solo time of a stand-in on `sms` SMs: measured by `standalone`
    /// earlier in the campaign, else now with `timer` (which runs on a
    /// partition of that size).
    fn solo(&self, s: &StandIn, sms: u32, timer: &Timer<'_>) -> Result<f64> {
        let key = (solo_key(s), sms);
        if let Some(&t) = self.solo_us.borrow().get(&key) {
            return Ok(t);
        }
        let t = timer.time(self.cfg)?.median_us;
        self.solo_us.borrow_mut().insert(key, t);
        Ok(t)
    }

    /// A measurement of `s` on `sms` SMs timed as `t`.
    fn measurement(
        &self,
        s: &StandIn,
        loaded: &LoadedKernel,
        sms: u32,
        t: Timing,
    ) -> Result<Measurement> {
        let mut counters = CounterSet::default();
        counters.set(Counter::DurationNs, t.median_us * 1e3);
        let launched = s.launched(loaded.resources.registers, loaded.resources.shared_bytes);
        let occ = Occupancy::of(&launched, &self.spec)?;
        for (c, v) in launch_counters(&launched, &occ, sms) {
            counters.set(c, v);
        }
        Ok(Measurement {
            duration_us: t.median_us,
            counters,
            spread_pct: Some(t.spread_pct),
        })
    }
}

/// Identity of a stand-in launch (entry, grid and every parameter).
fn solo_key(s: &StandIn) -> String {
    format!(
        "{}:{:?}:{:?}",
        s.launch.entry, s.launch.grid, s.launch.params
    )
}

impl Backend for CudaBackend {
    fn spec(&self) -> &GpuSpec {
        &self.spec
    }

    fn counters(&self) -> Vec<Counter> {
        if self.ncu.is_some() {
            return Counter::ALL.to_vec();
        }
        std::iter::once(Counter::DurationNs)
            .chain(LAUNCH_COUNTERS)
            .collect()
    }

    fn settings(&self) -> Vec<(&'static str, String)> {
        let d = &self.device;
        vec![
            ("device", format!("{} (ordinal {})", d.name, d.ordinal)),
            ("compute_capability", d.compute_capability()),
            ("cuda_driver", d.cuda_version.clone()),
            ("partition_rule", d.partition_rule.clone()),
            ("warmup", self.cfg.warmup.to_string()),
            ("repetitions", self.cfg.repetitions.to_string()),
            (
                "duration",
                "median of the timed repetitions, CUDA events".into(),
            ),
            (
                "kernels",
                "library stand-ins sized to each kernel's FLOPs and DRAM bytes \
                 (launch__grid_size and launch__block_size are the stand-in's)"
                    .into(),
            ),
            ("co_runner_idle", co_runner_idle(self.co_sides.get())),
            ("green_contexts", self.green_provenance()),
            (
                "counters",
                match &self.ncu {
                    Some(_) => "Nsight Compute (ncu --clock-control none --cache-control \
                                none), one standalone launch each on its green context, run \
                                after this process released its buffers and green contexts; \
                                duration_us and the launch counters are the CUDA-event \
                                measurement's"
                        .into(),
                    None => "duration and launch counters only; the rest need \
                             --counters ncu"
                        .into(),
                },
            ),
        ]
    }

    fn standalone(&self, kernel: &KernelSpec, partition: Partition) -> Result<Measurement> {
        partition.check(&self.spec)?;
        let (s, loaded) = self.prepare(kernel)?;
        let args = self.args_for(&s.launch, 0)?;
        let sms = partition.sm_count;
        let (_parts, context, stream) = self.solo_place(sms)?;
        let launch = Self::launch(&s, &loaded, &args, context, stream);
        let t = Timer::new(&launch)?.time(self.cfg)?;
        self.solo_us
            .borrow_mut()
            .insert((solo_key(&s), sms), t.median_us);
        let mut m = self.measurement(&s, &loaded, sms, t)?;
        if let Some(ncu) = &self.ncu {
            // The child needs the device's memory and contexts: release the
            // cached buffers and green contexts first (they are made again
            // on demand).
            // (`launch` only borrows `args`: it is done once `args` goes.)
            drop(args);
            drop(_parts);
            self.args.borrow_mut().clear();
            self.partitions.borrow_mut().clear();
            let counters = ncu.measure(kernel, &s.launch.entry, sms)?;
            m.counters = with_ncu_counters(&m.counters, counters);
        }
        Ok(m)
    }

    fn co_run(
        &self,
        a: &KernelSpec,
        pa: Partition,
        b: &KernelSpec,
        pb: Partition,
    ) -> Result<(Measurement, Measurement)> {
        Partition::check_disjoint(&pa, &pb, &self.spec)?;
        let (sa, loaded_a) = self.prepare(a)?;
        let (sb, loaded_b) = self.prepare(b)?;
        let args_a = self.args_for(&sa.launch, 0)?;
        let args_b = self.args_for(&sb.launch, 1)?;
        let parts = self.partitions_for(&[pa.sm_count, pb.sm_count])?;
        let la = Self::launch(
            &sa,
            &loaded_a,
            &args_a,
            parts[0].context(),
            parts[0].stream(),
        );
        let lb = Self::launch(
            &sb,
            &loaded_b,
            &args_b,
            parts[1].context(),
            parts[1].stream(),
        );
        let (ta, tb) = (Timer::new(&la)?, Timer::new(&lb)?);
        let solo_a = self.solo(&sa, pa.sm_count, &ta)?;
        let solo_b = self.solo(&sb, pb.sm_count, &tb)?;
        let (co_a, idle_a) = ta.beside(self.cfg, &tb, chunk_launches(solo_b))?;
        let (co_b, idle_b) = tb.beside(self.cfg, &ta, chunk_launches(solo_a))?;
        let (sides, idle) = self.co_sides.get();
        self.co_sides.set((
            sides + 2,
            idle + u64::from(idle_a > 0) + u64::from(idle_b > 0),
        ));
        Ok((
            self.measurement(&sa, &loaded_a, pa.sm_count, co_a)?,
            self.measurement(&sb, &loaded_b, pb.sm_count, co_b)?,
        ))
    }
}

/// `--counters ncu` runs ncu on a child process that needs its own context
/// on the device while this process keeps its primary context: impossible
/// when the device admits one process at a time.
fn ncu_child_can_run(compute_mode: &str) -> Result<()> {
    if compute_mode.eq_ignore_ascii_case("Exclusive_Process") {
        return Err(GpuError::Device(
            "--counters ncu needs the device's compute mode Default: under Exclusive_Process \
             the ncu child cannot open a context while tally holds one (nvidia-smi -c DEFAULT, \
             or import an ncu export with tally import-ncu)"
                .into(),
        ));
    }
    Ok(())
}

/// A measured row's counters with Nsight Compute's: ncu's for every
/// counter but the duration and the launch counters, which stay the
/// measurement's (the CUDA-event median, and the stand-in's launch as it
/// ran): ncu replays a kernel once under its own conditions, so its
/// `gpu__time_duration.sum` is not the row's duration.
fn with_ncu_counters(measured: &CounterSet, mut ncu: CounterSet) -> CounterSet {
    for c in std::iter::once(Counter::DurationNs).chain(LAUNCH_COUNTERS) {
        ncu.set(c, measured.get(c));
    }
    ncu
}

/// How many pair sides found their co-runner's queue empty at least once
/// (`(sides measured, sides with an empty queue)`), for `run.json`: such a
/// side was measured beside a co-runner that was not busy all the time.
fn co_runner_idle((sides, idle): (u64, u64)) -> String {
    format!("{idle} of {sides} pair sides found the co-runner's queue empty at least once")
}

#[cfg(test)]
mod tests {
    use super::*;
    use tally_gpu::cuda::driver_present;

    #[test]
    fn ncu_needs_a_device_that_admits_a_second_process() {
        assert!(ncu_child_can_run("Default").is_ok());
        let e = ncu_child_can_run("Exclusive_Process")
            .unwrap_err()
            .to_string();
        assert!(e.contains("compute mode Default"), "{e}");
    }

    #[test]
    fn ncu_counters_keep_the_event_duration_and_the_launch() {
        let mut measured = CounterSet::default();
        measured.set(Counter::DurationNs, 12_000.0);
        for c in LAUNCH_COUNTERS {
            measured.set(c, 7.0);
        }
        let mut ncu = CounterSet::default();
        ncu.set(Counter::DurationNs, 15_500.0);
        for &c in Counter::ALL.iter() {
            if c != Counter::DurationNs {
                ncu.set(c, 3.0);
            }
        }
        let merged = with_ncu_counters(&measured, ncu);
        assert_eq!(merged.get(Counter::DurationNs), 12_000.0);
        for &c in Counter::ALL.iter() {
            let want = if c == Counter::DurationNs {
                12_000.0
            } else if LAUNCH_COUNTERS.contains(&c) {
                7.0
            } else {
                3.0
            };
            assert_eq!(merged.get(c), want, "{c:?}");
        }
    }

    #[test]
    fn idle_co_runner_sides_are_reported() {
        assert_eq!(
            co_runner_idle((12, 3)),
            "3 of 12 pair sides found the co-runner's queue empty at least once"
        );
    }

    #[test]
    fn bad_settings_are_refused_before_the_driver_is_touched() {
        let h200 = GpuSpec::preset("h200").expect("preset");
        let none = TimingConfig {
            warmup: 3,
            repetitions: 0,
        };
        let e = CudaBackend::open(0, h200.clone(), 0, none).unwrap_err();
        assert!(e.to_string().contains("timed repetition"), "{e}");
        if !driver_present() {
            let e = CudaBackend::open(0, h200, 0, TimingConfig::default()).unwrap_err();
            assert!(matches!(e, GpuError::NoDriver), "{e}");
        }
    }
}
