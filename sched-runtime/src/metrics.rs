//! Run metrics: HP latency percentiles against the HP job alone, the p99
//! overhead, each job's throughput normalised to running alone and the
//! system throughput (their sum). Latency is given two ways: from arrival
//! (queueing included, what a server's client sees) and from the start of
//! service (queueing excluded, what the published Tally artifact measured:
//! see [`crate::outcome::Request::service_us`]).

use serde::Serialize;

use crate::outcome::RunOutcome;

/// Latency statistics, milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct LatencyStats {
    pub avg: f64,
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
}

impl LatencyStats {
    /// Nearest-rank percentiles of latencies given in microseconds.
    pub fn of_us(latencies: &[f64]) -> LatencyStats {
        if latencies.is_empty() {
            return LatencyStats::default();
        }
        let mut v: Vec<f64> = latencies.iter().map(|l| l / 1e3).collect();
        v.sort_by(f64::total_cmp);
        let pct = |p: f64| {
            let rank = ((p / 100.0) * v.len() as f64).ceil().max(1.0) as usize;
            v[rank.min(v.len()) - 1]
        };
        LatencyStats {
            avg: v.iter().sum::<f64>() / v.len() as f64,
            p50: pct(50.0),
            p90: pct(90.0),
            p95: pct(95.0),
            p99: pct(99.0),
        }
    }
}

/// One policy's result on one workload.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub policy: String,
    pub hp: String,
    pub be: Vec<String>,
    pub requests: usize,
    pub hp_latency: LatencyStats,
    pub hp_alone_latency: LatencyStats,
    pub p99_overhead_pct: f64,
    /// Service latency (queueing excluded), and alone.
    pub hp_service_latency: LatencyStats,
    pub hp_alone_service_latency: LatencyStats,
    /// p99 service latency over the alone p99 service latency.
    pub service_p99_slowdown: f64,
    /// Mean service latency over the alone mean service latency.
    pub service_mean_slowdown: f64,
    pub hp_throughput: f64,
    pub be_throughput: Vec<f64>,
    pub be_throughput_total: f64,
    pub system_throughput: f64,
}

/// Summarise `outcome` against `alone` (the HP job by itself on the same
/// arrivals). HP throughput: requests served relative to alone (the one in
/// service at the end counted by its progress); BE: the
/// standalone-equivalent work done, over what the job does alone in the
/// same window.
pub fn summarize(hp: &str, be: &[String], outcome: &RunOutcome, alone: &RunOutcome) -> Summary {
    let lat = |o: &RunOutcome| -> Vec<f64> { o.requests.iter().map(|r| r.latency_us()).collect() };
    let hp_latency = LatencyStats::of_us(&lat(outcome));
    let hp_alone_latency = LatencyStats::of_us(&lat(alone));
    let service =
        |o: &RunOutcome| -> Vec<f64> { o.requests.iter().map(|r| r.service_us()).collect() };
    let hp_service_latency = LatencyStats::of_us(&service(outcome));
    let hp_alone_service_latency = LatencyStats::of_us(&service(alone));
    let hp_throughput = if alone.requests_served > 0.0 {
        outcome.requests_served / alone.requests_served
    } else {
        0.0
    };
    let be_throughput: Vec<f64> = outcome
        .be_work_us
        .iter()
        .zip(&outcome.be_alone_work_us)
        .map(|(w, alone)| w / alone.max(1e-9))
        .collect();
    let be_total: f64 = be_throughput.iter().sum::<f64>() + 0.0;
    Summary {
        policy: outcome.policy.clone(),
        hp: hp.to_string(),
        be: be.to_vec(),
        requests: outcome.requests.len(),
        p99_overhead_pct: if hp_alone_latency.p99 > 0.0 {
            (hp_latency.p99 / hp_alone_latency.p99 - 1.0) * 100.0
        } else {
            0.0
        },
        hp_latency,
        hp_alone_latency,
        service_p99_slowdown: if hp_alone_service_latency.p99 > 0.0 {
            hp_service_latency.p99 / hp_alone_service_latency.p99
        } else {
            0.0
        },
        service_mean_slowdown: if hp_alone_service_latency.avg > 0.0 {
            hp_service_latency.avg / hp_alone_service_latency.avg
        } else {
            0.0
        },
        hp_service_latency,
        hp_alone_service_latency,
        hp_throughput,
        be_throughput,
        be_throughput_total: be_total,
        system_throughput: hp_throughput + be_total,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<f64> = (1..=100).map(|i| f64::from(i) * 1e3).collect();
        let s = LatencyStats::of_us(&v);
        assert_eq!((s.p50, s.p90, s.p99), (50.0, 90.0, 99.0));
        assert!((s.avg - 50.5).abs() < 1e-12);
        assert_eq!(LatencyStats::of_us(&[]).p99, 0.0);
    }
}
