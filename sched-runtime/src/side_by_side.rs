//! The simulated table beside the published one: one row per pair and
//! policy with the simulated p99 and mean slowdowns (of the service
//! latency, the artifact's definition) and system throughput beside the
//! published figures, and per policy the means and the errors: the
//! geometric mean over the pairs of max(sim/published, published/sim) of
//! the p99 slowdown and of the mean slowdown, and the mean absolute error
//! of the system throughput. The mean shows what the p99 can hide: a
//! policy that slows a few requests a lot and one that slows every request
//! can share a p99. Owns `side_by_side.csv` (writer and reader).

use std::io::Write;
use std::path::Path;

use tally_datasets::{write_atomic, DatasetError};

use crate::published::PublishedPair;
use crate::run_output::SummaryRow;

/// One pair under one policy, simulated and published.
#[derive(Debug, Clone, PartialEq)]
pub struct SideRow {
    pub hp: String,
    pub be: String,
    pub policy: String,
    pub p99_slowdown: f64,
    pub hp_throughput: f64,
    pub be_throughput: f64,
    pub system_throughput: f64,
    pub published_p99_slowdown: Option<f64>,
    pub published_system_throughput: Option<f64>,
    /// HP requests the p99 rests on (`None` in files written before the
    /// column existed).
    pub requests: Option<usize>,
    /// Mean service latency over alone, simulated and published (`None`
    /// where a file predates it or the artifact did not measure it).
    pub mean_slowdown: Option<f64>,
    pub published_mean_slowdown: Option<f64>,
    /// The HP request's mean latency alone, ms, simulated and published
    /// (what every slowdown of the row is relative to).
    pub hp_alone_ms: Option<f64>,
    pub published_hp_alone_ms: Option<f64>,
}

/// Join simulated summaries with the published pairs (a policy or pair
/// the artifact did not measure gets empty published columns).
pub fn join(simulated: &[SummaryRow], published: &[PublishedPair]) -> Vec<SideRow> {
    simulated
        .iter()
        .map(|s| {
            let pair = published
                .iter()
                .find(|p| same_job(&p.hp, &s.hp) && same_job(&p.be, &s.be));
            let result = pair.and_then(|p| p.result(&s.policy));
            SideRow {
                hp: s.hp.clone(),
                be: s.be.clone(),
                policy: s.policy.clone(),
                p99_slowdown: s.service_p99_slowdown,
                hp_throughput: s.hp_throughput,
                be_throughput: s.be_throughput,
                system_throughput: s.system_throughput,
                published_p99_slowdown: result.map(|r| r.p99_slowdown),
                published_system_throughput: result.map(|r| r.system_throughput),
                requests: Some(s.requests),
                mean_slowdown: s.service_mean_slowdown,
                published_mean_slowdown: result.and_then(|r| r.mean_slowdown),
                hp_alone_ms: s.alone_service_avg_ms,
                published_hp_alone_ms: pair.and_then(|p| p.hp_alone_ms),
            }
        })
        .collect()
}

/// Whether two job arguments model the same artifact job: equal but for
/// the `-fp32` precision and the `-nocudnn` and `-cutlass` libraries of
/// their variant (the artifact's training jobs ran in FP32 on a PyTorch
/// without cuDNN, every job's GEMMs as the Tally client's CUTLASS kernels;
/// the other variants are the same job run otherwise).
fn same_job(a: &str, b: &str) -> bool {
    let plain = |j: &str| {
        j.replacen("-fp32", "", 1)
            .replacen("-nocudnn", "", 1)
            .replacen("-cutlass", "", 1)
    };
    plain(a) == plain(b)
}

/// One policy over the pairs.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyError {
    pub policy: String,
    pub pairs: usize,
    pub mean_p99_slowdown: f64,
    pub mean_system_throughput: f64,
    /// Over the pairs with a published figure (None: none has one).
    pub published_mean_p99_slowdown: Option<f64>,
    pub published_mean_system_throughput: Option<f64>,
    /// Geometric mean of max(sim/published, published/sim), p99 slowdown.
    pub p99_ratio_geomean: Option<f64>,
    /// Mean absolute error of the system throughput.
    pub system_throughput_mae: Option<f64>,
    /// Geometric mean of max(sim/published, published/sim) of the mean
    /// slowdown, over the pairs with both (None: none has).
    pub mean_ratio_geomean: Option<f64>,
}

/// Per-policy means and errors, policies in their first-seen order.
pub fn policy_errors(rows: &[SideRow]) -> Vec<PolicyError> {
    let mut policies: Vec<&str> = Vec::new();
    for r in rows {
        if !policies.contains(&r.policy.as_str()) {
            policies.push(&r.policy);
        }
    }
    policies
        .into_iter()
        .map(|policy| {
            let of: Vec<&SideRow> = rows.iter().filter(|r| r.policy == policy).collect();
            let n = of.len() as f64;
            let mean = |f: &dyn Fn(&SideRow) -> f64| of.iter().map(|r| f(r)).sum::<f64>() / n;
            let with: Vec<(&SideRow, f64, f64)> = of
                .iter()
                .filter_map(|r| {
                    Some((
                        *r,
                        r.published_p99_slowdown?,
                        r.published_system_throughput?,
                    ))
                })
                .collect();
            let m = with.len() as f64;
            let published = |f: &dyn Fn(&(&SideRow, f64, f64)) -> f64| {
                (m > 0.0).then(|| with.iter().map(f).sum::<f64>() / m)
            };
            PolicyError {
                policy: policy.to_string(),
                pairs: of.len(),
                mean_p99_slowdown: mean(&|r| r.p99_slowdown),
                mean_system_throughput: mean(&|r| r.system_throughput),
                published_mean_p99_slowdown: published(&|w| w.1),
                published_mean_system_throughput: published(&|w| w.2),
                p99_ratio_geomean: published(&|(r, p, _)| {
                    let ratio = r.p99_slowdown / p;
                    ratio.max(1.0 / ratio).ln()
                })
                .map(f64::exp),
                system_throughput_mae: published(&|(r, _, s)| (r.system_throughput - s).abs()),
                mean_ratio_geomean: ratio_geomean(
                    of.iter()
                        .filter_map(|r| Some((r.mean_slowdown?, r.published_mean_slowdown?))),
                ),
            }
        })
        .collect()
}

/// Each HP job's request alone, simulated and published (ms), in
/// first-seen order: the unit every slowdown of its rows is measured in.
/// The simulated time is the first row's that has one.
pub fn hp_alone_times(rows: &[SideRow]) -> Vec<(String, Option<f64>, Option<f64>)> {
    let mut out: Vec<(String, Option<f64>, Option<f64>)> = Vec::new();
    for r in rows {
        match out.iter_mut().find(|(hp, _, _)| *hp == r.hp) {
            Some(entry) => {
                entry.1 = entry.1.or(r.hp_alone_ms);
                entry.2 = entry.2.or(r.published_hp_alone_ms);
            }
            None => out.push((r.hp.clone(), r.hp_alone_ms, r.published_hp_alone_ms)),
        }
    }
    out
}

/// Geometric mean of max(a/b, b/a) over the pairs, `None` if there are none.
fn ratio_geomean(pairs: impl Iterator<Item = (f64, f64)>) -> Option<f64> {
    let (mut sum, mut n) = (0.0, 0usize);
    for (a, b) in pairs {
        sum += (a / b).ln().abs();
        n += 1;
    }
    (n > 0).then(|| (sum / n as f64).exp())
}

/// The columns of `side_by_side.csv` every reader needs; `requests` (the
/// HP requests of the run) and the mean slowdowns
/// ([`SIDE_BY_SIDE_MEAN_COLUMNS`]) follow them.
pub const SIDE_BY_SIDE_COLUMNS: [&str; 9] = [
    "hp",
    "be",
    "policy",
    "p99_slowdown",
    "system_throughput",
    "published_p99_slowdown",
    "published_system_throughput",
    "hp_throughput",
    "be_throughput",
];

/// The simulated and published mean slowdowns and HP request times alone:
/// the last columns (older files lack them).
pub const SIDE_BY_SIDE_MEAN_COLUMNS: [&str; 4] = [
    "mean_slowdown",
    "published_mean_slowdown",
    "hp_alone_ms",
    "published_hp_alone_ms",
];

/// Write `side_by_side.csv` (published columns empty where there is none).
pub fn write_side_by_side(path: &Path, rows: &[SideRow]) -> Result<(), DatasetError> {
    let opt = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.4}"));
    write_atomic(path, |w| {
        let io = |e: std::io::Error| DatasetError::io(path, e);
        writeln!(
            w,
            "{},requests,{}",
            SIDE_BY_SIDE_COLUMNS.join(","),
            SIDE_BY_SIDE_MEAN_COLUMNS.join(",")
        )
        .map_err(io)?;
        for r in rows {
            writeln!(
                w,
                "{},{},{},{:.4},{:.4},{},{},{:.4},{:.4},{},{},{},{},{}",
                r.hp,
                r.be,
                r.policy,
                r.p99_slowdown,
                r.system_throughput,
                opt(r.published_p99_slowdown),
                opt(r.published_system_throughput),
                r.hp_throughput,
                r.be_throughput,
                r.requests.map_or(String::new(), |n| n.to_string()),
                opt(r.mean_slowdown),
                opt(r.published_mean_slowdown),
                opt(r.hp_alone_ms),
                opt(r.published_hp_alone_ms)
            )
            .map_err(io)?;
        }
        Ok(())
    })
}

/// Read `side_by_side.csv` back (figures draw it); an empty published
/// column reads as `None`.
pub fn read_side_by_side(path: &Path) -> Result<Vec<SideRow>, crate::error::RunError> {
    let table = crate::csv_columns::CsvColumns::read(path, &SIDE_BY_SIDE_COLUMNS)?;
    table
        .rows()
        .map(|r| {
            Ok(SideRow {
                hp: r.text("hp").to_string(),
                be: r.text("be").to_string(),
                policy: r.text("policy").to_string(),
                p99_slowdown: r.number("p99_slowdown")?,
                hp_throughput: r.number("hp_throughput")?,
                be_throughput: r.number("be_throughput")?,
                system_throughput: r.number("system_throughput")?,
                published_p99_slowdown: r.optional_number("published_p99_slowdown")?,
                published_system_throughput: r.optional_number("published_system_throughput")?,
                requests: match r.text("requests") {
                    "" => None,
                    _ => Some(r.count("requests")?),
                },
                mean_slowdown: r.optional_number("mean_slowdown")?,
                published_mean_slowdown: r.optional_number("published_mean_slowdown")?,
                hp_alone_ms: r.optional_number("hp_alone_ms")?,
                published_hp_alone_ms: r.optional_number("published_hp_alone_ms")?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::published::PublishedResult;

    fn sim(policy: &str, slowdown: f64, sys: f64) -> SummaryRow {
        SummaryRow {
            policy: policy.into(),
            hp: "h".into(),
            be: "b".into(),
            requests: 1700,
            p99_overhead_pct: 0.0,
            service_p99_slowdown: slowdown,
            service_mean_slowdown: Some(slowdown / 2.0),
            alone_service_avg_ms: Some(1.7),
            hp_throughput: 1.0,
            be_throughput: sys - 1.0,
            system_throughput: sys,
        }
    }

    /// The artifact's MPS result on the pair (h, `be`): p99 slowdown 2.
    fn published(be: &str, system_throughput: f64) -> Vec<PublishedPair> {
        vec![PublishedPair {
            hp: "h".into(),
            be: be.into(),
            hp_alone_ms: Some(4.05),
            results: vec![(
                "mps".into(),
                PublishedResult {
                    p99_slowdown: 2.0,
                    system_throughput,
                    mean_slowdown: Some(1.5),
                },
            )],
        }]
    }

    #[test]
    fn side_by_side_reads_back_what_it_wrote() {
        let published = published("b", 1.75);
        let rows = join(&[sim("mps", 4.0, 1.5), sim("tgs", 1.25, 1.5)], &published);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("side_by_side.csv");
        write_side_by_side(&path, &rows).unwrap();
        assert_eq!(read_side_by_side(&path).unwrap(), rows);
        assert!(rows.iter().all(|r| r.requests == Some(1700)));
        assert_eq!(rows[0].published_mean_slowdown, Some(1.5));
        // One HP job: its request alone, simulated and published.
        assert_eq!(
            hp_alone_times(&rows),
            vec![("h".to_string(), Some(1.7), Some(4.05))]
        );
        // Files from before the mean columns, and before `requests`, still
        // read.
        let text = std::fs::read_to_string(&path).unwrap();
        let without_last = |text: &str, n: usize| -> String {
            text.lines()
                .map(|l| {
                    let fields: Vec<&str> = l.split(',').collect();
                    format!("{}\n", fields[..fields.len() - n].join(","))
                })
                .collect()
        };
        std::fs::write(&path, without_last(&text, 4)).unwrap();
        let back = read_side_by_side(&path).unwrap();
        assert!(back.iter().all(|r| r.mean_slowdown.is_none()));
        assert!(back.iter().all(|r| r.hp_alone_ms.is_none()));
        assert_eq!(back[0].requests, Some(1700));
        std::fs::write(&path, without_last(&text, 5)).unwrap();
        let back = read_side_by_side(&path).unwrap();
        assert!(back.iter().all(|r| r.requests.is_none()));
        assert_eq!(back[0].p99_slowdown, rows[0].p99_slowdown);
    }

    #[test]
    fn errors_are_symmetric_ratios_and_absolute_throughput_gaps() {
        let published = published("b", 1.7);
        let rows = join(
            &[sim("mps", 4.0, 1.5), sim("tally-predict", 1.1, 1.6)],
            &published,
        );
        let e = policy_errors(&rows);
        assert_eq!(e.len(), 2);
        assert!((e[0].p99_ratio_geomean.unwrap() - 2.0).abs() < 1e-12);
        assert!((e[0].system_throughput_mae.unwrap() - 0.2).abs() < 1e-12);
        // Mean slowdown 2.0 against the published 1.5.
        assert!((e[0].mean_ratio_geomean.unwrap() - 2.0 / 1.5).abs() < 1e-12);
        // Half the slowdown is as far off as twice it.
        let rows = join(&[sim("mps", 1.0, 1.7)], &published);
        assert!((policy_errors(&rows)[0].p99_ratio_geomean.unwrap() - 2.0).abs() < 1e-12);
        // A policy the artifact did not run has no published figures.
        assert_eq!(e[1].p99_ratio_geomean, None);
        assert_eq!(e[1].mean_ratio_geomean, None);
        assert_eq!(rows[0].published_p99_slowdown, Some(2.0));
    }

    #[test]
    fn an_fp32_job_joins_the_published_pair_of_its_mixed_precision_name() {
        let published = published("x:train@4", 1.7);
        let mut fp32 = sim("mps", 2.0, 1.7);
        fp32.be = "x:train-fp32@4".into();
        let mut other = sim("mps", 2.0, 1.7);
        other.be = "y:train-fp32@4".into();
        let mut native = sim("mps", 2.0, 1.7);
        native.be = "x:train-fp32-nocudnn@4".into();
        let mut cutlass = sim("mps", 2.0, 1.7);
        cutlass.be = "x:train-fp32-nocudnn-cutlass@4".into();
        let rows = join(&[fp32, other, native, cutlass], &published);
        assert_eq!(rows[0].published_p99_slowdown, Some(2.0));
        assert_eq!(rows[1].published_p99_slowdown, None);
        // So does the same job without cuDNN, and with its GEMMs as the
        // Tally client's.
        assert_eq!(rows[2].published_p99_slowdown, Some(2.0));
        assert_eq!(rows[3].published_p99_slowdown, Some(2.0));
    }
}
