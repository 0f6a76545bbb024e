//! Seeded host data for a library kernel's test launch: every buffer
//! parameter as raw bytes (f16 / bf16 as their bit patterns), values drawn
//! from the manifest's range, the same bytes for every run of every
//! variant; and the scalar parameters as launch arguments.

use crate::library::{ElemType, LibraryKernel, Param, Role};
use tally_gpu::rng::SplitMix64;

/// Byte written over output buffers before every run, so a block that a
/// variant forgets to run leaves a difference, not a coincidental zero.
pub const POISON: u8 = 0xA5;

/// One parameter's host side.
#[derive(Debug, Clone, PartialEq)]
pub enum HostArg {
    Buffer {
        name: String,
        role: Role,
        bytes: Vec<u8>,
    },
    I32(i32),
    U32(u32),
    F32(f32),
}

/// Host arguments of `k`'s test launch, seeded by `seed`.
pub fn host_args(k: &LibraryKernel, seed: u64) -> Vec<HostArg> {
    k.params
        .iter()
        .enumerate()
        .map(|(i, p)| match p {
            Param::Ptr {
                name,
                dtype,
                elems,
                role,
                max,
                lo,
                hi,
            } => {
                let n = usize::try_from(*elems).unwrap_or(0);
                let bytes = match role {
                    Role::Out => vec![POISON; n * dtype.bytes()],
                    Role::In | Role::Inout => {
                        let mut rng = SplitMix64::keyed(seed, &[i as u64]);
                        seeded(
                            *dtype,
                            n,
                            *max,
                            lo.unwrap_or(-1.0),
                            hi.unwrap_or(1.0),
                            &mut rng,
                        )
                    }
                };
                HostArg::Buffer {
                    name: name.clone(),
                    role: *role,
                    bytes,
                }
            }
            // The manifest's values are small; the casts are checked there.
            Param::I32 { value, .. } => HostArg::I32(*value as i32),
            Param::U32 { value, .. } => HostArg::U32(*value as u32),
            Param::F32 { value, .. } => HostArg::F32(*value as f32),
        })
        .collect()
}

fn seeded(
    dtype: ElemType,
    n: usize,
    max: Option<u32>,
    lo: f64,
    hi: f64,
    rng: &mut SplitMix64,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(n * dtype.bytes());
    for _ in 0..n {
        let x = lo + (hi - lo) * rng.next_f64();
        match dtype {
            ElemType::F32 => out.extend_from_slice(&(x as f32).to_le_bytes()),
            ElemType::F16 => out.extend_from_slice(&f32_to_f16_bits(x as f32).to_le_bytes()),
            ElemType::Bf16 => out.extend_from_slice(&f32_to_bf16_bits(x as f32).to_le_bytes()),
            ElemType::I32 => {
                let v = match max {
                    Some(m) => rng.below(u64::from(m.max(1))) as i32,
                    None => (x * 100.0) as i32,
                };
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
    }
    out
}

/// IEEE half from f32, round to nearest even (finite inputs; large values
/// saturate to infinity, tiny ones flush through subnormals to zero).
pub fn f32_to_f16_bits(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xff) as i32 - 127 + 15;
    let mant = b & 0x7f_ffff;
    if exp >= 31 {
        return sign | 0x7c00;
    }
    if exp <= 0 {
        if exp < -10 {
            return sign;
        }
        // Subnormal: shift the mantissa with its implicit bit into place.
        let m = mant | 0x80_0000;
        let shift = (14 - exp) as u32;
        let half = 1u32 << (shift - 1);
        let rounded = (m + half - 1 + ((m >> shift) & 1)) >> shift;
        return sign | rounded as u16;
    }
    let half = 0x1000u32;
    let rounded = mant + half - 1 + ((mant >> 13) & 1);
    let (exp, mant) = if rounded & 0x80_0000 != 0 {
        (exp + 1, 0)
    } else {
        (exp, rounded >> 13)
    };
    if exp >= 31 {
        return sign | 0x7c00;
    }
    sign | ((exp as u16) << 10) | mant as u16
}

/// bfloat16 from f32, round to nearest even (finite inputs).
pub fn f32_to_bf16_bits(x: f32) -> u16 {
    let b = x.to_bits();
    let rounded = b + 0x7fff + ((b >> 16) & 1);
    (rounded >> 16) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_conversions_match_known_bit_patterns() {
        assert_eq!(f32_to_f16_bits(1.0), 0x3c00);
        assert_eq!(f32_to_f16_bits(-2.0), 0xc000);
        assert_eq!(f32_to_f16_bits(0.5), 0x3800);
        assert_eq!(f32_to_f16_bits(65504.0), 0x7bff);
        assert_eq!(f32_to_f16_bits(1e6), 0x7c00);
        assert_eq!(f32_to_f16_bits(0.0), 0);
        // Smallest subnormal, 2^-24.
        assert_eq!(f32_to_f16_bits(2.0f32.powi(-24)), 1);
        // 1 + 2^-11 is halfway between 1 and the next half: ties to even.
        assert_eq!(f32_to_f16_bits(1.0 + 2.0f32.powi(-11)), 0x3c00);
        assert_eq!(f32_to_bf16_bits(1.0), 0x3f80);
        assert_eq!(f32_to_bf16_bits(-0.5), 0xbf00);
    }

    #[test]
    fn inputs_are_seeded_outputs_poisoned() {
        let k = &crate::library::kernels().unwrap()[0];
        let a = host_args(k, 1);
        assert_eq!(a, host_args(k, 1));
        assert_ne!(a, host_args(k, 2));
        for (arg, p) in a.iter().zip(&k.params) {
            if let (HostArg::Buffer { role, bytes, .. }, Param::Ptr { dtype, elems, .. }) = (arg, p)
            {
                assert_eq!(bytes.len() as u64, elems * dtype.bytes() as u64);
                if *role == Role::Out {
                    assert!(bytes.iter().all(|&b| b == POISON));
                }
            }
        }
    }
}
