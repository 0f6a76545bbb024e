//! The interference in profiled data is joint, as measured on real GPUs:
//! across the pairs of all zoo models on the simulated H100, compute-bound
//! pairs barely slow down, heavy memory-path users slow each other by 1.5x
//! and more, and the Orion-style intensity rule misses by well over 8 %.

use tally_gpu::{GpuSpec, SimBackend};
use tally_profiler::campaign::{self, CampaignConfig, RunMeta};
use tally_profiler::model::ParamsOverride;
use tally_profiler::summary::summarize;
use tally_profiler::zoo;

#[test]
fn zoo_pairs_on_h100_show_joint_memory_path_interference() {
    let gpu = GpuSpec::preset("h100-sxm").expect("preset");
    let backend = SimBackend::new(gpu.clone(), 0, 0.01);
    let datasets: Vec<_> = zoo::NAMES
        .iter()
        .map(|name| {
            let model = zoo::build(name, &ParamsOverride::default()).expect("zoo model");
            let out = campaign::run(&backend, &model, &CampaignConfig::default(), &mut |_| {})
                .expect("campaign");
            let meta = RunMeta {
                tool_version: "test".into(),
                command_line: Vec::new(),
                backend: "sim".into(),
                seed: 0,
                noise_sigma: 0.01,
                started_at: String::new(),
                finished_at: String::new(),
            };
            out.into_dataset(&model, &gpu, meta)
        })
        .collect();
    let s = summarize(&datasets).expect("pairs");
    println!("{s:#?}");
    assert!(s.pair_rows > 50_000, "{}", s.pair_rows);
    assert!(
        s.slowdown_min < 1.02,
        "compute-bound pairs sit at ~1.0: {}",
        s.slowdown_min
    );
    assert!(
        s.slowdown_max >= 1.5,
        "heavy memory users: {}",
        s.slowdown_max
    );
    assert!(s.slowdown_p90 >= 1.5, "{}", s.slowdown_p90);
    assert!(
        s.intensity_rule_mape_pct >= 8.0,
        "{}",
        s.intensity_rule_mape_pct
    );
    // Joint: the pair's make-up, not either side alone, sets the slowdown.
    assert!(
        s.compute_compute_mean_slowdown < 1.1,
        "{}",
        s.compute_compute_mean_slowdown
    );
    assert!(s.compute_memory_mean_slowdown > s.compute_compute_mean_slowdown);
    assert!(s.memory_memory_mean_slowdown > s.compute_memory_mean_slowdown + 0.1);
}
