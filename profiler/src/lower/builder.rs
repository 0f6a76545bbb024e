//! Shared construction of `KernelSpec`s: launch shapes, the invariants every
//! lowered kernel keeps (L2 sees at least the compulsory traffic, L1 at least
//! what L2 sees), and the streaming-kernel template most memory-bound
//! library kernels follow.

use tally_gpu::{Dim3, KernelKind, KernelSpec, MemoryUse, Work};

/// CUDA's limit on `gridDim.x`; larger launches use grid-stride loops.
const MAX_GRID_X: f64 = 2_147_483_647.0;

/// Elements per thread of a vectorized streaming kernel (PyTorch's
/// `vectorized_elementwise_kernel` does 4 per thread).
const ELEMS_PER_THREAD: f64 = 4.0;

/// Launch configuration of a kernel.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Launch {
    pub grid: Dim3,
    pub threads: u32,
    pub regs: u32,
    pub smem_static: u32,
    pub smem_dynamic: u32,
}

impl Launch {
    /// A launch without shared memory.
    pub fn simple(grid: Dim3, threads: u32, regs: u32) -> Launch {
        Launch {
            grid,
            threads,
            regs,
            smem_static: 0,
            smem_dynamic: 0,
        }
    }
}

/// A grid dimension from a (possibly fractional or huge) block count.
pub(crate) fn dim(blocks: f64) -> u32 {
    blocks.ceil().clamp(1.0, MAX_GRID_X) as u32
}

/// CUDA's limit on `gridDim.y` and `gridDim.z`.
const MAX_GRID_YZ: f64 = 65_535.0;

/// A `y` or `z` grid dimension.
pub(crate) fn dim_yz(blocks: f64) -> u32 {
    dim(blocks.min(MAX_GRID_YZ))
}

/// Shared memory bytes as a launch field.
pub(crate) fn smem(bytes: f64) -> u32 {
    bytes.clamp(0.0, f64::from(u32::MAX)) as u32
}

/// Ceiling division on float dimensions.
pub(crate) fn ceil_div(a: f64, b: f64) -> f64 {
    (a / b).ceil()
}

/// Raise L2 traffic to the compulsory DRAM traffic (every DRAM byte passes
/// through L2) and L1 traffic to the L2 traffic (L2 only sees what L1
/// requests), so rounding in a lowering can never produce an impossible spec.
pub(crate) fn clamp_memory(m: &mut MemoryUse) {
    m.l2_bytes = m.l2_bytes.max(m.compulsory_bytes());
    m.l1_bytes = m.l1_bytes.max(m.l2_bytes);
}

/// Assemble a kernel, enforcing the memory invariants.
pub(crate) fn kernel(
    name: String,
    kind: KernelKind,
    launch: Launch,
    work: Work,
    mut memory: MemoryUse,
) -> KernelSpec {
    clamp_memory(&mut memory);
    KernelSpec {
        name,
        kind,
        grid: launch.grid,
        block: Dim3::linear(launch.threads),
        registers_per_thread: launch.regs,
        shared_mem_static: launch.smem_static,
        shared_mem_dynamic: launch.smem_dynamic,
        work,
        memory,
    }
}

/// FP32 instruction mix for `flops` FLOPs per element over `elements`
/// elements: pairs of FLOPs become FFMAs, an odd one an FADD (how compiled
/// pointwise math typically fuses).
pub(crate) fn fp32_work(elements: f64, flops_per_element: f64) -> Work {
    let ffma = (flops_per_element / 2.0).floor();
    Work {
        ffma: ffma * elements,
        fadd: (flops_per_element - 2.0 * ffma) * elements,
        ..Work::default()
    }
}

/// A memory-bound kernel that streams its inputs once and writes its
/// outputs once.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stream {
    /// Elements processed (sets the grid: 4 per thread, vectorized).
    pub elements: f64,
    pub read: f64,
    pub write: f64,
    pub work: Work,
    pub threads: u32,
    pub regs: u32,
}

/// A streaming kernel: every byte is compulsory (read or written once), so
/// L1, L2 and DRAM traffic coincide and nothing needs to stay in L2; each
/// lane keeps one 16-byte vector in flight.
pub(crate) fn streaming_kernel(name: String, kind: KernelKind, s: Stream) -> KernelSpec {
    let blocks = ceil_div(s.elements, f64::from(s.threads) * ELEMS_PER_THREAD);
    let mut work = s.work;
    // Loads, stores, index math and the grid-stride loop: ~6 per warp-step.
    work.other_warp_insts += (s.elements / 32.0 * 6.0).ceil();
    kernel(
        name,
        kind,
        Launch::simple(Dim3::linear(dim(blocks)), s.threads, s.regs),
        work,
        MemoryUse {
            l1_bytes: s.read + s.write,
            l2_bytes: s.read + s.write,
            dram_read_bytes: s.read,
            dram_write_bytes: s.write,
            l2_working_set: 0.0,
            inflight_bytes_per_warp: 512.0,
        },
    )
}
