//! Rendering every dataset figure of a 100k-row profile dataset (a
//! simulated resnet50 campaign, its pair rows repeated with jittered
//! slowdowns up to 100,000), as PNG and as SVG. The figure to stay under
//! is 5 s for all of them.

use criterion::{criterion_group, criterion_main, Criterion};
use tally_gpu::GpuSpec;
use tally_plot::{plot_dataset, ImageFormat};
use tally_profiler::campaign;
use tally_profiler::model::ParamsOverride;
use tally_profiler::zoo;

const ROWS: usize = 100_000;

fn bench(c: &mut Criterion) {
    let gpu = GpuSpec::preset("h100-sxm").expect("preset");
    let model = zoo::resolve_model("resnet50", &ParamsOverride::default()).expect("model");
    let mut dataset = campaign::simulated_dataset(&model, &gpu, 0, 0.01).expect("campaign");
    let base = dataset.pairs.clone();
    let mut i = 0usize;
    while dataset.pairs.len() < ROWS {
        let mut p = base[i % base.len()].clone();
        let jitter = 1.0 + ((i * 2_654_435_761) % 1000) as f64 * 1e-4;
        p.slowdown_a *= jitter;
        p.slowdown_b *= jitter;
        dataset.pairs.push(p);
        i += 1;
    }
    let out = tempfile::tempdir().expect("temp dir");
    let mut group = c.benchmark_group("dataset_plots_100k");
    group.sample_size(10);
    for (name, format) in [("png", ImageFormat::Png), ("svg", ImageFormat::Svg)] {
        group.bench_function(name, |b| {
            b.iter(|| plot_dataset(&dataset, out.path(), format).expect("plots"))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
