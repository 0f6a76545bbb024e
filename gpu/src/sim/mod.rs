//! The simulated GPU: an analytic model of kernels on SM partitions that
//! share the memory path (L2, crossbar, DRAM).
//!
//! # Model
//!
//! **Placement** (`prepared.rs`). A kernel with `B` blocks on `k` SMs, `b`
//! resident blocks per SM (occupancy), runs `n = ceil(B / k)` blocks on its
//! busiest SM, `c = min(n, b)` at a time with `w = c x warps/block` warps.
//! The busiest SM sets the duration, so wave quantisation and the tail wave
//! appear through `n`. Its bounds, in cycles:
//!
//! * compute: `n x max(fp32, fp16, tensor, issue cycles per block) / min(1, w / 8)`
//!   (each pipe at its per-SM peak; fewer than 8 warps cannot hide latency);
//! * L1: `n x l1_bytes/block / l1_bytes_per_cycle`;
//! * crossbar port: `n x l2_bytes/block / l2_port_bytes_per_cycle`;
//! * memory latency (Little's law): `n x l2_bytes/block x L / (w x inflight_bytes_per_warp)`
//!   with the average access latency `L = L_l2 + m x L_dram`, `m` the share
//!   of L2 requests that go to DRAM.
//!
//! They combine by a soft maximum `(sum t_i^4)^(1/4)` (overlap is good but
//! not perfect), plus a fixed launch overhead.
//!
//! **Cache** . DRAM reads are the compulsory bytes plus the re-reads
//! (`l2_bytes` beyond the compulsory traffic) that miss: re-reads miss in
//! proportion `1 - min(1, C / WS)` of the working set `WS` that does not fit
//! in the L2 capacity `C` the kernel holds.
//!
//! **Shared path** (`solver.rs`). Loaded latencies grow with the utilisation
//! of each shared resource: `L_x = L0_x x (1 + 0.5 rho_x^2 / (1 - rho_x))`,
//! `rho_x = sum of the kernels' byte rates / capacity_x` for `x` in
//! {L2, DRAM}. Flat at low load, a knee near saturation, unbounded at it, so
//! delivered bandwidth never exceeds capacity and a latency-bound kernel
//! slows down before the path saturates. Because bandwidth is shared through
//! latency, saturated bandwidth divides in proportion to bytes in flight, as
//! with real memory controllers. When two working sets together exceed the
//! L2, each kernel holds capacity in proportion to its insertion (miss) rate,
//! never more than its working set. The utilisations and the capacity split
//! are solved to a fixed point: for each resource the residual
//! `implied(rho) - rho` is decreasing, so a bracketed root (Illinois) always
//! exists and is unique; the two resources and the capacity split are
//! iterated in turn until nothing moves by more than 1e-7.
//!
//! A standalone kernel is the same problem with one kernel; a co-located
//! pair is measured as both running continuously (each side's duration is
//! its time while the other loops), as a real pair measurement does.
//!
//! Consequences the data inherit rather than have written in: co-location
//! never makes a kernel faster (it only raises latencies and lowers the L2
//! capacity held); compute-bound pairs barely interact; two heavy memory-path
//! users slow each other most; a latency-bound kernel suffers from a
//! co-runner even far below saturation; a streaming co-runner evicts a
//! cache-friendly kernel's working set.
//!
//! **Noise** (`noise.rs`): each measurement is multiplied by a lognormal
//! factor (`sigma` default 0.01) keyed by the measurement's identity.
//!
//! # Calibration (`gpu/tests/calibration.rs`, one test per row)
//!
//! Run `cargo test --release -p tally-gpu --test calibration -- --nocapture`
//! to print the model's figures.
//!
//! | case | public measurement | test bound | this model |
//! |---|---|---|---|
//! | V100, two DRAM-streaming kernels (512 threads/block, 16 B loads), 40 SMs each, 40 blocks each | 1.54x | 1.4-1.7x | 1.58x |
//! | same, 80 blocks each | 1.86x | above the 40-block case, below 2x | 1.79x |
//! | V100, two L2-resident streaming kernels, 1 / 2 / 3 MB working sets, 40 SMs each | 1.63-1.82x | 1.5-1.9x | 1.53 / 1.53 / 1.53x |
//! | H100, fp16 GEMM 4096^3 / 8192^3 (256x128 tiles, 2-CTA multicast) standalone | near peak | within 25 % of peak-FLOP time | 1.05x / 1.04x of peak-FLOP time |
//! | H100, streaming fp16 add of 64 Mi elements standalone | near DRAM bandwidth | within 25 % of bytes / bandwidth | 1.13x of bytes / bandwidth |
//!
//! Known gaps: the L2-resident pairs come out at 1.53x, below the measured
//! 1.63-1.82x though inside the 1.5-1.9x bound (the microbenchmark's loads
//! in flight are not published; the test kernel keeps one 16-byte load per
//! lane, the same as the DRAM case that matches).
//! Further: the 4-6 MB working-set pairs of the same study measured
//! 1.17-1.29x; this model gives 1.73 / 2.19 / 2.62x for 4 / 5 / 6 MB. Its
//! linear partial-fit hit rate lets such pairs thrash the 6 MB L2 harder
//! than the real V100 does (whose hashing and replacement keep more of each
//! working set). It is not a test target.

mod backend;
mod counters;
mod noise;
mod prepared;
mod solver;
mod wave;

pub use backend::{SimBackend, DEFAULT_NOISE_SIGMA};
pub use prepared::PreparedKernel;
pub use wave::{PreparedWave, WaveModel, WaveShape, WaveTiming, MAX_CONCURRENT};
