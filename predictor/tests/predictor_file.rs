//! Model files end to end: trained on a small simulated dataset, saved,
//! loaded back identical with identical predictions; files of another
//! format, version, feature schema or GPU are refused with a reason.

use tally_datasets::Dataset;
use tally_gpu::GpuSpec;
use tally_predictor::samples::ProfileTable;
use tally_predictor::train::{train, TrainRequest};
use tally_predictor::{CounterSubset, Method, PredictorFile, RuntimePredictor, TrainConfig};
use tally_profiler::campaign;
use tally_profiler::model::ParamsOverride;
use tally_profiler::zoo;

fn dataset(model: &str, gpu: &str) -> Dataset {
    let gpu = GpuSpec::preset(gpu).expect("preset");
    let model = zoo::resolve_model(model, &ParamsOverride::default()).expect("model");
    campaign::simulated_dataset(&model, &gpu, 1, 0.01).expect("campaign")
}

fn trained() -> PredictorFile {
    let request = TrainRequest {
        methods: Method::LEARNED.to_vec(),
        config: TrainConfig {
            gbm: tally_predictor::gbm::GbmParams {
                trees: 40,
                ..Default::default()
            },
            seed: 0,
        },
        tool_version: "test".to_string(),
        trained_at: "2026-01-01T00:00:00Z".to_string(),
        counters: CounterSubset::all(),
    };
    train(&[dataset("mobilenetv2", "h100-sxm")], &request).expect("train")
}

#[test]
fn round_trip_keeps_the_model_and_its_predictions() {
    let file = trained();
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("model.json");
    file.save(&path).expect("save");
    let back = PredictorFile::load(&path).expect("load");
    assert_eq!(back, file);
    let data = dataset("mobilenetv2", "h100-sxm");
    let table = ProfileTable::new(&data);
    let (a, b) = (&data.ops[0].op_id, &data.ops[1].op_id);
    let (pa, pb) = (
        table.profile(a, 64).expect("profile"),
        table.profile(b, 64).expect("profile"),
    );
    for m in Method::LEARNED {
        let before = RuntimePredictor::from_model(&file, Some(m)).expect("learned");
        let after = RuntimePredictor::from_model(&back, Some(m)).expect("learned");
        let s = before.slowdown(&pa, &pb);
        assert!(s >= 1.0 && s.is_finite());
        assert_eq!(s.to_bits(), after.slowdown(&pa, &pb).to_bits());
    }
    // Provenance and validation travel with the model.
    assert_eq!(back.training_data[0].model, "mobilenetv2");
    assert_eq!(back.gpu.name, "h100-sxm");
    assert_eq!(back.validation.len(), 2);
}

/// Save `file`, edit its JSON with `edit`, and return the load error.
fn load_error(file: &PredictorFile, edit: impl Fn(&mut serde_json::Value)) -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("model.json");
    let mut v = serde_json::to_value(file).expect("json");
    edit(&mut v);
    std::fs::write(&path, serde_json::to_string(&v).expect("json")).expect("write");
    let e = PredictorFile::load(&path)
        .expect_err("must be refused")
        .to_string();
    assert!(e.contains("model.json"), "error names the file: {e}");
    e
}

#[test]
fn mismatched_model_files_are_refused() {
    let file = trained();
    let e = load_error(&file, |v| v["format"] = "something-else".into());
    assert!(e.contains("not a tally predictor model file"), "{e}");
    let e = load_error(&file, |v| v["version"] = 99.into());
    assert!(e.contains("version 99") && e.contains("retrain"), "{e}");
    let e = load_error(&file, |v| v["feature_schema"]["version"] = 0.into());
    assert!(e.contains("feature schema version 0"), "{e}");
    let e = load_error(&file, |v| {
        v["feature_schema"]["names"][3] = "renamed".into()
    });
    assert!(e.contains("at feature 3"), "{e}");
    let e = load_error(&file, |v| {
        v["models"]["linear"]["weights"]
            .as_array_mut()
            .expect("weights")
            .pop();
    });
    assert!(e.contains("weights"), "{e}");
    let e = load_error(&file, |v| {
        v["models"]["gbm"]["nodes"][0]["left"] = 1_000_000_000.into()
    });
    assert!(e.contains("gbm trees"), "{e}");
    let e = load_error(&file, |v| {
        v["models"]["gbm"] = serde_json::Value::Null;
        v["default_method"] = "gbm".into();
    });
    assert!(e.contains("default method `gbm`"), "{e}");

    // Data from another GPU than the training data.
    let other = dataset("mobilenetv2", "a100-40gb");
    let e = file
        .check_gpu(&other.info.gpu, "`runs/a100`")
        .expect_err("other GPU")
        .to_string();
    assert!(e.contains("a100-40gb") && e.contains("h100-sxm"), "{e}");
}
