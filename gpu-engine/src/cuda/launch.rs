//! One planned launch on the device: the kernel's stand-in launched as the
//! entry its [`LaunchPlan`] names, with the stand-in's seeded arguments
//! followed by the variant's own parameters in `Entry::extra_params`'
//! order (the original grid `__tally_grid_{x,y,z}`, then the sliced
//! entry's `__tally_block_offset`, or the preemptive entry's
//! `__tally_counter` and `__tally_retreat` pointers; a test holds the
//! transforms to it). A preemptive launch sets its task counter
//! to the plan's first block and clears its retreat flag on its own stream
//! just before it, so the launch sees both whatever ran before.
//!
//! [`TaskSlot`] owns the device words those pointers name, and a pinned
//! host word per slot the counter is copied back to after the launch.
#![allow(unsafe_code)]

use std::ffi::c_void;
use std::rc::Rc;

use cudarc::driver::sys;
use tally_gpu::cuda::driver::check;
use tally_gpu::cuda::timer::Launch;
use tally_gpu::{GpuError, Result};
use tally_kernels::cuda_backend::{launch_on_stream, DeviceArgs};
use tally_kernels::launch_plan::{Entry, ExtraParam, LaunchPlan};

/// Task counters and retreat flags in device memory (two 4-byte words per
/// slot), and each slot's counter as copied back to pinned host memory.
/// Allocated in the current context (the primary); freed on drop.
#[derive(Debug)]
pub struct TaskSlot {
    device: sys::CUdeviceptr,
    host: *mut u32,
    slots: usize,
}

impl Drop for TaskSlot {
    fn drop(&mut self) {
        // SAFETY: both allocations were made by `alloc`, are owned only
        // here and freed once; their users (launches, copies) have been
        // drained by the owner first.
        unsafe {
            let _ = sys::cuMemFree_v2(self.device);
            let _ = sys::cuMemFreeHost(self.host.cast());
        }
    }
}

impl TaskSlot {
    /// `slots` zeroed counter-and-flag pairs.
    pub fn alloc(slots: usize) -> Result<TaskSlot> {
        let mut t = TaskSlot {
            device: 0,
            host: std::ptr::null_mut(),
            slots,
        };
        let mut host: *mut c_void = std::ptr::null_mut();
        // SAFETY: a context is current (the caller's primary); each call
        // writes only its out-parameter, owned by `t` from then on (so an
        // error frees what was allocated); the memset covers exactly the
        // 2 * slots words allocated. A "synchronous" memset of device
        // memory may still be running when it returns (the driver API's
        // synchronisation rules: asynchronous with respect to the host
        // unless the target is pinned or managed memory), and it is on the
        // legacy default stream, which the jobs' non-blocking streams do
        // not wait for: so that stream is synchronised before any job
        // stream can read a counter.
        unsafe {
            check(
                "cuMemAlloc",
                sys::cuMemAlloc_v2(&mut t.device, slots * 2 * std::mem::size_of::<u32>()),
            )?;
            check("cuMemsetD32", sys::cuMemsetD32_v2(t.device, 0, slots * 2))?;
            check(
                "cuStreamSynchronize (after the slots' memset)",
                sys::cuStreamSynchronize(std::ptr::null_mut()),
            )?;
            check(
                "cuMemAllocHost",
                sys::cuMemAllocHost_v2(&mut host, slots * std::mem::size_of::<u32>()),
            )?;
        }
        t.host = host.cast();
        Ok(t)
    }

    fn check_slot(&self, slot: usize) {
        assert!(slot < self.slots, "slot {slot} of {}", self.slots);
    }

    /// Slot `slot`'s task counter.
    pub fn counter(&self, slot: usize) -> sys::CUdeviceptr {
        self.check_slot(slot);
        self.device + (slot * 8) as u64
    }

    /// Slot `slot`'s retreat flag.
    pub fn flag(&self, slot: usize) -> sys::CUdeviceptr {
        self.counter(slot) + 4
    }

    /// Queue on `stream` the copy of slot `slot`'s counter to its host word.
    pub fn copy_counter_back(&self, slot: usize, stream: sys::CUstream) -> Result<()> {
        // SAFETY: the host word is pinned and lives as long as `self`;
        // 4 bytes from a live device word.
        unsafe {
            check(
                "cuMemcpyDtoHAsync",
                sys::cuMemcpyDtoHAsync_v2(
                    self.host.add(slot).cast(),
                    self.counter(slot),
                    std::mem::size_of::<u32>(),
                    stream,
                ),
            )
        }
    }

    /// Slot `slot`'s counter as last copied back (read once the copy's
    /// stream has passed it).
    pub fn copied_counter(&self, slot: usize) -> u32 {
        self.check_slot(slot);
        // SAFETY: in bounds of the pinned allocation; the copy that wrote
        // it has completed (the caller's event says so); volatile because
        // the device, not this thread, wrote it.
        unsafe { self.host.add(slot).read_volatile() }
    }

    /// Queue on `stream` a write of `value` to device word `at`.
    ///
    /// A stream memory operation (`cuStreamWriteValue32`), not a memset:
    /// the driver may run a memset as a kernel, which needs a free block
    /// slot, and a preemptive kernel's persistent workers at full occupancy
    /// release none until they end, so a retreat written that way could
    /// land only when the kernel it is meant to stop has finished. A write
    /// value is executed by the stream's front end, needs no SM, and is
    /// documented for signalling between streams and kernels (the V2 API,
    /// available by default since CUDA 11.7; the default flag fences the
    /// stream's earlier writes before it).
    pub fn set(at: sys::CUdeviceptr, value: u32, stream: sys::CUstream) -> Result<()> {
        // SAFETY: `at` is a word of a live `TaskSlot` (device memory, not
        // managed); one 4-byte word.
        unsafe {
            check(
                "cuStreamWriteValue32",
                sys::cuStreamWriteValue32_v2(
                    stream,
                    at,
                    value,
                    sys::CUstreamWriteValue_flags::CU_STREAM_WRITE_VALUE_DEFAULT as u32,
                ),
            )
        }
    }
}

/// The variant's own parameters, boxed so the pointers to them stay put.
#[derive(Debug, Default)]
struct Extras {
    grid: [u32; 3],
    offset: u32,
    counter: u64,
    flag: u64,
}

/// A kernel's stand-in launched as a plan says.
#[derive(Debug)]
pub struct PlannedLaunch {
    kernel: sys::CUkernel,
    block: [u32; 3],
    args: Rc<DeviceArgs>,
    plan: LaunchPlan,
    context: sys::CUcontext,
    stream: sys::CUstream,
    extras: Box<Extras>,
}

impl PlannedLaunch {
    /// `slot`: where a preemptive plan's counter and flag live (required
    /// for one, ignored otherwise).
    pub fn new(
        kernel: sys::CUkernel,
        block: [u32; 3],
        args: Rc<DeviceArgs>,
        plan: LaunchPlan,
        context: sys::CUcontext,
        stream: sys::CUstream,
        slot: Option<(&TaskSlot, usize)>,
    ) -> Result<PlannedLaunch> {
        let mut extras = Box::new(Extras {
            grid: plan.original_grid.unwrap_or(plan.grid),
            offset: plan.block_offset.unwrap_or(0),
            ..Extras::default()
        });
        if plan.entry == Entry::Preempt {
            let (s, i) = slot.ok_or_else(|| {
                GpuError::Device("a preemptive launch needs a task counter slot".into())
            })?;
            extras.counter = s.counter(i);
            extras.flag = s.flag(i);
        }
        Ok(PlannedLaunch {
            kernel,
            block,
            args,
            plan,
            context,
            stream,
            extras,
        })
    }

    /// The argument array: the stand-in's, then the variant's in the
    /// order `Entry::extra_params` gives (the transforms' convention).
    fn params(&self) -> Vec<*mut c_void> {
        let e: &Extras = &self.extras;
        let ptr = |v: &u32| (v as *const u32).cast_mut().cast::<c_void>();
        let ptr64 = |v: &u64| (v as *const u64).cast_mut().cast::<c_void>();
        let mut params = self.args.param_pointers().to_vec();
        params.extend(self.plan.entry.extra_params().iter().map(|p| match p {
            ExtraParam::GridX => ptr(&e.grid[0]),
            ExtraParam::GridY => ptr(&e.grid[1]),
            ExtraParam::GridZ => ptr(&e.grid[2]),
            ExtraParam::BlockOffset => ptr(&e.offset),
            ExtraParam::Counter => ptr64(&e.counter),
            ExtraParam::Retreat => ptr64(&e.flag),
        }));
        params
    }
}

impl Launch for PlannedLaunch {
    fn context(&self) -> sys::CUcontext {
        self.context
    }

    fn stream(&self) -> sys::CUstream {
        self.stream
    }

    fn enqueue(&self) -> Result<()> {
        self.arm()?;
        self.launch_kernel()
    }
}

impl PlannedLaunch {
    /// Queue a preemptive plan's counter and flag writes (nothing for the
    /// other entries).
    pub fn arm(&self) -> Result<()> {
        if let Some(start) = self.plan.counter_start {
            TaskSlot::set(self.extras.counter, start, self.stream)?;
            TaskSlot::set(self.extras.flag, 0, self.stream)?;
        }
        Ok(())
    }

    /// Queue the kernel itself.
    pub fn launch_kernel(&self) -> Result<()> {
        let mut params = self.params();
        // SAFETY: `params` has one pointer per parameter of the entry in
        // order (the stand-in's, as the manifest lists them, then the
        // transform's extras), each to a value of the parameter's type
        // that lives through the call; the buffers live as long as `args`;
        // the stream is of the current (primary) context.
        unsafe {
            launch_on_stream(
                self.kernel,
                self.plan.grid,
                self.block,
                self.stream,
                params.as_mut_ptr(),
            )
        }
    }
}
