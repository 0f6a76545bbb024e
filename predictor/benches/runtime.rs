//! Throughput of the run-time predictor (the scheduler's decision path):
//! one slowdown prediction for a pair of standalone profiles, with the
//! linear model and with the boosted trees, trained on a simulated
//! mobilenetv2 dataset. The figure to reach is 1 M predictions/s.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tally_gpu::GpuSpec;
use tally_predictor::samples::ProfileTable;
use tally_predictor::train::{train, TrainRequest};
use tally_predictor::{Method, RuntimePredictor, SideProfile};
use tally_profiler::campaign;
use tally_profiler::model::ParamsOverride;
use tally_profiler::zoo;

fn bench(c: &mut Criterion) {
    let gpu = GpuSpec::preset("h100-sxm").expect("preset");
    let model = zoo::resolve_model("mobilenetv2", &ParamsOverride::default()).expect("model");
    let dataset = campaign::simulated_dataset(&model, &gpu, 0, 0.01).expect("campaign");
    let request = TrainRequest::default_learned("bench");
    let file = train(std::slice::from_ref(&dataset), &request).expect("train");
    let table = ProfileTable::new(&dataset);
    // Every op on a 64-SM half: the pairs cycle through them.
    let sides: Vec<SideProfile> = dataset
        .ops
        .iter()
        .filter_map(|o| table.profile(&o.op_id, 64).ok())
        .collect();
    let n = sides.len();
    let mut group = c.benchmark_group("runtime_predictor");
    group.throughput(Throughput::Elements(1));
    for method in Method::LEARNED {
        let p = RuntimePredictor::from_model(&file, Some(method)).expect("learned");
        let mut i = 0usize;
        group.bench_function(method.as_str(), |b| {
            b.iter(|| {
                i = (i + 1) % (n * n);
                p.slowdown(
                    std::hint::black_box(&sides[i / n]),
                    std::hint::black_box(&sides[i % n]),
                )
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
