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
const RHO_TOL: f64 = 1e-11;
const MAX_ROOT_STEPS: usize = 60;
const MAX_OUTER: usize = 40;
const MAX_NEWTON_STEPS: usize = 40;
const RESIDUAL_TOL: f64 = 1e-10;
const START_CAP: f64 = 0.9;

/// Latency multiplier at utilisation `rho`.
#[inline]
pub(crate) fn queue_factor(rho: f64) -> f64 {
    1.0 + KAPPA * rho * rho / (1.0 - rho)
}

/// Derivative of `queue_factor`.
#[inline]
fn queue_slope(rho: f64) -> f64 {
    let free = 1.0 - rho;
    KAPPA * rho * (2.0 - rho) / (free * free)
}

/// Residual `implied - assumed` of both utilisations and its Jacobian.
#[derive(Debug, Clone, Copy)]
struct Linearised {
    g: (f64, f64),
    /// `j[r][c]`: derivative of residual `r` with respect to utilisation `c`.
    j: [[f64; 2]; 2],
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

/// Most kernels one operating point is solved for (the scheduler's engine
/// co-runs one kernel per job).
pub(crate) const MAX_KERNELS: usize = 8;

struct Problem<'a> {
    path: SharedPath,
    kernels: &'a [&'a PreparedKernel],
    capacity: [f64; MAX_KERNELS],
}

impl Problem<'_> {
    fn state(&self, i: usize, rho_l2: f64, rho_dram: f64) -> PathState {
        PathState {
            l2_latency: self.path.l2_latency * queue_factor(rho_l2),
            dram_latency: self.path.dram_latency * queue_factor(rho_dram),
            l2_capacity: self.capacity[i],
        }
    }

    fn evaluate(&self, rho_l2: f64, rho_dram: f64) -> [Evaluation; MAX_KERNELS] {
        let mut out = [Evaluation::default(); MAX_KERNELS];
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

/// Root of a decreasing `f` bracketed by `f(lo) > 0 > f(hi)`, by the
/// Illinois variant of regula falsi (bracketed, so it always converges;
/// superlinear, so it converges fast).
fn illinois(
    mut f: impl FnMut(f64) -> f64,
    (mut lo, mut f_lo): (f64, f64),
    (mut hi, mut f_hi): (f64, f64),
    tol: f64,
) -> f64 {
    let mut side = 0i8;
    for _ in 0..MAX_ROOT_STEPS {
        let x = (lo * f_hi - hi * f_lo) / (f_hi - f_lo);
        let fx = f(x);
        if fx.abs() < tol || hi - lo < tol {
            return x;
        }
        if fx > 0.0 {
            (lo, f_lo) = (x, fx);
            if side == 1 {
                f_hi *= 0.5;
            }
            side = 1;
        } else {
            (hi, f_hi) = (x, fx);
            if side == -1 {
                f_lo *= 0.5;
            }
            side = -1;
        }
    }
    0.5 * (lo + hi)
}

/// Root of the decreasing function `implied(rho) - rho` on `[0, RHO_MAX]`.
fn solve_utilisation(mut implied: impl FnMut(f64) -> f64, guess: f64) -> f64 {
    let mut residual = |rho: f64| implied(rho) - rho;
    let (mut lo, mut hi) = ((0.0, residual(0.0)), (RHO_MAX, 0.0));
    if lo.1 <= 0.0 {
        return 0.0;
    }
    hi.1 = residual(RHO_MAX);
    if hi.1 >= 0.0 {
        return RHO_MAX;
    }
    // A guess inside the bracket tightens it at once.
    if guess > lo.0 && guess < hi.0 {
        let f = residual(guess);
        if f > 0.0 {
            lo = (guess, f);
        } else {
            hi = (guess, f);
        }
    }
    illinois(residual, lo, hi, RHO_TOL)
}

/// The L2 capacity kernel 0 would hold if the kernels held capacity in
/// proportion to their insertion (miss) rates, neither holding more than its
/// working set (the rest goes to the other).
fn capacity_target(size: f64, working_sets: [f64; 2], insertion: [f64; 2]) -> f64 {
    let total = insertion[0] + insertion[1];
    let share0 = if total > 0.0 {
        insertion[0] / total
    } else {
        0.5
    };
    (size * share0).clamp((size - working_sets[1]).max(0.0), working_sets[0].min(size))
}

impl Problem<'_> {
    /// Residual of the utilisation fixed point (implied minus assumed) and
    /// its exact Jacobian: each kernel's duration depends on the
    /// utilisations only through its average access latency.
    fn linearise(&self, rho: (f64, f64)) -> Linearised {
        let p = &self.path;
        let evals = self.evaluate(rho.0, rho.1);
        let dl_l2 = p.l2_latency * queue_slope(rho.0);
        let dl_dram = p.dram_latency * queue_slope(rho.1);
        let mut out = Linearised {
            g: (-rho.0, -rho.1),
            j: [[-1.0, 0.0], [0.0, -1.0]],
        };
        for e in &evals[..self.kernels.len()] {
            let dt = [
                e.dcycles_dlatency * dl_l2,
                e.dcycles_dlatency * e.miss_rate * dl_dram,
            ];
            let rates = [e.l2_rate / p.l2_bandwidth, e.dram_rate / p.dram_bandwidth];
            for (row, rate) in out.j.iter_mut().zip(rates) {
                for (entry, d) in row.iter_mut().zip(dt) {
                    *entry -= rate / e.cycles * d;
                }
            }
            out.g.0 += rates[0];
            out.g.1 += rates[1];
        }
        out
    }

    /// Utilisations consistent with the current capacity split, by a
    /// safeguarded Newton iteration from `start` (backtracking keeps the
    /// residual falling and the point inside the box). Both residuals fall
    /// in both utilisations, so the root is unique and Newton converges in a
    /// few steps; should it ever stall, alternating bracketed roots finish.
    fn solve_utilisations(&self, start: (f64, f64)) -> (f64, f64) {
        let norm = |g: (f64, f64)| g.0.abs().max(g.1.abs());
        let clamp = |r: f64| r.clamp(0.0, RHO_MAX);
        let mut x = (clamp(start.0), clamp(start.1));
        let mut lin = self.linearise(x);
        for _ in 0..MAX_NEWTON_STEPS {
            if norm(lin.g) < RESIDUAL_TOL {
                return x;
            }
            let [[j00, j01], [j10, j11]] = lin.j;
            let det = j00 * j11 - j01 * j10;
            if !det.is_finite() || det.abs() < 1e-300 {
                break;
            }
            let step = (
                (-lin.g.0 * j11 + lin.g.1 * j01) / det,
                (-lin.g.1 * j00 + lin.g.0 * j10) / det,
            );
            let mut t = 1.0;
            let mut accepted = false;
            for _ in 0..30 {
                let candidate = (clamp(x.0 + t * step.0), clamp(x.1 + t * step.1));
                let next = self.linearise(candidate);
                if norm(next.g) < norm(lin.g) {
                    (x, lin) = (candidate, next);
                    accepted = true;
                    break;
                }
                t *= 0.5;
            }
            if !accepted {
                break;
            }
        }
        self.alternate_roots(x)
    }

    /// Fallback: each resource's bracketed root in turn until neither moves.
    fn alternate_roots(&self, start: (f64, f64)) -> (f64, f64) {
        let (mut rho_l2, mut rho_dram) = start;
        for _ in 0..MAX_OUTER {
            let (prev_l2, prev_dram) = (rho_l2, rho_dram);
            rho_dram = solve_utilisation(|r| self.implied(rho_l2, r).1, rho_dram);
            rho_l2 = solve_utilisation(|r| self.implied(r, rho_dram).0, rho_l2);
            if (rho_l2 - prev_l2).abs() < RHO_TOL && (rho_dram - prev_dram).abs() < RHO_TOL {
                break;
            }
        }
        (rho_l2, rho_dram)
    }

    /// Insertion rates of both kernels with kernel 0 holding `c0` bytes of L2.
    fn capacity_residual(&mut self, c0: f64, rho: &mut (f64, f64)) -> f64 {
        self.capacity[0] = c0;
        self.capacity[1] = self.path.l2_size - c0;
        *rho = self.solve_utilisations(*rho);
        let evals = self.evaluate(rho.0, rho.1);
        let insertion = [
            evals[0].dram_read_bytes / evals[0].cycles,
            evals[1].dram_read_bytes / evals[1].cycles,
        ];
        let ws = [self.kernels[0].working_set, self.kernels[1].working_set];
        capacity_target(self.path.l2_size, ws, insertion) - c0
    }
}

/// Solve the operating point of one kernel alone or two kernels co-running
/// on disjoint partitions.
pub(crate) fn solve(path: SharedPath, kernels: &[&PreparedKernel]) -> Solution {
    // Solve a pair in a canonical order, so that (a, b) and (b, a) give
    // bit-identical answers whatever the iteration's rounding.
    if let [a, b] = kernels {
        if canonical_key(b) < canonical_key(a) {
            let mut s = solve_ordered(path, &[b, a]);
            s.evals.swap(0, 1);
            s.l2_capacity.swap(0, 1);
            return s;
        }
    }
    solve_ordered(path, kernels)
}

/// A total order on what the solver sees of a kernel.
fn canonical_key(k: &PreparedKernel) -> [u64; 6] {
    [
        k.working_set.to_bits(),
        k.total_l2_bytes.to_bits(),
        k.inflight_bytes.to_bits(),
        k.compute_cycles.to_bits(),
        k.busiest_l2_bytes.to_bits(),
        k.compulsory_read.to_bits() ^ k.compulsory_write.to_bits().rotate_left(1),
    ]
}

fn solve_ordered(path: SharedPath, kernels: &[&PreparedKernel]) -> Solution {
    debug_assert!(!kernels.is_empty() && kernels.len() <= 2);
    let mut problem = Problem {
        path,
        kernels,
        capacity: [path.l2_size; MAX_KERNELS],
    };
    let contended =
        kernels.len() == 2 && kernels[0].working_set + kernels[1].working_set > path.l2_size;
    // Start from the load the kernels would offer at unloaded latencies,
    // capped below the knee; a low-load pair is then solved at once.
    let unloaded = problem.implied(0.0, 0.0);
    let mut rho = (unloaded.0.min(START_CAP), unloaded.1.min(START_CAP));
    if contended {
        // The share kernel 0 ends up holding falls as it is given more
        // (it misses less, the other more): a decreasing residual, so the
        // bracketed root is unique.
        let size = path.l2_size;
        let ws = [kernels[0].working_set, kernels[1].working_set];
        let (lo, hi) = ((size - ws[1]).max(0.0), ws[0].min(size));
        let f_lo = problem.capacity_residual(lo, &mut rho);
        let f_hi = problem.capacity_residual(hi, &mut rho);
        let mut c0 = if f_lo <= 0.0 {
            lo
        } else if f_hi >= 0.0 {
            hi
        } else {
            illinois(
                |c| problem.capacity_residual(c, &mut rho),
                (lo, f_lo),
                (hi, f_hi),
                size * 1e-9,
            )
        };
        c0 = c0.clamp(0.0, size);
        problem.capacity[0] = c0;
        problem.capacity[1] = size - c0;
    }
    let (rho_l2, rho_dram) = problem.solve_utilisations(rho);
    let evals = problem.evaluate(rho_l2, rho_dram);
    Solution {
        evals: [evals[0], evals[1]],
        l2_capacity: [problem.capacity[0], problem.capacity[1]],
        rho_l2,
        rho_dram,
    }
}

/// Durations of up to `MAX_KERNELS` kernels running at once (the
/// scheduler's engine). One or two kernels are solved exactly as `solve`
/// does; with more, the L2 capacity split is found by a damped fixed-point
/// iteration of the same rule (capacity in proportion to insertion rates,
/// never more than a working set) instead of the bracketed root.
pub(crate) fn solve_many(path: SharedPath, kernels: &[&PreparedKernel], out: &mut [Evaluation]) {
    let n = kernels.len();
    assert!(
        n <= MAX_KERNELS && out.len() >= n,
        "solve_many: at most {MAX_KERNELS} kernels"
    );
    if n <= 2 {
        if n > 0 {
            let s = solve(path, kernels);
            out[..n].copy_from_slice(&s.evals[..n]);
        }
        return;
    }
    let mut problem = Problem {
        path,
        kernels,
        capacity: [path.l2_size; MAX_KERNELS],
    };
    let unloaded = problem.implied(0.0, 0.0);
    let mut rho = (unloaded.0.min(START_CAP), unloaded.1.min(START_CAP));
    let total_ws: f64 = kernels.iter().map(|k| k.working_set).sum();
    if total_ws > path.l2_size {
        for (c, k) in problem.capacity.iter_mut().zip(kernels) {
            *c = path.l2_size * k.working_set / total_ws;
        }
        for _ in 0..MAX_OUTER {
            rho = problem.solve_utilisations(rho);
            let evals = problem.evaluate(rho.0, rho.1);
            let insertion: Vec<f64> = evals[..n]
                .iter()
                .map(|e| e.dram_read_bytes / e.cycles)
                .collect();
            let total: f64 = insertion.iter().sum();
            let mut moved: f64 = 0.0;
            for i in 0..n {
                let share = if total > 0.0 {
                    insertion[i] / total
                } else {
                    1.0 / n as f64
                };
                let target = (path.l2_size * share).min(kernels[i].working_set);
                let next = 0.5 * (problem.capacity[i] + target);
                moved = moved.max((next - problem.capacity[i]).abs());
                problem.capacity[i] = next;
            }
            if moved < path.l2_size * 1e-7 {
                break;
            }
        }
    }
    let (rho_l2, rho_dram) = problem.solve_utilisations(rho);
    out[..n].copy_from_slice(&problem.evaluate(rho_l2, rho_dram)[..n]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utilisation_root_is_a_fixed_point() {
        // Pure memory-bound traffic r / q(rho): the root satisfies rho q = r.
        for r in [0.2, 1.0, 2.0, 8.0] {
            let rho = solve_utilisation(|x| r / queue_factor(x), 0.0);
            assert!(
                (rho * queue_factor(rho) - r).abs() < 1e-6,
                "r={r} rho={rho}"
            );
        }
        assert_eq!(solve_utilisation(|_| 0.0, 0.5), 0.0);
    }

    #[test]
    fn capacity_split_follows_insertion_and_working_sets() {
        assert!((capacity_target(10.0, [20.0, 20.0], [1.0, 3.0]) - 2.5).abs() < 1e-12);
        // Kernel 0 never holds more than its working set...
        assert!((capacity_target(10.0, [2.0, 20.0], [9.0, 1.0]) - 2.0).abs() < 1e-12);
        // ...nor less than what kernel 1 leaves over.
        assert!((capacity_target(10.0, [20.0, 3.0], [0.0, 9.0]) - 7.0).abs() < 1e-12);
    }
}
