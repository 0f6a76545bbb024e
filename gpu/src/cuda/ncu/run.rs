//! Real counters with Nsight Compute (`--counters ncu`): a kernel's
//! stand-in launched once in a child process under `ncu`, on a green
//! context of the partition's SMs, and the CSV ncu prints parsed into the
//! counter columns. ncu replays one kernel at a time, so this measures
//! standalone rows only; a pair's co-located counters stay those of the
//! launch.
//!
//! The child is a program the caller names (`tally ncu-target`: the CLI
//! knows its own executable; this crate does not), given the kernel as a
//! TOML file (a serialised `KernelSpec`) and the SM count; ncu profiles only the stand-in's entry
//! (`--kernel-name`), not the fill kernels that seed its buffers.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{ncu_metrics_arg, parse_ncu_csv};
use crate::counters::{Counter, CounterSet};
use crate::error::{GpuError, Result};
use crate::kernel::KernelSpec;

/// How to run ncu on one kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct NcuRunner {
    /// The `ncu` executable.
    pub ncu: PathBuf,
    /// The child program and its leading arguments; `--kernel FILE
    /// --sm-count N` are appended.
    pub target: Vec<OsString>,
    /// Where kernel files and ncu's output for failures are written.
    pub scratch: PathBuf,
}

/// `$TALLY_NCU`, else `ncu` on `PATH`.
pub fn locate_ncu() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("TALLY_NCU").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(GpuError::Device(format!(
                "TALLY_NCU={} does not exist",
                p.display()
            )))
        };
    }
    std::env::var_os("PATH")
        .and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join("ncu"))
                .find(|p| p.is_file())
        })
        .ok_or_else(|| {
            GpuError::Device(
                "--counters ncu needs Nsight Compute: `ncu` is not on PATH (install it with the \
                 CUDA toolkit, or set TALLY_NCU to its path)"
                    .into(),
            )
        })
}

impl NcuRunner {
    /// ncu's arguments to profile `entry` launched by the child on
    /// `sm_count` SMs with the kernel read from `kernel_file`.
    pub fn args(&self, kernel_file: &Path, entry: &str, sm_count: u32) -> Vec<OsString> {
        let mut a: Vec<OsString> = [
            "--csv",
            "--page",
            "raw",
            "--print-units",
            "base",
            "--metrics",
            &ncu_metrics_arg(),
            "--kernel-name",
            &format!("regex:^{entry}$"),
            "--launch-count",
            "1",
            "--target-processes",
            "all",
            // ncu by default locks clocks to base and flushes caches before
            // each replay; the counters must describe the kernel as the
            // event-timed run saw it (boost clocks, warm caches).
            "--clock-control",
            "none",
            "--cache-control",
            "none",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        a.extend(self.target.iter().cloned());
        a.push("--kernel".into());
        a.push(kernel_file.into());
        a.push("--sm-count".into());
        a.push(sm_count.to_string().into());
        a
    }

    /// Counters of `kernel`'s stand-in `entry` on `sm_count` SMs.
    pub fn measure(&self, kernel: &KernelSpec, entry: &str, sm_count: u32) -> Result<CounterSet> {
        let io = |what: String| move |e: std::io::Error| GpuError::Device(format!("{what}: {e}"));
        std::fs::create_dir_all(&self.scratch)
            .map_err(io(format!("creating `{}`", self.scratch.display())))?;
        let file = self
            .scratch
            .join(format!("{}-{sm_count}.toml", kernel.op_id()));
        let text = toml::to_string(kernel).map_err(|e| GpuError::Device(e.to_string()))?;
        std::fs::write(&file, text).map_err(io(format!("writing `{}`", file.display())))?;
        let out = Command::new(&self.ncu)
            .args(self.args(&file, entry, sm_count))
            .output()
            .map_err(io(format!("running `{}`", self.ncu.display())))?;
        let text = String::from_utf8_lossy(&out.stdout);
        let saved = self
            .scratch
            .join(format!("{}-{sm_count}.ncu.csv", kernel.op_id()));
        // Kept beside the kernel file either way: small, and what a check of
        // ncu's view of the partition (`launch__sm_count`) reads.
        let _ = std::fs::write(&saved, text.as_bytes());
        if !out.status.success() {
            return Err(GpuError::Device(format!(
                "ncu on `{}` ({entry}, {sm_count} SMs) exited with {}: {} (its output is in `{}`)",
                kernel.name,
                out.status,
                String::from_utf8_lossy(&out.stderr).trim(),
                saved.display()
            )));
        }
        let counters = counters_of(&text, entry, &saved)?;
        let _ = std::fs::remove_file(&file);
        Ok(counters)
    }
}

/// The counters of the one launch of `entry` in ncu's CSV `text` (named
/// `source` in messages).
pub fn counters_of(text: &str, entry: &str, source: &Path) -> Result<CounterSet> {
    let report = parse_ncu_csv(text, source).map_err(|e| GpuError::Device(e.to_string()))?;
    let launch = report
        .launches
        .iter()
        .rev()
        .find(|l| l.kernel_name == entry || l.kernel_name.starts_with(&format!("{entry}(")))
        .ok_or_else(|| {
            GpuError::Device(format!(
                "`{}`: ncu profiled no launch of `{entry}` (profiling may need \
                 NVreg_RestrictProfilingToAdminUsers=0 or root)",
                source.display()
            ))
        })?;
    let missing = launch.missing();
    if !missing.is_empty() {
        return Err(GpuError::Device(format!(
            "`{}` line {}: ncu did not report {}",
            source.display(),
            launch.line,
            missing
                .iter()
                .map(Counter::name)
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let mut c = CounterSet::default();
    for &counter in Counter::ALL {
        c.set(counter, launch.counter(counter).unwrap_or_default());
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runner() -> NcuRunner {
        NcuRunner {
            ncu: "ncu".into(),
            target: vec!["tally".into(), "ncu-target".into()],
            scratch: "/tmp/x".into(),
        }
    }

    #[test]
    fn ncu_profiles_only_the_entry_in_the_child() {
        let a: Vec<String> = runner()
            .args(Path::new("k.toml"), "gemm_f16_mma", 64)
            .into_iter()
            .map(|s| s.into_string().expect("utf-8"))
            .collect();
        let at = |flag: &str| &a[a.iter().position(|x| x == flag).expect(flag) + 1];
        assert_eq!(at("--page"), "raw");
        assert_eq!(at("--print-units"), "base");
        assert_eq!(at("--kernel-name"), "regex:^gemm_f16_mma$");
        assert_eq!(at("--launch-count"), "1");
        assert_eq!(at("--clock-control"), "none");
        assert_eq!(at("--cache-control"), "none");
        assert_eq!(at("--metrics"), &ncu_metrics_arg());
        let tail = &a[a.len() - 6..];
        assert_eq!(
            tail,
            [
                "tally",
                "ncu-target",
                "--kernel",
                "k.toml",
                "--sm-count",
                "64"
            ]
        );
    }

    /// A wide raw CSV with the header, the units row and one launch.
    fn csv(kernel: &str, with_all: bool) -> String {
        let names: Vec<&str> = Counter::ALL
            .iter()
            .map(Counter::name)
            .filter(|n| with_all || *n != "dram__bytes_read.sum")
            .collect();
        let quote = |v: &[String]| {
            v.iter()
                .map(|s| format!("\"{s}\""))
                .collect::<Vec<_>>()
                .join(",")
        };
        let fixed = [
            "ID",
            "Kernel Name",
            "Grid Size",
            "Block Size",
            "Device",
            "CC",
        ];
        let header: Vec<String> = fixed
            .iter()
            .map(|s| s.to_string())
            .chain(names.iter().map(|s| s.to_string()))
            .collect();
        let units: Vec<String> = fixed
            .iter()
            .map(|_| String::new())
            .chain(names.iter().map(|n| {
                if n.ends_with("pct") {
                    "%".into()
                } else if n.starts_with("gpu__time") {
                    "nsecond".into()
                } else if n.contains("bytes") {
                    "byte".into()
                } else {
                    String::new()
                }
            }))
            .collect();
        let values: Vec<String> = ["0", kernel, "(4, 2, 1)", "(128, 1, 1)", "0", "9.0"]
            .iter()
            .map(|s| s.to_string())
            .chain(names.iter().map(|_| "12".to_string()))
            .collect();
        format!(
            "==PROF== Connected to process 1\n{}\n{}\n{}\n",
            quote(&header),
            quote(&units),
            quote(&values)
        )
    }

    #[test]
    fn the_entry_launch_becomes_every_counter() {
        let c = counters_of(
            &csv("gemm_f16_mma", true),
            "gemm_f16_mma",
            Path::new("t.csv"),
        )
        .expect("parsed");
        assert_eq!(c.get(Counter::DurationNs), 12.0);
        assert_eq!(c.get(Counter::L2HitRatePct), 12.0);
        let e = counters_of(&csv("other", true), "gemm_f16_mma", Path::new("t.csv")).unwrap_err();
        assert!(e.to_string().contains("no launch of `gemm_f16_mma`"), "{e}");
        let e = counters_of(
            &csv("gemm_f16_mma", false),
            "gemm_f16_mma",
            Path::new("t.csv"),
        )
        .unwrap_err();
        assert!(e.to_string().contains("dram__bytes_read.sum"), "{e}");
    }
}
