//! `tally models [NAME]`: the zoo, or one model's operators and kernels.

use anyhow::Result;
use tally_kernels::stand_in;
use tally_profiler::model::ParamsOverride;
use tally_profiler::zoo;

use crate::args::ModelsArgs;
use crate::commands::params_override;
use crate::output::{si, Table};

pub fn run(args: &ModelsArgs) -> Result<()> {
    let mut out = std::io::stdout().lock();
    let params = params_override(&args.params);
    let Some(name) = &args.name else {
        let mut table = Table::new(&[
            "model",
            "phase",
            "batch",
            "seq",
            "kv",
            "launches",
            "unique_kernels",
            "gflops",
        ]);
        for name in zoo::NAMES {
            let model = zoo::build(name, &ParamsOverride::default())?;
            let launches = model.launches();
            let flops: f64 = launches.iter().map(|k| k.work.total_flops()).sum();
            let opt = |v: Option<u32>| v.map(|v| v.to_string()).unwrap_or_else(|| "-".into());
            table.push(vec![
                name.to_string(),
                model.phase.as_str().into(),
                model.params.batch.to_string(),
                opt(model.params.seq_len),
                opt(model.params.kv_len),
                launches.len().to_string(),
                model.unique_kernels().len().to_string(),
                format!("{:.1}", flops / 1e9),
            ]);
        }
        table.write(args.output.format, &mut out)?;
        return Ok(());
    };

    let model = zoo::resolve_model(name, &params)?;
    if args.stand_ins {
        return stand_ins(&model, args);
    }
    let mut table = Table::new(&[
        "operator",
        "repeat",
        "kernel",
        "kind",
        "grid",
        "block",
        "regs",
        "smem",
        "flops",
        "dram_bytes",
        "l2_bytes",
        "op_id",
    ]);
    for op in &model.operators {
        for k in op.lower() {
            table.push(vec![
                op.name.clone(),
                op.repeat.to_string(),
                k.name.clone(),
                k.kind.as_str().into(),
                k.grid.to_string(),
                k.block.to_string(),
                k.registers_per_thread.to_string(),
                k.shared_mem_per_block().to_string(),
                si(k.work.total_flops()),
                si(k.memory.compulsory_bytes()),
                si(k.memory.l2_bytes),
                k.op_id(),
            ]);
        }
    }
    table.write(args.output.format, &mut out)?;
    Ok(())
}

/// Each unique kernel beside its stand-in: the entry, its grid and how much
/// of the kernel's FLOPs (products only; "-" for streams, whose stand-in
/// is sized by bytes) and DRAM bytes it does.
fn stand_ins(model: &tally_profiler::Model, args: &ModelsArgs) -> Result<()> {
    let mut table = Table::new(&[
        "kernel",
        "op_id",
        "stand_in",
        "grid",
        "flops_ratio",
        "bytes_ratio",
    ]);
    for (k, _) in model.unique_kernels() {
        let s = stand_in(&k)?;
        let flops = k.work.total_flops();
        let ratio = |a: f64, b: f64| {
            if b > 0.0 {
                format!("{:.3}", a / b)
            } else {
                "-".into()
            }
        };
        let [x, y, z] = s.launch.grid;
        table.push(vec![
            k.name.clone(),
            k.op_id(),
            s.launch.entry.clone(),
            format!("{x}x{y}x{z}"),
            ratio(s.flops, if s.flops > 0.0 { flops } else { 0.0 }),
            ratio(s.bytes, k.memory.compulsory_bytes()),
        ]);
    }
    table.write(args.output.format, &mut std::io::stdout().lock())?;
    Ok(())
}
