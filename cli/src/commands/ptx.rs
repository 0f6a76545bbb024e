//! `tally ptx transform` and `tally ptx check`: the kernel transformer and
//! ptxas on a user's own PTX module.

use std::io::Write;
use std::path::Path;

use anyhow::{bail, Context, Result};
use tally_gpu::cuda::{assemble, Arch};
use tally_kernels::ptx::ast::FnKind;
use tally_kernels::ptx::{parse_module, transform_module, transform_module_skipping, Variants};

use super::Finding;
use crate::args::{PtxCheckArgs, PtxCommand, PtxTransformArgs};
use crate::output::Table;

pub fn run(c: &PtxCommand) -> Result<()> {
    match c {
        PtxCommand::Transform(a) => transform(a),
        PtxCommand::Check(a) => check(a),
    }
}

/// The `--variant` value as the transformer's set.
fn parse_variants(s: &str) -> Result<Variants> {
    Ok(match s {
        "sliced" => Variants::SLICED,
        "ptb" => Variants::PTB,
        "preemptive-ptb" => Variants::PREEMPT,
        "all" => Variants::ALL,
        other => bail!("unknown --variant `{other}`, expected sliced, ptb, preemptive-ptb or all"),
    })
}

pub fn parse_arch(s: &str) -> Result<Arch> {
    Arch::parse(s).with_context(|| {
        format!(
            "unknown --arch `{s}`, expected one of {}",
            Arch::ALL.map(|a| a.sm()).join(", ")
        )
    })
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("reading `{}`", path.display()))
}

fn transform(a: &PtxTransformArgs) -> Result<()> {
    let variants = parse_variants(&a.variant)?;
    let text = read(&a.input)?;
    let module = parse_module(&text).with_context(|| format!("`{}`", a.input.display()))?;
    let out = if a.skip_unsupported {
        let (out, refused) = transform_module_skipping(&module, variants);
        for e in &refused {
            eprintln!("skipped: {}: {e}", a.input.display());
        }
        out
    } else {
        transform_module(&module, variants).with_context(|| {
            format!(
                "`{}` (use --skip-unsupported to transform the other entries)",
                a.input.display()
            )
        })?
    };
    let printed = out.to_string();
    tally_datasets::write_atomic(&a.out, |w| {
        w.write_all(printed.as_bytes())
            .map_err(|e| tally_datasets::DatasetError::io(&a.out, e))
    })?;
    let entries = module
        .functions()
        .filter(|f| f.kind == FnKind::Entry)
        .count();
    let added = out.functions().filter(|f| f.kind == FnKind::Entry).count() - entries;
    eprintln!(
        "{} entries, {added} variants added; wrote {}",
        entries,
        a.out.display()
    );
    Ok(())
}

fn check(a: &PtxCheckArgs) -> Result<()> {
    let arch = parse_arch(&a.arch)?;
    let text = read(&a.input)?;
    let name = a.input.display().to_string();
    let resources = match assemble(&text, &name, arch) {
        Ok(r) => r,
        Err(e @ tally_gpu::cuda::ToolError::Assemble { .. }) => {
            return Err(Finding(e.to_string()).into())
        }
        Err(e) => return Err(e.into()),
    };
    let mut table = Table::new(&[
        "function",
        "kind",
        "registers",
        "shared_bytes",
        "stack_bytes",
        "spill_store_bytes",
        "spill_load_bytes",
        "barriers",
    ]);
    for r in &resources {
        table.push(vec![
            r.name.clone(),
            if r.is_entry { "entry" } else { "func" }.to_string(),
            r.registers.to_string(),
            r.shared_bytes.to_string(),
            r.stack_frame_bytes.to_string(),
            r.spill_store_bytes.to_string(),
            r.spill_load_bytes.to_string(),
            r.barriers.to_string(),
        ]);
    }
    table.write(a.output.format, &mut std::io::stdout().lock())?;
    Ok(())
}
