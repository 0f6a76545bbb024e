//! Seeded device data for a stand-in's input buffers, generated on the GPU
//! itself: a stand-in can take gigabytes (a 7B model's weight matrices),
//! which a host generator and a copy would spend seconds on per kernel.
//! Each element is a hash of the buffer's seed and its index (SplitMix64's
//! finaliser), so the data are the same on every run and every device, and
//! drawn from the range the manifest gives the buffer (indices below `max`,
//! floats in `[lo, hi)`), which keeps every kernel inside its buffers and
//! its arithmetic finite.

use crate::library::{ElemType, Param};
use tally_gpu::rng::SplitMix64;

/// File name of the fill kernels in compiler messages.
pub const FILE: &str = "tally_fill.cu";

/// The fill kernels: one per element type, grid-stride, 64-bit indices.
pub const SOURCE: &str = r#"
typedef unsigned long long u64;

__device__ __forceinline__ u64 tally_mix(u64 z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Uniform in [0, 1) with 24 bits, exact in f32.
__device__ __forceinline__ float tally_unit(u64 seed, u64 i) {
    return (float)(tally_mix(seed ^ tally_mix(i)) >> 40) * (1.0f / 16777216.0f);
}

#define TALLY_FOR_EACH(n) \
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
         i += (u64)gridDim.x * blockDim.x)

extern "C" __global__ void tally_fill_f32(float* p, u64 n, u64 seed, float lo, float hi) {
    TALLY_FOR_EACH(n) { p[i] = lo + (hi - lo) * tally_unit(seed, i); }
}

// f16 and bf16 differ only in the conversion instruction.
#define TALLY_FILL_HALF(name, cvt)                                                  \
    extern "C" __global__ void name(unsigned short* p, u64 n, u64 seed, float lo,   \
                                    float hi) {                                     \
        TALLY_FOR_EACH(n) {                                                         \
            float f = lo + (hi - lo) * tally_unit(seed, i);                         \
            unsigned short h;                                                       \
            asm(cvt " %0, %1;" : "=h"(h) : "f"(f));                                 \
            p[i] = h;                                                               \
        }                                                                           \
    }

TALLY_FILL_HALF(tally_fill_f16, "cvt.rn.f16.f32")
TALLY_FILL_HALF(tally_fill_bf16, "cvt.rn.bf16.f32")

extern "C" __global__ void tally_fill_i32(int* p, u64 n, u64 seed, unsigned max) {
    TALLY_FOR_EACH(n) { p[i] = (int)(tally_mix(seed ^ tally_mix(i)) % (u64)max); }
}
"#;

/// The fill kernels' entry names.
pub const ENTRIES: [&str; 4] = [
    "tally_fill_f32",
    "tally_fill_f16",
    "tally_fill_bf16",
    "tally_fill_i32",
];

/// Threads per block of the fill kernels.
pub const THREADS: u32 = 256;
/// Blocks of a fill launch at most (grid-stride beyond that).
pub const MAX_BLOCKS: u32 = 4096;

/// How one input buffer is filled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fill {
    /// Floats uniform in `[lo, hi)`.
    Float {
        entry: &'static str,
        lo: f32,
        hi: f32,
    },
    /// Integers uniform in `[0, max)`.
    Index { max: u32 },
}

impl Fill {
    /// The fill kernel's entry name.
    pub fn entry(&self) -> &'static str {
        match self {
            Fill::Float { entry, .. } => entry,
            Fill::Index { .. } => "tally_fill_i32",
        }
    }
}

/// The fill of buffer parameter `p` (`None` for an output, which starts
/// zeroed, and for scalars). Integer buffers without a `max` get indices
/// below 1024, the host generator's range for them.
pub fn fill_of(p: &Param) -> Option<Fill> {
    let Param::Ptr {
        dtype,
        role,
        max,
        lo,
        hi,
        ..
    } = p
    else {
        return None;
    };
    if *role == crate::library::Role::Out {
        return None;
    }
    let (lo, hi) = (lo.unwrap_or(-1.0) as f32, hi.unwrap_or(1.0) as f32);
    Some(match dtype {
        ElemType::F32 => Fill::Float {
            entry: "tally_fill_f32",
            lo,
            hi,
        },
        ElemType::F16 => Fill::Float {
            entry: "tally_fill_f16",
            lo,
            hi,
        },
        ElemType::Bf16 => Fill::Float {
            entry: "tally_fill_bf16",
            lo,
            hi,
        },
        ElemType::I32 => Fill::Index {
            max: max.unwrap_or(1024).max(1),
        },
    })
}

/// The seed of parameter `index` of a launch filled with `seed`.
pub fn buffer_seed(seed: u64, index: usize) -> u64 {
    SplitMix64::keyed(seed, &[0x6669_6c6c, index as u64]).next_u64()
}

/// Blocks of a fill of `elems` elements.
pub fn fill_blocks(elems: u64) -> u32 {
    elems
        .div_ceil(u64::from(THREADS))
        .clamp(1, u64::from(MAX_BLOCKS)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library::{self, Role};
    use tally_gpu::cuda::{compile_to_ptx, locate_nvrtc, locate_ptxas, Arch};

    #[test]
    fn every_library_input_has_a_fill_in_its_range() {
        for k in library::kernels().expect("manifest") {
            for p in &k.params {
                let Param::Ptr { role, dtype, .. } = p else {
                    assert_eq!(fill_of(p), None);
                    continue;
                };
                match (fill_of(p), role) {
                    (None, Role::Out) => {}
                    (Some(Fill::Index { max }), _) => {
                        assert_eq!(*dtype, ElemType::I32);
                        assert!(max >= 1);
                    }
                    (Some(Fill::Float { entry, lo, hi }), _) => {
                        assert!(lo < hi, "{}: {lo}..{hi}", k.entry);
                        assert!(ENTRIES.contains(&entry), "{entry}");
                    }
                    (f, r) => panic!("{}: {f:?} for a {r:?} buffer", k.entry),
                }
            }
        }
        // Adam's second moment must stay non-negative.
        let adam = library::kernels()
            .unwrap()
            .iter()
            .find(|k| k.entry == "adam_step_f32")
            .unwrap();
        let sq = adam
            .params
            .iter()
            .find(|p| p.name() == "exp_avg_sq")
            .unwrap();
        assert!(matches!(fill_of(sq), Some(Fill::Float { lo, .. }) if lo >= 0.0));
    }

    #[test]
    fn seeds_differ_by_buffer_and_grids_stay_bounded() {
        assert_ne!(buffer_seed(1, 0), buffer_seed(1, 1));
        assert_ne!(buffer_seed(1, 0), buffer_seed(2, 0));
        assert_eq!(buffer_seed(7, 3), buffer_seed(7, 3));
        assert_eq!(fill_blocks(0), 1);
        assert_eq!(fill_blocks(257), 2);
        assert_eq!(fill_blocks(1 << 40), MAX_BLOCKS);
    }

    #[test]
    fn the_fill_kernels_build_for_every_architecture() {
        if locate_nvrtc().is_err() || locate_ptxas().is_err() {
            eprintln!("NVRTC / ptxas not installed: fill kernels not checked");
            return;
        }
        for arch in Arch::ALL {
            let ptx = compile_to_ptx(SOURCE, FILE, arch).expect("compiles");
            let resources = tally_gpu::cuda::assemble(&ptx, FILE, arch).expect("assembles");
            for entry in [
                "tally_fill_f32",
                "tally_fill_f16",
                "tally_fill_bf16",
                "tally_fill_i32",
            ] {
                let r = resources.iter().find(|r| r.name == entry).expect(entry);
                assert!(r.is_entry && r.shared_bytes == 0 && r.spill_store_bytes == 0);
            }
        }
    }
}
