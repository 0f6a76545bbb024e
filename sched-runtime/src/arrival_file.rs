//! HP arrival-time files (`tally run --arrivals FILE`), in the two forms
//! users have:
//!
//! - our own: one arrival time per line, in **milliseconds** from the
//!   start, `#` comments and blank lines skipped;
//! - the Tally benchmark's trace files (tally-bench's `infer_trace/*.json`,
//!   written by `bench_utils.trace.generate_azure_trace_with_load`): one
//!   JSON array of arrival times in **seconds** from the start. The
//!   artifact's server runs, the published A100 table among them, replay
//!   such a trace (the Azure Functions 2021 invocation trace's busiest
//!   function, thinned to the load and scaled to the run), not a Poisson
//!   process; with the file, a run here replays the same arrivals.
//!
//! A file whose first non-blank character is `[` is read as the JSON form.
//! Either way the times must be finite, >= 0 and non-decreasing, and the
//! result is in microseconds.

use std::path::Path;

use crate::error::RunError;

/// Read an arrival file in either form; times in microseconds.
pub fn read_arrival_file(path: &Path) -> Result<Vec<f64>, RunError> {
    let text = std::fs::read_to_string(path).map_err(|e| RunError::Input {
        what: path.display().to_string(),
        reason: e.to_string(),
    })?;
    let times = if text.trim_start().starts_with('[') {
        json_trace_us(path, &text)?
    } else {
        lines_us(path, &text)?
    };
    if times.is_empty() {
        return Err(RunError::Input {
            what: path.display().to_string(),
            reason: "no arrival times".into(),
        });
    }
    Ok(times)
}

/// Check one arrival time (in its file's unit) against the previous one (in
/// microseconds) and convert it to microseconds.
fn checked_us(value: f64, us_per_unit: f64, last: Option<&f64>) -> Result<f64, String> {
    if !value.is_finite() || value < 0.0 {
        return Err(format!("arrival time {value} must be >= 0"));
    }
    let us = value * us_per_unit;
    if last.is_some_and(|&l| us < l) {
        return Err("arrival times must not decrease".into());
    }
    Ok(us)
}

/// Our form: one time in ms per line.
fn lines_us(path: &Path, text: &str) -> Result<Vec<f64>, RunError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let bad = |reason: String| RunError::Input {
            what: format!("{}:{}", path.display(), i + 1),
            reason,
        };
        let ms: f64 = line
            .parse()
            .map_err(|_| bad(format!("expected an arrival time in ms, found `{line}`")))?;
        out.push(checked_us(ms, 1e3, out.last()).map_err(bad)?);
    }
    Ok(out)
}

/// tally-bench's form: a JSON array of times in seconds.
fn json_trace_us(path: &Path, text: &str) -> Result<Vec<f64>, RunError> {
    let seconds: Vec<f64> = serde_json::from_str(text).map_err(|e| RunError::Input {
        what: format!("{}:{}", path.display(), e.line()),
        reason: format!(
            "expected a JSON array of arrival times in seconds (a tally-bench trace): {e}"
        ),
    })?;
    let mut out = Vec::with_capacity(seconds.len());
    for (i, &s) in seconds.iter().enumerate() {
        let us = checked_us(s, 1e6, out.last()).map_err(|reason| RunError::Input {
            what: format!("{} entry {}", path.display(), i + 1),
            reason,
        })?;
        out.push(us);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Vec<f64>, RunError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("arrivals");
        std::fs::write(&path, text).unwrap();
        read_arrival_file(&path)
    }

    #[test]
    fn our_form_is_milliseconds_per_line() {
        let t = read("# arrivals\n0\n1.5\n\n1.5 # same time\n20\n").unwrap();
        assert_eq!(t, vec![0.0, 1500.0, 1500.0, 20_000.0]);
    }

    #[test]
    fn a_tally_bench_trace_is_a_json_array_of_seconds() {
        let t = read("  [0.0042, 0.0107, 0.5, 12]\n").unwrap();
        let want = [4200.0, 10_700.0, 500_000.0, 12_000_000.0];
        assert_eq!(t.len(), want.len());
        for (got, want) in t.iter().zip(want) {
            assert!((got - want).abs() < 1e-6, "{got} vs {want}");
        }
    }

    #[test]
    fn bad_files_are_refused_with_where_and_what() {
        let e = read("1\nsoon\n").unwrap_err().to_string();
        assert!(e.contains(":2") && e.contains("`soon`"), "{e}");
        let e = read("5\n4\n").unwrap_err().to_string();
        assert!(e.contains(":2") && e.contains("must not decrease"), "{e}");
        let e = read("[0.1, 0.3, 0.2]").unwrap_err().to_string();
        assert!(
            e.contains("entry 3") && e.contains("must not decrease"),
            "{e}"
        );
        let e = read("[0.1, -1]").unwrap_err().to_string();
        assert!(e.contains("entry 2") && e.contains(">= 0"), "{e}");
        let e = read("[0.1,\n \"x\"]").unwrap_err().to_string();
        assert!(e.contains(":2") && e.contains("JSON array"), "{e}");
        let e = read("# nothing\n").unwrap_err().to_string();
        assert!(e.contains("no arrival times"), "{e}");
        let e = read("[]").unwrap_err().to_string();
        assert!(e.contains("no arrival times"), "{e}");
    }
}
