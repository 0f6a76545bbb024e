//! A campaign writes what its backend measures and nothing else: the
//! standalone columns are the backend's counters (a real GPU without
//! Nsight Compute has only the duration and launch counters, and a missing
//! counter must stay absent, never become a zero), and a backend that
//! repeats its timings leaves their spread and its settings in `run.json`.

use tally_gpu::{
    Backend, Counter, GpuSpec, KernelSpec, Measurement, Partition, Result, SimBackend,
    LAUNCH_COUNTERS,
};
use tally_profiler::campaign::{self, CampaignConfig, PairSelection, RunMeta};
use tally_profiler::model::ParamsOverride;
use tally_profiler::zoo;

/// The simulator seen as a real GPU without ncu: the duration and launch
/// counters, a spread on every measurement, its settings.
struct LaunchCountersOnly(SimBackend);

impl LaunchCountersOnly {
    fn timed(mut m: Measurement) -> Measurement {
        m.spread_pct = Some(m.duration_us.fract() * 10.0);
        m
    }
}

impl Backend for LaunchCountersOnly {
    fn spec(&self) -> &GpuSpec {
        self.0.spec()
    }

    fn counters(&self) -> Vec<Counter> {
        std::iter::once(Counter::DurationNs)
            .chain(LAUNCH_COUNTERS)
            .collect()
    }

    fn settings(&self) -> Vec<(&'static str, String)> {
        vec![("repetitions", "7".into())]
    }

    fn standalone(&self, k: &KernelSpec, p: Partition) -> Result<Measurement> {
        self.0.standalone(k, p).map(Self::timed)
    }

    fn co_run(
        &self,
        a: &KernelSpec,
        pa: Partition,
        b: &KernelSpec,
        pb: Partition,
    ) -> Result<(Measurement, Measurement)> {
        let (ma, mb) = self.0.co_run(a, pa, b, pb)?;
        Ok((Self::timed(ma), Self::timed(mb)))
    }
}

#[test]
fn columns_are_the_backends_counters_and_spreads_reach_run_json() {
    let gpu = GpuSpec::preset("h200").expect("preset");
    let sim = SimBackend::new(gpu.clone(), 0, 0.0);
    let backend = LaunchCountersOnly(SimBackend::new(gpu.clone(), 0, 0.0));
    let model = zoo::build("bert-base", &ParamsOverride::default()).expect("zoo");
    let config = CampaignConfig {
        sm_counts: Some(vec![32, 64]),
        pairs: PairSelection::Sample(4),
        ..CampaignConfig::default()
    };
    let out = campaign::run(&backend, &model, &config, &mut |_| {}).expect("campaign");
    let full = campaign::run(&sim, &model, &config, &mut |_| {}).expect("campaign");
    let names: Vec<&str> = backend.counters().iter().map(Counter::name).collect();
    assert_eq!(out.standalone.counter_names, names);
    assert_eq!(full.standalone.counter_names.len(), Counter::ALL.len());
    // The values are the full run's values of those columns.
    for (row, full_row) in out.standalone.rows.iter().zip(&full.standalone.rows) {
        for (i, name) in names.iter().enumerate() {
            let j = full.standalone.counter_index(name).expect("column");
            assert_eq!(row.counters[i], full_row.counters[j], "{name}");
        }
    }
    assert_eq!(out.spreads.standalone.len(), out.standalone.rows.len());
    assert_eq!(out.spreads.pairs.len(), out.pairs.len());
    assert!(!full.spreads.measured() && full.settings.is_empty());

    let meta = RunMeta {
        tool_version: "test".into(),
        command_line: Vec::new(),
        backend: "cuda".into(),
        seed: 0,
        noise_sigma: 0.0,
        started_at: String::new(),
        finished_at: String::new(),
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let dataset = out.clone().into_dataset(&model, &gpu, meta.clone());
    let m = &dataset.info.params["measurement"];
    assert_eq!(m["repetitions"], "7");
    assert_eq!(
        m["spread_pct"]["standalone"].as_array().map(Vec::len),
        Some(out.standalone.rows.len())
    );
    dataset
        .write(dir.path(), tally_datasets::Format::Both)
        .expect("write");
    let back = tally_datasets::Dataset::read(dir.path()).expect("read");
    assert_eq!(back.standalone.counter_names, names);
    assert_eq!(back.info.params["measurement"], *m);
    // The simulator's run.json has no measurement block.
    let sim_data = full.into_dataset(&model, &gpu, meta);
    assert!(sim_data.info.params.get("measurement").is_none());
}
