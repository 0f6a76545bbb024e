//! `tally kernels build`: the kernel library compiled with NVRTC for one
//! architecture, every entry transformed, every variant assembled with
//! ptxas; one row per (kernel, variant) with registers, shared memory,
//! spills and status.

use anyhow::Result;
use tally_kernels::build::{build_library, VariantStatus};
use tally_kernels::resources::{write_build, RESOURCES_FILE};
use tally_kernels::verify::{check_on_device, RunStatus, VerifyMode};

use super::ptx::parse_arch;
use super::Finding;
use crate::args::{KernelsBuildArgs, KernelsCommand, KernelsVerifyArgs};
use crate::output::Table;

pub fn run(c: &KernelsCommand) -> Result<()> {
    match c {
        KernelsCommand::Build(a) => build(a),
        KernelsCommand::Verify(a) => verify(a),
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
        let written = write_build(dir, arch, &built)?;
        eprintln!(
            "wrote {} modules and {RESOURCES_FILE} to {}",
            written.len() - 1,
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

fn verify(a: &KernelsVerifyArgs) -> Result<()> {
    let mode = if a.under_profiler {
        VerifyMode::UnderProfiler
    } else {
        VerifyMode::Full
    };
    let report = check_on_device(a.device, a.seed, mode)?;
    eprintln!(
        "{} (compute capability {})",
        report.device, report.compute_capability
    );
    let mut table = Table::new(&[
        "kernel",
        "run",
        "launches",
        "blocks",
        "blocks_at_retreat",
        "time_ms",
        "outputs",
    ]);
    for r in &report.rows {
        let outputs = match &r.status {
            RunStatus::Identical => "identical".to_string(),
            RunStatus::Different {
                differing,
                total,
                first,
            } => format!("DIFFERENT: {differing} of {total} bytes, first {first}"),
            RunStatus::Failed { error } => format!("failed: {error}"),
            RunStatus::Skipped { reason } => format!("skipped: {reason}"),
        };
        table.push(vec![
            r.entry.clone(),
            r.run.as_str().to_string(),
            r.launches.to_string(),
            r.blocks.to_string(),
            r.blocks_at_retreat
                .map(|b| b.to_string())
                .unwrap_or_default(),
            format!("{:.3}", r.time_ms),
            outputs,
        ]);
    }
    table.write(a.output.format, &mut std::io::stdout().lock())?;
    if let Some(p) = &report.preemption {
        eprintln!(
            "preemption latency of {} ({} blocks, {} workers, full run {:.3} ms): \
             median {:.1} us, max {:.1} us over {} trials (median {} blocks done at retreat)",
            p.entry,
            p.blocks,
            p.workers,
            p.full_run_ms,
            p.latency_us_median,
            p.latency_us_max,
            p.trials,
            p.blocks_done_median
        );
    }
    if let Some(problem) = &report.preemption_problem {
        eprintln!("{problem}");
    }
    if !report.all_identical() {
        let what = if report.preemption_problem.is_some() {
            "the check failed: see the rows and the preemption latency above"
        } else {
            "some variants' outputs differ from the original kernel's, or a run did not retreat"
        };
        return Err(Finding(what.into()).into());
    }
    Ok(())
}
