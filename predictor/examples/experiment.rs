use std::time::Instant;
use tally_predictor::eval::{ape_stats, random_split};
use tally_predictor::*;
fn main() {
    let dirs: Vec<String> = std::env::args().skip(1).collect();
    let t = Instant::now();
    let ds: Vec<_> = dirs
        .iter()
        .map(|d| tally_datasets::Dataset::read(d).unwrap())
        .collect();
    eprintln!("read {:.1}s", t.elapsed().as_secs_f64());
    let t = Instant::now();
    let s = Samples::from_datasets(&ds).unwrap();
    eprintln!(
        "samples {} in {:.1}s",
        s.rows.len(),
        t.elapsed().as_secs_f64()
    );
    let (tr, te) = random_split(&s, 0.2, 0);
    let (x, y) = s.matrix(&tr);
    let budgets: Vec<usize> = std::env::var("BUDGETS")
        .unwrap_or("300".into())
        .split(',')
        .map(|v| v.parse().unwrap())
        .collect();
    let ape = |p: &dyn Fn(&samples::Sample) -> f64| {
        ape_stats(
            te.iter()
                .map(|&i| {
                    let r = &s.rows[i];
                    100.0 * (r.solo_us * p(r).max(0.0).exp() - r.co_us).abs() / r.co_us
                })
                .collect(),
        )
    };
    if std::env::var("SKIP_LINEAR").is_err() {
        let t = Instant::now();
        let lin = linear::LinearModel::fit(&x, &y).unwrap();
        eprintln!("linear fit {:.1}s", t.elapsed().as_secs_f64());
        eprintln!("linear {:?}", ape(&|r| lin.predict(&r.features)));
    }
    for b in budgets {
        let t = Instant::now();
        let f = gbm::fit(&x, &y, b, 0).unwrap();
        for (g, name) in s.groups.iter().enumerate() {
            let idx: Vec<usize> = te
                .iter()
                .copied()
                .filter(|&i| s.rows[i].group == g)
                .collect();
            let st = ape_stats(
                idx.iter()
                    .map(|&i| {
                        let r = &s.rows[i];
                        100.0 * (r.solo_us * f.predict(&r.features).max(0.0).exp() - r.co_us).abs()
                            / r.co_us
                    })
                    .collect(),
            );
            eprintln!("   {name} n={} {:?}", idx.len(), st);
        }
        eprintln!(
            "gbm b={b} trees={} nodes={} fit {:.1}s {:?}",
            f.roots.len(),
            f.nodes.len(),
            t.elapsed().as_secs_f64(),
            ape(&|r| f.predict(&r.features))
        );
    }
}
