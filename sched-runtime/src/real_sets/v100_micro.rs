//! The V100 microbenchmarks of "Understanding GPU Resource Interference
//! One Level Deeper" (SoCC'25; `data/real-contention/gpu-util-interference-V100/`):
//! the programs' logs (`output.md`) of the DRAM-bandwidth split between
//! two 50 % MPS partitions and of the L2 working-set sweep. This module owns
//! reading those logs; what each kernel does is in `evaluate.rs`, from the
//! benchmark's scripts.

use std::path::Path;

use crate::error::RunError;

/// One copy run of the bandwidth benchmark: `blocks` of 1024 threads on a
/// 40-SM share, alone or one of two at once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BandwidthRun {
    pub blocks: u32,
    pub threads: u32,
    /// Whether the other process copied at the same time.
    pub paired: bool,
    /// As printed (`GB/S`; the program divides bytes by 2^30).
    pub gib_per_s: f64,
}

/// One point of the L2 sweep: a 40-block copy over `working_set_mb`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct L2Point {
    pub working_set_mb: f64,
    pub alone_ms: f64,
    pub colocated_ms: f64,
}

fn read(path: &Path) -> Result<(String, String), RunError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| RunError::Input {
        what: shown.clone(),
        reason: e.to_string(),
    })?;
    Ok((shown, text))
}

fn bad(file: &str, line: usize, reason: impl Into<String>) -> RunError {
    RunError::Input {
        what: format!("{file}:{line}"),
        reason: reason.into(),
    }
}

/// The number after `prefix` up to the next space.
fn number_after(line: &str, prefix: &str) -> Option<f64> {
    let rest = &line[line.find(prefix)? + prefix.len()..];
    rest.split_whitespace().next()?.parse().ok()
}

/// `Launch Config: (BLOCKS, THREADS)`.
fn launch_config(line: &str) -> Option<(u32, u32)> {
    let rest = &line[line.find("Launch Config: (")? + "Launch Config: (".len()..];
    let inner = &rest[..rest.find(')')?];
    let (b, t) = inner.split_once(',')?;
    Some((b.trim().parse().ok()?, t.trim().parse().ok()?))
}

/// The bandwidth log: per block count, the run alone, then the two runs
/// at once (their lines interleave; each prints its own average).
pub fn read_bandwidth(path: &Path) -> Result<Vec<BandwidthRun>, RunError> {
    let (shown, text) = read(path)?;
    let mut config: Option<(u32, u32)> = None;
    let mut seen_at_config = 0usize;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if let Some(c) = launch_config(line) {
            if config != Some(c) {
                seen_at_config = 0;
            }
            config = Some(c);
        } else if line.contains("Average achieved bandwidth is") {
            let gib = number_after(line, "Average achieved bandwidth is")
                .filter(|v| v.is_finite() && *v > 0.0)
                .ok_or_else(|| {
                    bad(
                        &shown,
                        i + 1,
                        "expected `Average achieved bandwidth is X GB/S`",
                    )
                })?;
            let (blocks, threads) = config
                .ok_or_else(|| bad(&shown, i + 1, "a bandwidth before any `Launch Config`"))?;
            out.push(BandwidthRun {
                blocks,
                threads,
                paired: seen_at_config > 0,
                gib_per_s: gib,
            });
            seen_at_config += 1;
        }
    }
    if out.is_empty() {
        return Err(bad(&shown, 1, "no `Average achieved bandwidth` line"));
    }
    Ok(out)
}

/// The L2 sweep: per working set, the average time alone and colocated.
pub fn read_l2(path: &Path) -> Result<Vec<L2Point>, RunError> {
    let (shown, text) = read(path)?;
    let mut size: Option<f64> = None;
    let mut alone: Option<f64> = None;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.contains("Launch Config:") {
            size = Some(
                number_after(line, "copying ")
                    .ok_or_else(|| bad(&shown, i + 1, "expected `copying X MB`"))?,
            );
        } else if line.contains("Avg alone time is") {
            alone = number_after(line, "Avg alone time is");
        } else if line.contains("Avg colocated time is") {
            let colocated = number_after(line, "Avg colocated time is")
                .ok_or_else(|| bad(&shown, i + 1, "expected `Avg colocated time is X ms`"))?;
            let (Some(working_set_mb), Some(alone_ms)) = (size, alone.take()) else {
                return Err(bad(
                    &shown,
                    i + 1,
                    "a colocated time before its size and alone time",
                ));
            };
            out.push(L2Point {
                working_set_mb,
                alone_ms,
                colocated_ms: colocated,
            });
        }
    }
    if out.is_empty() {
        return Err(bad(&shown, 1, "no `Avg colocated time` line"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bandwidth_log_splits_alone_from_paired_runs() {
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(
            f.path(),
            "Running copy kernel alone - Launch Config: (40, 1024) - copying 2048.000000 MB\n\
             Average achieved bandwidth is 377.292 GB/S\n\
             Running copy kernel alone - Launch Config: (40, 1024) - copying 2048.000000 MB\n\
             Running copy kernel alone - Launch Config: (40, 1024) - copying 2048.000000 MB\n\
             Average achieved bandwidth is 244.645 GB/S\n\
             Average achieved bandwidth is 245.64 GB/S\n\
             Running copy kernel alone - Launch Config: (80, 1024) - copying 2048.000000 MB\n\
             Average achieved bandwidth is 473.506 GB/S\n",
        )
        .unwrap();
        let runs = read_bandwidth(f.path()).unwrap();
        let paired: Vec<bool> = runs.iter().map(|r| r.paired).collect();
        assert_eq!(paired, [false, true, true, false]);
        assert_eq!(runs[3].blocks, 80);
    }

    #[test]
    fn the_l2_log_pairs_each_size_with_both_times() {
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(
            f.path(),
            "Running copy kernel alone - Launch Config: (40, 1024) - copying 1.000000 MB\n\
             Avg alone time is 8.86653 ms\n\
             Running copy kernel colocated - Launch Config: (40, 1024) - copying 1.000000 MB\n\
             Avg colocated time is 14.4232 ms\n",
        )
        .unwrap();
        let p = read_l2(f.path()).unwrap();
        assert_eq!(
            p,
            [L2Point {
                working_set_mb: 1.0,
                alone_ms: 8.86653,
                colocated_ms: 14.4232
            }]
        );
    }
}
