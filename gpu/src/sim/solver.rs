//! The fixed point of the shared memory path: given one or two prepared
//! kernels running continuously, find the L2 and DRAM utilisations (which
//! set the loaded latencies) and the L2 capacity split that are consistent
//! with the traffic the kernels generate under them.

use super::prepared::{Evaluation, PathState, PreparedKernel};
use crate::spec::GpuSpec;

/// Queueing steepness: latency = base x (1 + KAPPA * rho^2 / (1 - rho)).
/// Flat at low load, a knee near saturation, unbounded at saturation so
/// that the delivered bandwidth never exceeds the capacity.
const KAPPA: f64 = 0.5;
/// Utilisation is solved on [0, RHO_MAX].
const RHO_MAX: f64 = 0.9995;
const RHO_TOL: f64 = 1e-9;
const MAX_ROOT_STEPS: usize = 60;
const MAX_OUTER: usize = 40;

/// Latency multiplier at utilisation `rho`.
#[inline]
pub(crate) fn queue_factor(rho: f64) -> f64 {
    1.0 + KAPPA * rho * rho / (1.0 - rho)
}

/// Capacities of the shared path, in bytes and cycles.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct SharedPath {
    pub l2_bandwidth: f64,
    pub dram_bandwidth: f64,
    pub l2_latency: f64,
    pub dram_latency: f64,
    pub l2_size: f64,
}

impl SharedPath {
    pub(crate) fn of(gpu: &GpuSpec) -> SharedPath {
        SharedPath {
            l2_bandwidth: gpu.l2_bytes_per_cycle,
            dram_bandwidth: gpu.dram_bytes_per_cycle(),
            l2_latency: gpu.l2_latency_cycles,
            dram_latency: gpu.dram_latency_ns * 1e-3 * gpu.cycles_per_us(),
            l2_size: gpu.l2_bytes as f64,
        }
    }
}

/// The solved operating point.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Solution {
    pub evals: [Evaluation; 2],
    pub l2_capacity: [f64; 2],
    pub rho_l2: f64,
    pub rho_dram: f64,
}

struct Problem<'a> {
    path: SharedPath,
    kernels: &'a [&'a PreparedKernel],
    capacity: [f64; 2],
}

impl Problem<'_> {
    fn state(&self, i: usize, rho_l2: f64, rho_dram: f64) -> PathState {
        PathState {
            l2_latency: self.path.l2_latency * queue_factor(rho_l2),
            dram_latency: self.path.dram_latency * queue_factor(rho_dram),
            l2_capacity: self.capacity[i],
        }
    }

    fn evaluate(&self, rho_l2: f64, rho_dram: f64) -> [Evaluation; 2] {
        let mut out = [Evaluation::default(); 2];
        for (i, k) in self.kernels.iter().enumerate() {
            out[i] = k.evaluate(&self.state(i, rho_l2, rho_dram));
        }
        out
    }

    /// Utilisations implied by the traffic at `(rho_l2, rho_dram)`.
    fn implied(&self, rho_l2: f64, rho_dram: f64) -> (f64, f64) {
        let evals = self.evaluate(rho_l2, rho_dram);
        let n = self.kernels.len();
        let l2: f64 = evals[..n].iter().map(|e| e.l2_rate).sum();
        let dram: f64 = evals[..n].iter().map(|e| e.dram_rate).sum();
        (l2 / self.path.l2_bandwidth, dram / self.path.dram_bandwidth)
    }
}

/// Root of the decreasing function `f(rho) - rho` on `[0, RHO_MAX]`, by the
/// Illinois variant of regula falsi (bracketed, so it always converges).
fn solve_utilisation(mut implied: impl FnMut(f64) -> f64, guess: f64) -> f64 {
    let residual = |rho: f64, implied: &mut dyn FnMut(f64) -> f64| implied(rho) - rho;
    let (mut lo, mut hi) = (0.0, RHO_MAX);
    let mut f_lo = residual(lo, &mut implied);
    if f_lo <= 0.0 {
        return 0.0;
    }
    let mut f_hi = residual(hi, &mut implied);
    if f_hi >= 0.0 {
        return RHO_MAX;
    }
    // A guess inside the bracket tightens it at once.
    if guess > lo && guess < hi {
        let f = residual(guess, &mut implied);
        if f > 0.0 {
            (lo, f_lo) = (guess, f);
        } else {
            (hi, f_hi) = (guess, f);
        }
    }
    let mut side = 0i8;
    for _ in 0..MAX_ROOT_STEPS {
        let x = (lo * f_hi - hi * f_lo) / (f_hi - f_lo);
        let f = residual(x, &mut implied);
        if f.abs() < RHO_TOL || hi - lo < RHO_TOL {
            return x;
        }
        if f > 0.0 {
            (lo, f_lo) = (x, f);
            if side == 1 {
                f_hi *= 0.5;
            }
            side = 1;
        } else {
            (hi, f_hi) = (x, f);
            if side == -1 {
                f_lo *= 0.5;
            }
            side = -1;
        }
    }
    0.5 * (lo + hi)
}

/// Split the L2 between two kernels whose working sets do not both fit:
/// each holds capacity in proportion to its insertion (miss) rate, and a
/// kernel never holds more than its working set (the rest goes to the other).
fn split_capacity(size: f64, working_sets: [f64; 2], insertion: [f64; 2]) -> [f64; 2] {
    if working_sets[0] + working_sets[1] <= size {
        return [size, size];
    }
    let total = insertion[0] + insertion[1];
    let share0 = if total > 0.0 {
        insertion[0] / total
    } else {
        0.5
    };
    let mut c0 = size * share0;
    let mut c1 = size - c0;
    if c0 > working_sets[0] {
        c1 += c0 - working_sets[0];
        c0 = working_sets[0];
    } else if c1 > working_sets[1] {
        c0 += c1 - working_sets[1];
        c1 = working_sets[1];
    }
    [c0, c1]
}

/// Solve the operating point of one kernel alone or two kernels co-running
/// on disjoint partitions.
pub(crate) fn solve(path: SharedPath, kernels: &[&PreparedKernel]) -> Solution {
    debug_assert!(!kernels.is_empty() && kernels.len() <= 2);
    let mut problem = Problem {
        path,
        kernels,
        capacity: [path.l2_size; 2],
    };
    let pair = kernels.len() == 2;
    let contended_capacity =
        pair && kernels[0].working_set + kernels[1].working_set > path.l2_size;

    let (mut rho_l2, mut rho_dram) = (0.0, 0.0);
    for _ in 0..MAX_OUTER {
        let (prev_l2, prev_dram, prev_cap) = (rho_l2, rho_dram, problem.capacity);
        rho_dram = solve_utilisation(|r| problem.implied(rho_l2, r).1, rho_dram);
        rho_l2 = solve_utilisation(|r| problem.implied(r, rho_dram).0, rho_l2);
        if contended_capacity {
            let evals = problem.evaluate(rho_l2, rho_dram);
            let insertion = [
                evals[0].dram_read_bytes / evals[0].cycles,
                evals[1].dram_read_bytes / evals[1].cycles,
            ];
            let target = split_capacity(
                path.l2_size,
                [kernels[0].working_set, kernels[1].working_set],
                insertion,
            );
            // Damped: the split feeds back on the insertion rates.
            for (c, t) in problem.capacity.iter_mut().zip(target) {
                *c = 0.5 * (*c + t);
            }
        }
        let cap_moved = (problem.capacity[0] - prev_cap[0]).abs() / path.l2_size;
        if (rho_l2 - prev_l2).abs() < 1e-7 && (rho_dram - prev_dram).abs() < 1e-7 && cap_moved < 1e-6
        {
            break;
        }
    }
    Solution {
        evals: problem.evaluate(rho_l2, rho_dram),
        l2_capacity: problem.capacity,
        rho_l2,
        rho_dram,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utilisation_root_is_a_fixed_point() {
        // Pure memory-bound traffic r / q(rho): the root satisfies rho q = r.
        for r in [0.2, 1.0, 2.0, 8.0] {
            let rho = solve_utilisation(|x| r / queue_factor(x), 0.0);
            assert!((rho * queue_factor(rho) - r).abs() < 1e-6, "r={r} rho={rho}");
        }
        assert_eq!(solve_utilisation(|_| 0.0, 0.5), 0.0);
    }

    #[test]
    fn capacity_split_follows_insertion_and_working_sets() {
        assert_eq!(split_capacity(10.0, [4.0, 5.0], [1.0, 9.0]), [10.0, 10.0]);
        let [a, b] = split_capacity(10.0, [20.0, 20.0], [1.0, 3.0]);
        assert!((a - 2.5).abs() < 1e-12 && (b - 7.5).abs() < 1e-12);
        let [a, b] = split_capacity(10.0, [2.0, 20.0], [9.0, 1.0]);
        assert!((a - 2.0).abs() < 1e-12 && (b - 8.0).abs() < 1e-12);
    }
}
