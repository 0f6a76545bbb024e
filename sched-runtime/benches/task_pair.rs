//! A task-level co-location prediction as `tally predict --task A --task B
//! --sm SA,SB` makes it: bert-base:infer beside resnet50:infer on
//! a100-40gb at 52 / 56 SMs, with the predictor trained on a simulated
//! mobilenetv2 dataset. Measured end to end: profiling both tasks'
//! kernels on the fly (noiseless simulator), each task alone, and the pair
//! composed on the engine paced by the predictor. The figure to reach is
//! under 50 ms (the scheduler and the CLI use it interactively).

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use tally_gpu::sim::SimBackend;
use tally_gpu::{GpuSpec, Sharing};
use tally_predictor::train::{train, TrainRequest};
use tally_predictor::RuntimePredictor;
use tally_profiler::campaign;
use tally_profiler::model::ParamsOverride;
use tally_profiler::zoo;
use tally_sched::colocation::kernel_profiles::KernelProfiles;
use tally_sched::colocation::pair_slowdown::PredictorPairs;
use tally_sched::colocation::task_pair::{needs, task_pair, Rates};
use tally_sched::workload::JobSpec;

fn job(name: &str) -> JobSpec {
    let model = zoo::resolve_model(name, &ParamsOverride::default()).expect("zoo model");
    JobSpec::gpu_bound(name, model.launches())
}

fn bench(c: &mut Criterion) {
    let gpu = GpuSpec::preset("a100-40gb").expect("preset");
    let model = zoo::resolve_model("mobilenetv2", &ParamsOverride::default()).expect("model");
    let dataset = campaign::simulated_dataset(&model, &gpu, 0, 0.01).expect("campaign");
    let request = TrainRequest::default_learned("bench");
    let file = train(std::slice::from_ref(&dataset), &request).expect("train");
    let counters = file.counter_subset();
    let pairs = Arc::new(PredictorPairs(
        RuntimePredictor::from_model(&file, None).expect("run-time form"),
    ));
    let (a, b) = (job("bert-base:infer"), job("resnet50:infer"));
    let splits = [(52, 56)];
    let backend = SimBackend::noiseless(gpu.clone());
    let mut group = c.benchmark_group("task_pair");
    group.sample_size(20);
    group.bench_function("bert-base_resnet50_a100_one_split", |bench| {
        bench.iter(|| {
            let profiles =
                KernelProfiles::from_backend(&backend, &counters, &needs(&a, &b, &splits))
                    .expect("profiles");
            let rates = Rates::Predicted {
                profiles: Arc::new(profiles),
                pairs: pairs.clone(),
            };
            task_pair(&gpu, &a, &b, &splits, &rates, Sharing::GreenContext).expect("predicts")
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
