//! `tally kernels build`: the kernel library compiled with NVRTC for one
//! architecture, every entry transformed, every variant assembled with
//! ptxas; one row per (kernel, variant) with registers, shared memory,
//! spills and status.

use std::io::Write;

use anyhow::{Context, Result};
use tally_sched::kernel_build::{build_library, VariantStatus};

use super::ptx::parse_arch;
use super::Finding;
use crate::args::{KernelsBuildArgs, KernelsCommand};
use crate::output::Table;

pub fn run(c: &KernelsCommand) -> Result<()> {
    match c {
        KernelsCommand::Build(a) => build(a),
    }
}

fn build(a: &KernelsBuildArgs) -> Result<()> {
    let arch = parse_arch(&a.arch)?;
    let built = build_library(arch)?;
    let mut table = Table::new(&[
        "kernel",
        "kind",
        "variant",
        "registers",
        "shared_bytes",
        "spill_bytes",
        "status",
    ]);
    for r in &built.rows {
        let (regs, smem, spill, status) = match &r.status {
            VariantStatus::Ok(e) => (
                e.registers.to_string(),
                e.shared_bytes.to_string(),
                (e.spill_store_bytes + e.spill_load_bytes).to_string(),
                "ok".to_string(),
            ),
            VariantStatus::Refused { reason } => (
                String::new(),
                String::new(),
                String::new(),
                format!("refused: {reason}"),
            ),
            VariantStatus::Skipped { reason } => (
                String::new(),
                String::new(),
                String::new(),
                format!("skipped: {reason}"),
            ),
        };
        table.push(vec![
            r.entry.clone(),
            r.kind.as_str().to_string(),
            r.variant.as_str().to_string(),
            regs,
            smem,
            spill,
            status,
        ]);
    }
    table.write(a.output.format, &mut std::io::stdout().lock())?;
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir).with_context(|| format!("creating `{}`", dir.display()))?;
        for m in &built.modules {
            let stem = m.file.trim_end_matches(".cu");
            let path = dir.join(format!("{stem}.{}.ptx", arch.sm()));
            tally_datasets::write_atomic(&path, |w| {
                w.write_all(m.ptx.as_bytes())
                    .map_err(|e| tally_datasets::DatasetError::io(&path, e))
            })?;
        }
        let path = dir.join("resources.json");
        let json = serde_json::to_string_pretty(&built.rows)?;
        tally_datasets::write_atomic(&path, |w| {
            w.write_all(json.as_bytes())
                .map_err(|e| tally_datasets::DatasetError::io(&path, e))
        })?;
        eprintln!(
            "wrote {} modules and resources.json to {}",
            built.modules.len(),
            dir.display()
        );
    }
    let ok = built
        .rows
        .iter()
        .filter(|r| matches!(r.status, VariantStatus::Ok(_)))
        .count();
    eprintln!(
        "{ok} of {} kernel variants assembled for {}",
        built.rows.len(),
        arch.sm()
    );
    if !built.all_ok() {
        return Err(Finding("some kernel variants were refused by the transformer".into()).into());
    }
    Ok(())
}
