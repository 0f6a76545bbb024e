//! Gpulet's measurements (`data/real-contention/Gpulet/`, headerless CSV):
//! `inference.csv`, each model alone at a batch and an MPS share, and
//! `interference.csv`, a victim at its share beside a co-runner. This
//! module owns both formats and the one reading of a pair row's slowdown
//! (its latency over the victim's own latency alone at the same model,
//! batch and share).

use std::collections::HashMap;
use std::path::Path;

use crate::error::RunError;

/// A model alone: `model, batch, p, "throughput", img/s, "latency", s, valid`.
#[derive(Debug, Clone, PartialEq)]
pub struct SoloRow {
    pub model: String,
    pub batch: u32,
    /// `CUDA_MPS_ACTIVE_THREAD_PERCENTAGE`, 1-100.
    pub share_pct: u32,
    pub latency_ms: f64,
}

/// A victim beside a co-runner: `victim, batch, p, co_runner,
/// co_runner_batch, "throughput", img/s, "latency", s, valid`. Only the
/// victim's share is recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct PairRow {
    pub victim: String,
    pub batch: u32,
    pub share_pct: u32,
    pub co_runner: String,
    pub co_batch: u32,
    pub latency_ms: f64,
}

/// Fields of one headerless line, with what an error must name.
struct Fields<'a> {
    file: &'a str,
    line: usize,
    fields: Vec<&'a str>,
}

impl<'a> Fields<'a> {
    fn split(file: &'a str, line: usize, text: &'a str, want: usize) -> Result<Self, RunError> {
        let fields: Vec<&str> = text.split(',').map(str::trim).collect();
        let me = Fields { file, line, fields };
        if me.fields.len() != want {
            return Err(me.error(format!(
                "expected {want} comma-separated fields, got {}",
                me.fields.len()
            )));
        }
        Ok(me)
    }

    fn error(&self, reason: String) -> RunError {
        RunError::Input {
            what: format!("{}:{}", self.file, self.line),
            reason,
        }
    }

    fn text(&self, i: usize) -> &'a str {
        self.fields[i]
    }

    fn literal(&self, i: usize, want: &str) -> Result<(), RunError> {
        if self.fields[i] != want {
            return Err(self.error(format!(
                "field {}: expected `{want}`, got `{}`",
                i + 1,
                self.fields[i]
            )));
        }
        Ok(())
    }

    fn count(&self, i: usize, what: &str, max: u32) -> Result<u32, RunError> {
        match self.fields[i].parse::<u32>() {
            Ok(v) if (1..=max).contains(&v) => Ok(v),
            _ => Err(self.error(format!(
                "field {} ({what}): expected a whole number 1-{max}, got `{}`",
                i + 1,
                self.fields[i]
            ))),
        }
    }

    fn seconds_as_ms(&self, i: usize) -> Result<f64, RunError> {
        match self.fields[i].parse::<f64>() {
            Ok(v) if v.is_finite() && v > 0.0 => Ok(v * 1e3),
            _ => Err(self.error(format!(
                "field {} (latency): expected seconds > 0, got `{}`",
                i + 1,
                self.fields[i]
            ))),
        }
    }

    /// The trailing `valid` flag: `1` a measurement, `0` one the tool
    /// marked failed.
    fn valid(&self, i: usize) -> Result<bool, RunError> {
        match self.fields[i] {
            "1" => Ok(true),
            "0" => Ok(false),
            other => Err(self.error(format!(
                "field {} (valid): expected 0 or 1, got `{other}`",
                i + 1
            ))),
        }
    }
}

fn lines(path: &Path) -> Result<(String, String), RunError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| RunError::Input {
        what: shown.clone(),
        reason: e.to_string(),
    })?;
    Ok((shown, text))
}

/// Every valid row of `inference.csv`.
pub fn read_solo(path: &Path) -> Result<Vec<SoloRow>, RunError> {
    let (shown, text) = lines(path)?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let f = Fields::split(&shown, i + 1, line, 8)?;
        f.literal(3, "throughput")?;
        f.literal(5, "latency")?;
        let row = SoloRow {
            model: f.text(0).to_string(),
            batch: f.count(1, "batch", 1 << 20)?,
            share_pct: f.count(2, "MPS percentage", 100)?,
            latency_ms: f.seconds_as_ms(6)?,
        };
        if f.valid(7)? {
            out.push(row);
        }
    }
    Ok(out)
}

/// Every valid row of `interference.csv`.
pub fn read_pairs(path: &Path) -> Result<Vec<PairRow>, RunError> {
    let (shown, text) = lines(path)?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let f = Fields::split(&shown, i + 1, line, 10)?;
        f.literal(5, "throughput")?;
        f.literal(7, "latency")?;
        let row = PairRow {
            victim: f.text(0).to_string(),
            batch: f.count(1, "batch", 1 << 20)?,
            share_pct: f.count(2, "MPS percentage", 99)?,
            co_runner: f.text(3).to_string(),
            co_batch: f.count(4, "co-runner batch", 1 << 20)?,
            latency_ms: f.seconds_as_ms(8)?,
        };
        if f.valid(9)? {
            out.push(row);
        }
    }
    Ok(out)
}

/// Latency alone by (model, batch, share).
#[derive(Debug, Default)]
pub struct SoloIndex(HashMap<(String, u32, u32), f64>);

impl SoloIndex {
    pub fn new(rows: &[SoloRow]) -> SoloIndex {
        SoloIndex(
            rows.iter()
                .map(|r| ((r.model.clone(), r.batch, r.share_pct), r.latency_ms))
                .collect(),
        )
    }

    pub fn latency_ms(&self, model: &str, batch: u32, share_pct: u32) -> Option<f64> {
        self.0.get(&(model.to_string(), batch, share_pct)).copied()
    }

    /// A pair row's real slowdown: its latency over the victim's alone at
    /// the same (model, batch, share), if that was measured.
    pub fn slowdown(&self, row: &PairRow) -> Option<f64> {
        self.latency_ms(&row.victim, row.batch, row.share_pct)
            .map(|solo| row.latency_ms / solo)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> tempfile::NamedTempFile {
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), text).unwrap();
        f
    }

    #[test]
    fn reads_both_files_and_the_slowdown_of_a_pair() {
        let solo = file("resnet50,1,20,throughput,210.0,latency,0.004762,1\nvgg19,1,20,throughput,1,latency,0.1,0\n");
        let pairs = file("resnet50,1,20,vgg19,4,throughput,130.5,latency,0.00722,1\n");
        let s = read_solo(solo.path()).unwrap();
        assert_eq!(s.len(), 1, "a row marked invalid is left out");
        assert!((s[0].latency_ms - 4.762).abs() < 1e-9);
        let p = read_pairs(pairs.path()).unwrap();
        assert_eq!(p[0].co_runner, "vgg19");
        assert_eq!(p[0].co_batch, 4);
        let slow = SoloIndex::new(&s).slowdown(&p[0]).unwrap();
        assert!((slow - 7.22 / 4.762).abs() < 1e-9);
    }

    #[test]
    fn a_bad_field_names_the_file_line_and_field() {
        let bad = file("resnet50,1,20,throughput,210.0,latency,0.004762,1\nresnet50,one,20,throughput,1,latency,0.1,1\n");
        let e = read_solo(bad.path()).unwrap_err().to_string();
        assert!(e.contains(":2:") && e.contains("field 2 (batch)"), "{e}");
        let short = file("resnet50,1,20\n");
        let e = read_solo(short.path()).unwrap_err().to_string();
        assert!(e.contains("expected 8 comma-separated fields"), "{e}");
    }
}
