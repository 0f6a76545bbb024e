//! `KernelSpec`: one kernel launch as the device layer sees it — launch
//! configuration, the work it does and how it uses the memory hierarchy —
//! and its stable identity (`op_id`) used as the key of every dataset row.

use serde::{Deserialize, Serialize};

/// A CUDA grid or block dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

impl Dim3 {
    pub const fn new(x: u32, y: u32, z: u32) -> Dim3 {
        Dim3 { x, y, z }
    }

    pub const fn linear(x: u32) -> Dim3 {
        Dim3 { x, y: 1, z: 1 }
    }

    pub fn count(&self) -> u64 {
        u64::from(self.x) * u64::from(self.y) * u64::from(self.z)
    }
}

impl std::fmt::Display for Dim3 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "({},{},{})", self.x, self.y, self.z)
    }
}

/// What kind of library kernel this is (how it was lowered).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KernelKind {
    Gemm,
    Gemv,
    Conv,
    Elementwise,
    Reduction,
    Softmax,
    LayerNorm,
    Attention,
    Embedding,
    Optimizer,
    Copy,
}

impl KernelKind {
    pub const ALL: [KernelKind; 11] = [
        KernelKind::Gemm,
        KernelKind::Gemv,
        KernelKind::Conv,
        KernelKind::Elementwise,
        KernelKind::Reduction,
        KernelKind::Softmax,
        KernelKind::LayerNorm,
        KernelKind::Attention,
        KernelKind::Embedding,
        KernelKind::Optimizer,
        KernelKind::Copy,
    ];

    pub fn as_str(&self) -> &'static str {
        match self {
            KernelKind::Gemm => "gemm",
            KernelKind::Gemv => "gemv",
            KernelKind::Conv => "conv",
            KernelKind::Elementwise => "elementwise",
            KernelKind::Reduction => "reduction",
            KernelKind::Softmax => "softmax",
            KernelKind::LayerNorm => "layer_norm",
            KernelKind::Attention => "attention",
            KernelKind::Embedding => "embedding",
            KernelKind::Optimizer => "optimizer",
            KernelKind::Copy => "copy",
        }
    }

    pub fn parse(s: &str) -> Option<KernelKind> {
        KernelKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// Arithmetic work of the whole launch, as thread-level instruction counts
/// the way Nsight Compute counts them (`smsp__sass_thread_inst_executed_op_*`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Work {
    pub fadd: f64,
    pub fmul: f64,
    pub ffma: f64,
    pub hadd: f64,
    pub hmul: f64,
    pub hfma: f64,
    /// Dense tensor-core FLOPs (MMA instructions).
    pub tensor_flops: f64,
    /// Warp-level instructions that are not floating-point math (integer,
    /// address, load/store, control); they compete for issue slots.
    pub other_warp_insts: f64,
}

impl Work {
    /// FP32 FLOPs (an FFMA counts two).
    pub fn fp32_flops(&self) -> f64 {
        self.fadd + self.fmul + 2.0 * self.ffma
    }

    /// Non-tensor FP16 FLOPs (an HFMA counts two).
    pub fn fp16_flops(&self) -> f64 {
        self.hadd + self.hmul + 2.0 * self.hfma
    }

    pub fn total_flops(&self) -> f64 {
        self.fp32_flops() + self.fp16_flops() + self.tensor_flops
    }
}

/// How the launch uses the memory hierarchy. Byte counts are for the whole
/// launch; the simulator divides them over blocks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryUse {
    /// Bytes requested by global loads and stores (L1 / texture sectors).
    pub l1_bytes: f64,
    /// Bytes that miss L1 (or bypass it) and reach L2; at most `l1_bytes`.
    pub l2_bytes: f64,
    /// Unique bytes read from device memory: the compulsory DRAM reads.
    pub dram_read_bytes: f64,
    /// Unique bytes written to device memory.
    pub dram_write_bytes: f64,
    /// Footprint that must stay in L2 for the re-reads (`l2_bytes` beyond the
    /// compulsory traffic) to hit; re-reads miss in proportion to how much of
    /// it does not fit in the L2 capacity the kernel holds.
    pub l2_working_set: f64,
    /// Bytes each resident warp keeps in flight while it waits on memory
    /// (memory-level parallelism: vector width x independent loads).
    pub inflight_bytes_per_warp: f64,
}

impl MemoryUse {
    pub fn compulsory_bytes(&self) -> f64 {
        self.dram_read_bytes + self.dram_write_bytes
    }
}

/// One kernel launch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelSpec {
    pub name: String,
    pub kind: KernelKind,
    pub grid: Dim3,
    pub block: Dim3,
    pub registers_per_thread: u32,
    pub shared_mem_static: u32,
    pub shared_mem_dynamic: u32,
    pub work: Work,
    pub memory: MemoryUse,
}

impl KernelSpec {
    pub fn blocks(&self) -> u64 {
        self.grid.count()
    }

    pub fn threads_per_block(&self) -> u32 {
        // Block dimensions are bounded by 1024 threads, so this fits.
        u32::try_from(self.block.count()).unwrap_or(u32::MAX)
    }

    pub fn warps_per_block(&self) -> u32 {
        self.threads_per_block().div_ceil(32)
    }

    pub fn shared_mem_per_block(&self) -> u32 {
        self.shared_mem_static + self.shared_mem_dynamic
    }

    /// Arithmetic intensity against DRAM: FLOPs per compulsory byte.
    pub fn arithmetic_intensity(&self) -> f64 {
        self.work.total_flops() / self.memory.compulsory_bytes().max(1.0)
    }

    /// Stable identity of the kernel: a hash of everything that determines
    /// its behaviour (name excluded, so identical kernels from different
    /// layers or models are profiled once). FNV-1a over a canonical encoding,
    /// rendered as 16 hex digits.
    pub fn op_id(&self) -> String {
        let mut h = Fnv64::new();
        h.write(self.kind.as_str().as_bytes());
        for v in [self.grid.x, self.grid.y, self.grid.z] {
            h.write(&v.to_le_bytes());
        }
        for v in [self.block.x, self.block.y, self.block.z] {
            h.write(&v.to_le_bytes());
        }
        for v in [
            self.registers_per_thread,
            self.shared_mem_static,
            self.shared_mem_dynamic,
        ] {
            h.write(&v.to_le_bytes());
        }
        for (_, v) in self.numeric_fields() {
            h.write(&v.to_bits().to_le_bytes());
        }
        format!("{:016x}", h.finish())
    }

    /// The work and memory quantities with their names, in one canonical
    /// order (the `op_id` hash and the dataset columns both use it).
    pub fn numeric_fields(&self) -> [(&'static str, f64); 14] {
        let w = &self.work;
        let m = &self.memory;
        [
            ("fadd", w.fadd),
            ("fmul", w.fmul),
            ("ffma", w.ffma),
            ("hadd", w.hadd),
            ("hmul", w.hmul),
            ("hfma", w.hfma),
            ("tensor_flops", w.tensor_flops),
            ("other_warp_insts", w.other_warp_insts),
            ("l1_bytes", m.l1_bytes),
            ("l2_bytes", m.l2_bytes),
            ("dram_read_bytes", m.dram_read_bytes),
            ("dram_write_bytes", m.dram_write_bytes),
            ("l2_working_set", m.l2_working_set),
            ("inflight_bytes_per_warp", m.inflight_bytes_per_warp),
        ]
    }

    /// Check the spec describes a launch that could exist.
    pub fn validate(&self) -> std::result::Result<(), String> {
        if self.grid.count() == 0 {
            return Err("grid has zero blocks".into());
        }
        if self.block.count() == 0 || self.block.count() > 1024 {
            return Err(format!(
                "block of {} threads (must be 1..=1024)",
                self.block.count()
            ));
        }
        for (field, v) in self.numeric_fields() {
            if !v.is_finite() || v < 0.0 {
                return Err(format!("{field} must be a finite number >= 0, got {v}"));
            }
        }
        let m = &self.memory;
        if m.l2_bytes > m.l1_bytes * (1.0 + 1e-9) {
            return Err("l2_bytes exceeds l1_bytes".into());
        }
        if m.l2_bytes > 0.0 && m.inflight_bytes_per_warp <= 0.0 {
            return Err(
                "memory.inflight_bytes_per_warp must be > 0 for a kernel that reads memory".into(),
            );
        }
        Ok(())
    }
}

/// Stable identity of a kernel known only by its name and launch
/// configuration (a profile imported from ncu, where the work and bytes are
/// measurements that vary run to run, not part of the kernel's identity).
pub fn named_launch_id(name: &str, grid: Dim3, block: Dim3) -> String {
    let mut h = Fnv64::new();
    h.write(name.as_bytes());
    h.write(&[0]);
    for v in [grid.x, grid.y, grid.z, block.x, block.y, block.z] {
        h.write(&v.to_le_bytes());
    }
    format!("{:016x}", h.finish())
}

/// 64-bit FNV-1a: tiny, dependency-free and stable across releases, which a
/// dataset key must be.
struct Fnv64(u64);

impl Fnv64 {
    fn new() -> Fnv64 {
        Fnv64(0xcbf2_9ce4_8422_2325)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> KernelSpec {
        KernelSpec {
            name: "add".into(),
            kind: KernelKind::Elementwise,
            grid: Dim3::linear(1000),
            block: Dim3::linear(256),
            registers_per_thread: 16,
            shared_mem_static: 0,
            shared_mem_dynamic: 0,
            work: Work {
                fadd: 256_000.0,
                ..Work::default()
            },
            memory: MemoryUse {
                l1_bytes: 3e6,
                l2_bytes: 3e6,
                dram_read_bytes: 2e6,
                dram_write_bytes: 1e6,
                l2_working_set: 0.0,
                inflight_bytes_per_warp: 512.0,
            },
        }
    }

    #[test]
    fn op_id_ignores_name_but_not_shape() {
        let a = sample();
        let mut b = sample();
        b.name = "layer3.add".into();
        assert_eq!(a.op_id(), b.op_id());
        b.grid = Dim3::linear(1001);
        assert_ne!(a.op_id(), b.op_id());
        assert_eq!(a.op_id().len(), 16);
    }

    #[test]
    fn validation_catches_impossible_specs() {
        assert!(sample().validate().is_ok());
        let mut k = sample();
        k.block = Dim3::linear(2048);
        assert!(k.validate().is_err());
        let mut k = sample();
        k.memory.l2_bytes = 4e6;
        assert!(k.validate().unwrap_err().contains("l2_bytes"));
    }
}
