//! Parse + transform (all variants) of a ~1 MB module, built by repeating
//! a fixture's entries under fresh names. Target: well under one second.

use std::hint::black_box;
use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion};
use tally_kernels::ptx::ast::{FnKind, Item};
use tally_kernels::ptx::{parse_module, transform_module, Variants};

/// The module text: the fixture once, then its entries again and again
/// (renamed `<entry>__rep<k>`) until the text reaches about 1 MB.
fn big_module() -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let src = ["ptx/gemm.sm_90.ptx", "handwritten/sync_early_return.ptx"]
        .iter()
        .find_map(|p| std::fs::read_to_string(dir.join(p)).ok())
        .expect("a fixture");
    let mut m = parse_module(&src).expect("fixture parses");
    let entries: Vec<_> = m
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Function(f) if f.kind == FnKind::Entry && f.body.is_some() => Some(f.clone()),
            _ => None,
        })
        .collect();
    let mut k = 0;
    while m.to_string().len() < 1_000_000 {
        for e in &entries {
            let mut e = e.clone();
            e.name = format!("{}__rep{k}", e.name);
            m.items.push(Item::Function(e));
        }
        k += 1;
    }
    m.to_string()
}

fn bench(c: &mut Criterion) {
    let text = big_module();
    eprintln!("module: {} bytes", text.len());
    let mut g = c.benchmark_group("ptx");
    g.sample_size(10);
    g.bench_function("parse_1mb", |b| {
        b.iter(|| parse_module(black_box(&text)).unwrap())
    });
    g.bench_function("parse_transform_all_1mb", |b| {
        b.iter(|| {
            let m = parse_module(black_box(&text)).unwrap();
            transform_module(&m, Variants::ALL).unwrap()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
