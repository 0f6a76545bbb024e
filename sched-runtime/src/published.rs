//! The published Tally table (ASPLOS'25 artifact, measured on an
//! A100-SXM4-40GB; `data/tally-bench-a100/` with its provenance): for each
//! of the 12 HP/BE pairs and each system, the HP p99 slowdown and the
//! system throughput. This module owns that file's format and the mapping
//! from the artifact's job keys to the `tally run` job arguments that model
//! them.

use std::path::Path;

use crate::csv_columns::CsvColumns;
use crate::error::RunError;

/// The artifact's systems: column prefix in the published file, and the
/// policy of this tool that models it.
pub const SYSTEMS: [(&str, &str); 5] = [
    ("time_sliced", "time-slicing"),
    ("mps", "mps"),
    ("mps_priority", "mps-priority"),
    ("tgs", "tgs"),
    ("tally", "tally"),
];

/// The artifact's job keys and the job arguments that model them. The HP
/// BERT is the artifact's ONNX Runtime server of
/// `bert-large-uncased-whole-word-masking-finetuned-squad` at sequence
/// length 128 and batch 1 (`python/workloads/inference/onnxruntime/bert/`,
/// though its file is named bert-base); Llama-2-7B is one whole generation
/// of its fixed prompt up to 128 tokens; the job keyed whisper-large-v3 is
/// the whisper-small its script loads.
pub const JOBS: [(&str, &str); 8] = [
    (
        "onnxruntime_bert_infer_server_load_0.5_1",
        "bert-large:infer@1",
    ),
    (
        "onnxruntime_llama-2-7b_infer_server_load_0.5_1",
        "llama2-7b:infer",
    ),
    // The artifact's script for this key trains whisper-small (see the
    // zoo's `whisper` module).
    (
        "pytorch_whisper-large-v3_train_16",
        "whisper-small:train@16",
    ),
    ("pytorch_resnet50_train_128", "resnet50:train@128"),
    ("pytorch_pointnet_train_128", "pointnet:train"),
    ("pytorch_pegasus-x-base_train_4", "pegasus-x-base:train"),
    ("pytorch_gpt2-large_train_1", "gpt2-large:train"),
    // SQuAD fine-tuning of bert-base at sequence 384 (the zoo's
    // `bert` module).
    ("pytorch_bert_train_32", "bert-base-squad:train@32"),
];

/// One system's published result on one pair.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PublishedResult {
    pub p99_slowdown: f64,
    pub system_throughput: f64,
    /// Mean latency over the baseline mean (`None` in a table without the
    /// `<sys>_mean_slowdown` columns).
    pub mean_slowdown: Option<f64>,
}

/// One published pair, its jobs given as `tally run` arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct PublishedPair {
    pub hp: String,
    pub be: String,
    /// The HP request's mean latency alone, ms (`None` in a table without
    /// `baseline_avg_ms`).
    pub hp_alone_ms: Option<f64>,
    /// By policy name (this tool's), in [`SYSTEMS`] order.
    pub results: Vec<(String, PublishedResult)>,
}

impl PublishedPair {
    pub fn result(&self, policy: &str) -> Option<PublishedResult> {
        self.results
            .iter()
            .find(|(p, _)| p == policy)
            .map(|(_, r)| *r)
    }
}

/// The job argument that models an artifact job key.
pub fn job_for_key(key: &str) -> Option<&'static str> {
    JOBS.iter().find(|(k, _)| *k == key).map(|(_, j)| *j)
}

/// Read the published per-pair table
/// (`per_pair_p99_and_throughput_derived.csv`); its mean-slowdown columns
/// are optional (an older copy of the table lacks them).
pub fn read_published(path: &Path) -> Result<Vec<PublishedPair>, RunError> {
    let mut required = vec!["hp_job".to_string(), "be_job".to_string()];
    for (prefix, _) in SYSTEMS {
        required.push(format!("{prefix}_p99_slowdown"));
        required.push(format!("{prefix}_sys_tput"));
    }
    let names: Vec<&str> = required.iter().map(String::as_str).collect();
    let table = CsvColumns::read(path, &names)?;
    let mut pairs = Vec::new();
    for row in table.rows() {
        let job = |column: &str| {
            let key = row.text(column);
            job_for_key(key).map(str::to_string).ok_or_else(|| {
                row.error(
                    column,
                    format!("unknown artifact job `{key}` (known: {})", known_keys()),
                )
            })
        };
        let mut results = Vec::new();
        for (prefix, policy) in SYSTEMS {
            results.push((
                policy.to_string(),
                PublishedResult {
                    p99_slowdown: row.number(&format!("{prefix}_p99_slowdown"))?,
                    system_throughput: row.number(&format!("{prefix}_sys_tput"))?,
                    mean_slowdown: row.optional_number(&format!("{prefix}_mean_slowdown"))?,
                },
            ));
        }
        pairs.push(PublishedPair {
            hp: job("hp_job")?,
            be: job("be_job")?,
            hp_alone_ms: row.optional_number("baseline_avg_ms")?,
            results,
        });
    }
    Ok(pairs)
}

fn known_keys() -> String {
    JOBS.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(", ")
}
