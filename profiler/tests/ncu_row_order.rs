//! Property: an ncu details page's rows carry no meaning in their order or
//! in their trailing empty fields. Any shuffle of the rows of a valid
//! long-format export (`--set full`, rule rows, program output between
//! rows) and any truncation of each row's trailing empty fields (or an
//! added trailing comma) import to the same dataset.

use std::path::Path;

use proptest::prelude::*;
use tally_datasets::Dataset;
use tally_gpu::cuda::{parse_ncu_csv, spec_from_report};
use tally_profiler::campaign::RunMeta;
use tally_profiler::ncu_import::{import_ncu, ImportGpu};

const FULL: &str = include_str!("../../gpu/tests/fixtures/ncu/details-full-2025.csv");

fn meta() -> RunMeta {
    RunMeta {
        tool_version: "test".into(),
        command_line: vec![],
        backend: "ncu".into(),
        seed: 0,
        noise_sigma: 0.0,
        started_at: String::new(),
        finished_at: String::new(),
    }
}

fn import(text: &str) -> Dataset {
    let path = Path::new("full.csv");
    let report = parse_ncu_csv(text, path).expect("parses");
    let gpu = ImportGpu::Derived(spec_from_report(&report, path).expect("derived"));
    import_ncu(&report, path, &gpu, "full", meta()).expect("imports")
}

/// The fixture as (lines up to and including the header, lines after it).
fn split() -> (Vec<String>, Vec<String>) {
    let lines: Vec<String> = FULL.lines().map(String::from).collect();
    let header = lines
        .iter()
        .position(|l| l.starts_with("\"ID\","))
        .expect("header");
    (lines[..=header].to_vec(), lines[header + 1..].to_vec())
}

/// `line` written out to the header's 20 fields (a rule-less row with empty
/// rule columns), then `cut` of its trailing empty fields removed (at most
/// all of them), or one empty field added when `cut` is 0 and `add` is set;
/// lines that are not CSV rows are kept as they are.
fn retail(line: &str, cut: usize, add: bool) -> String {
    if !line.starts_with('"') {
        return line.to_string();
    }
    let mut r = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(line.as_bytes());
    let record = r.records().next().expect("a record").expect("valid");
    let mut fields: Vec<String> = record.iter().map(String::from).collect();
    if fields.len() < 20 {
        fields.resize(20, String::new());
    }
    let empty = fields.iter().rev().take_while(|f| f.is_empty()).count();
    fields.truncate(fields.len() - cut.min(empty));
    let mut out = fields
        .iter()
        .map(|f| format!("\"{}\"", f.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(",");
    if cut == 0 && add {
        out.push(',');
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn shuffled_and_truncated_rows_import_to_the_same_dataset(
        order in Just((0..split().1.len()).collect::<Vec<usize>>()).prop_shuffle(),
        cuts in proptest::collection::vec((0usize..8, any::<bool>()), split().1.len()),
    ) {
        let (head, body) = split();
        let reference = import(FULL);
        let shuffled: Vec<String> = order
            .iter()
            .map(|&i| retail(&body[i], cuts[i].0, cuts[i].1))
            .collect();
        let text = head.into_iter().chain(shuffled).collect::<Vec<_>>().join("\n") + "\n";
        prop_assert_eq!(import(&text), reference);
    }
}

/// The property can fail: a changed value does change the dataset.
#[test]
fn a_changed_value_changes_the_dataset() {
    let changed = FULL.replacen(
        "\"Duration\",\"us\",\"48.51\"",
        "\"Duration\",\"us\",\"58.51\"",
        1,
    );
    assert_ne!(changed, FULL);
    assert_ne!(import(&changed), import(FULL));
}
