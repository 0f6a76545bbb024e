//! MuxServe's LLaMA profile (`data/real-contention/MuxServe/llama.json`):
//! model -> tensor-parallel GPUs -> SM % -> batch -> sequence length ->
//! `{prefill, decoding}` milliseconds, one job alone under an MPS share.
//! This module owns that format; `-1` (or a missing phase) is a point the
//! source did not measure and is left out.

use std::path::Path;

use serde_json::Value;

use crate::error::RunError;

/// One measured point.
#[derive(Debug, Clone, PartialEq)]
pub struct LlamaPoint {
    /// As the file names it (`llama-7b`).
    pub model: String,
    pub tensor_parallel: u32,
    pub sm_pct: u32,
    pub batch: u32,
    pub seq_len: u32,
    pub prefill_ms: Option<f64>,
    pub decode_ms: Option<f64>,
}

fn number_key(key: &str, what: &str, at: &str) -> Result<u32, RunError> {
    key.parse::<u32>()
        .ok()
        .filter(|&v| v > 0)
        .ok_or_else(|| RunError::Input {
            what: at.to_string(),
            reason: format!("key `{key}`: expected {what} as a whole number > 0"),
        })
}

fn object<'a>(v: &'a Value, at: &str) -> Result<&'a serde_json::Map<String, Value>, RunError> {
    v.as_object().ok_or_else(|| RunError::Input {
        what: at.to_string(),
        reason: "expected an object".into(),
    })
}

fn phase_ms(
    point: &serde_json::Map<String, Value>,
    phase: &str,
    at: &str,
) -> Result<Option<f64>, RunError> {
    match point.get(phase) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => {
            let ms = v.as_f64().ok_or_else(|| RunError::Input {
                what: format!("{at}.{phase}"),
                reason: format!("expected milliseconds, got {v}"),
            })?;
            Ok((ms > 0.0).then_some(ms))
        }
    }
}

/// Every point of the file, in the file's order.
pub fn read_llama(path: &Path) -> Result<Vec<LlamaPoint>, RunError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| RunError::Input {
        what: shown.clone(),
        reason: e.to_string(),
    })?;
    let root: Value = serde_json::from_str(&text).map_err(|e| RunError::Input {
        what: format!("{shown}:{}:{}", e.line(), e.column()),
        reason: e.to_string(),
    })?;
    let mut out = Vec::new();
    for (model, by_tp) in object(&root, &shown)? {
        let at = format!("{shown}: {model}");
        for (tp, by_sm) in object(by_tp, &at)? {
            let at = format!("{at}.{tp}");
            let tensor_parallel = number_key(tp, "tensor-parallel GPUs", &at)?;
            for (sm, by_batch) in object(by_sm, &at)? {
                let at = format!("{at}.{sm}");
                let sm_pct = number_key(sm, "an SM percentage", &at)?;
                for (batch, by_seq) in object(by_batch, &at)? {
                    let at = format!("{at}.{batch}");
                    let batch = number_key(batch, "a batch", &at)?;
                    for (seq, point) in object(by_seq, &at)? {
                        let at = format!("{at}.{seq}");
                        let seq_len = number_key(seq, "a sequence length", &at)?;
                        let point = object(point, &at)?;
                        out.push(LlamaPoint {
                            model: model.clone(),
                            tensor_parallel,
                            sm_pct,
                            batch,
                            seq_len,
                            prefill_ms: phase_ms(point, "prefill", &at)?,
                            decode_ms: phase_ms(point, "decoding", &at)?,
                        });
                    }
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_points_and_leaves_out_unmeasured_phases() {
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(
            f.path(),
            r#"{"llama-7b": {"1": {"100": {"8": {"128": {"prefill": 78.3, "decoding": 11.9}}},
                                   "30": {"8": {"128": {"prefill": -1.0, "decoding": 17.3}}}}}}"#,
        )
        .unwrap();
        let points = read_llama(f.path()).unwrap();
        assert_eq!(points.len(), 2);
        let low = points.iter().find(|p| p.sm_pct == 30).unwrap();
        assert_eq!(low.prefill_ms, None);
        assert_eq!(low.decode_ms, Some(17.3));
        assert_eq!((low.batch, low.seq_len, low.tensor_parallel), (8, 128, 1));
    }

    #[test]
    fn a_bad_key_is_named_with_its_path() {
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), r#"{"llama-7b": {"1": {"all": {}}}}"#).unwrap();
        let e = read_llama(f.path()).unwrap_err().to_string();
        assert!(e.contains("llama-7b.1") && e.contains("key `all`"), "{e}");
    }
}
