//! Values as the interpreter sees them: bytes per PTX type, bit widths,
//! truncation and sign extension, and an instruction's type modifiers.
//! Test support only.

#![allow(dead_code)]

use tally_kernels::ptx::ast::Instruction;

pub fn type_bytes(ty: &str) -> usize {
    match ty {
        "b8" | "u8" | "s8" => 1,
        "b16" | "u16" | "s16" | "f16" => 2,
        "b64" | "u64" | "s64" | "f64" => 8,
        _ => 4,
    }
}

pub fn width(ty: &str) -> u32 {
    match ty {
        "b8" | "u8" | "s8" => 8,
        "b16" | "u16" | "s16" => 16,
        "b64" | "u64" | "s64" => 64,
        "pred" => 1,
        _ => 32,
    }
}

pub fn trunc(v: u64, w: u32) -> u64 {
    if w >= 64 {
        v
    } else {
        v & ((1u64 << w) - 1)
    }
}

pub fn sext(v: u64, w: u32) -> i64 {
    if w >= 64 {
        v as i64
    } else {
        let shift = 64 - w;
        ((v << shift) as i64) >> shift
    }
}

pub const TYPES: &[&str] = &[
    "b8", "u8", "s8", "b16", "u16", "s16", "b32", "u32", "s32", "b64", "u64", "s64", "pred",
];

/// The type modifiers of an instruction, in order.
pub fn types(i: &Instruction) -> Vec<&str> {
    i.modifiers
        .iter()
        .map(String::as_str)
        .filter(|m| TYPES.contains(m))
        .collect()
}
