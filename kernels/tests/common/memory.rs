//! The interpreter's world: flat global memory and one launch's
//! configuration (grid, block, parameters, shared memory, step limit).
//! Test support only.

#![allow(dead_code)]

use std::collections::HashMap;

/// Flat global memory starting at `GLOBAL_BASE`, grown by `alloc`.
#[derive(Debug, Default, Clone)]
pub struct Memory {
    pub bytes: Vec<u8>,
}

pub const GLOBAL_BASE: u64 = 0x1000_0000;

impl Memory {
    /// Allocates `n` zeroed bytes (16-aligned) and returns their address.
    pub fn alloc(&mut self, n: usize) -> u64 {
        let pad = (16 - self.bytes.len() % 16) % 16;
        self.bytes.resize(self.bytes.len() + pad, 0);
        let addr = GLOBAL_BASE + self.bytes.len() as u64;
        self.bytes.resize(self.bytes.len() + n, 0);
        addr
    }

    fn index(&self, addr: u64, n: usize) -> Result<usize, String> {
        let off = addr
            .checked_sub(GLOBAL_BASE)
            .ok_or_else(|| format!("global address {addr:#x} below base"))?;
        let off = usize::try_from(off).map_err(|_| "address overflow".to_string())?;
        if off + n > self.bytes.len() {
            return Err(format!("global access {addr:#x}+{n} out of bounds"));
        }
        Ok(off)
    }

    pub fn read(&self, addr: u64, n: usize) -> Result<u64, String> {
        let off = self.index(addr, n)?;
        Ok(read_le(&self.bytes[off..off + n]))
    }

    pub fn write(&mut self, addr: u64, n: usize, v: u64) -> Result<(), String> {
        let off = self.index(addr, n)?;
        write_le(&mut self.bytes[off..off + n], v);
        Ok(())
    }

    pub fn read_u32(&self, addr: u64) -> u32 {
        self.read(addr, 4).expect("in bounds") as u32
    }

    pub fn write_u32(&mut self, addr: u64, v: u32) {
        self.write(addr, 4, u64::from(v)).expect("in bounds");
    }
}

pub fn read_le(b: &[u8]) -> u64 {
    b.iter()
        .rev()
        .fold(0u64, |acc, &x| (acc << 8) | u64::from(x))
}

pub fn write_le(b: &mut [u8], mut v: u64) {
    for x in b {
        *x = v as u8;
        v >>= 8;
    }
}

/// One launch's configuration.
#[derive(Debug, Clone)]
pub struct Launch {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Scalar parameter values by name.
    pub params: HashMap<String, u64>,
    /// Seed of the schedule: the per-turn instruction quantum (1..=4) in
    /// round-robin mode, every choice of thread in adversarial mode.
    pub seed: u64,
    /// Adversarial schedule: at every step a thread chosen at random among
    /// the runnable ones executes one instruction, so threads of one warp
    /// diverge and warps interleave at every barrier and memory operation
    /// (the orders a real SM may produce). Otherwise round robin over the
    /// threads with a seeded quantum.
    pub adversarial: bool,
    /// Bytes given to `.extern .shared` arrays.
    pub dynamic_shared: usize,
    pub max_steps: u64,
}

impl Launch {
    pub fn new(grid: [u32; 3], block: [u32; 3]) -> Launch {
        Launch {
            grid,
            block,
            params: HashMap::new(),
            seed: 1,
            adversarial: false,
            dynamic_shared: 256,
            max_steps: 20_000_000,
        }
    }

    pub fn param(mut self, name: &str, v: u64) -> Launch {
        self.params.insert(name.to_string(), v);
        self
    }
}
