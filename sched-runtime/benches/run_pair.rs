//! One co-location pair as `tally run --policy tally` simulates it: HP
//! bert-base:infer as a Poisson stream at load 0.5 with BE resnet50:train
//! on a100-40gb, 30 simulated seconds (the alone reference included). The
//! figure to reach is under 5 s per run on one core.

use criterion::{criterion_group, criterion_main, Criterion};
use tally_gpu::GpuSpec;
use tally_profiler::model::ParamsOverride;
use tally_profiler::zoo;
use tally_sched::experiment::run_policies;
use tally_sched::policy::PolicyOptions;
use tally_sched::runner::RunConfig;
use tally_sched::workload::{Arrivals, JobSpec, Workload};

fn job(name: &str) -> JobSpec {
    let model = zoo::resolve_model(name, &ParamsOverride::default()).expect("zoo model");
    JobSpec::gpu_bound(name, model.launches())
}

fn bench(c: &mut Criterion) {
    let workload = Workload {
        hp: job("bert-base:infer"),
        be: vec![job("resnet50:train")],
    };
    let cfg = RunConfig {
        gpu: GpuSpec::preset("a100-40gb").expect("preset"),
        duration_us: 30e6,
        seed: 1,
        arrivals: Arrivals::Poisson { load: 0.5 },
        timeline_us: None,
    };
    let policies = vec!["tally".to_string()];
    let mut group = c.benchmark_group("run_pair");
    group.sample_size(10);
    group.bench_function("tally_bert-base_resnet50-train_30s", |b| {
        b.iter(|| {
            run_policies(
                &workload,
                &cfg,
                &policies,
                &PolicyOptions::default(),
                || Ok(None),
            )
            .expect("run")
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
