//! ptxas: assemble PTX for a target architecture and read what `-v` says
//! each function uses (registers, barriers, shared memory, stack, spills).
//! These are the real resource figures of a kernel, which decide its
//! occupancy; the zoo's `KernelSpec`s can take them instead of estimates.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde::{Deserialize, Serialize};

use super::nvrtc::Arch;
use super::tools::{locate_ptxas, ToolError};

/// What ptxas reports for one function.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryResources {
    pub name: String,
    /// An `.entry` (kernel) rather than a `.func`.
    pub is_entry: bool,
    pub registers: u32,
    pub barriers: u32,
    /// Static shared memory, bytes.
    pub shared_bytes: u32,
    /// Constant bank 0 (kernel parameters), bytes; 0 when not reported.
    pub const_bytes: u32,
    pub stack_frame_bytes: u32,
    pub spill_store_bytes: u32,
    pub spill_load_bytes: u32,
}

/// Assemble `ptx` (named `name` in messages) for `arch` with `ptxas -v`;
/// the resources of every function, in name order.
pub fn assemble(ptx: &str, name: &str, arch: Arch) -> Result<Vec<EntryResources>, ToolError> {
    assemble_cubin(ptx, name, arch).map(|(resources, _)| resources)
}

/// Like [`assemble`], and also the cubin ptxas wrote (what the CUDA
/// backend loads: no JIT, so a driver older than the PTX ISA still runs it).
pub fn assemble_cubin(
    ptx: &str,
    name: &str,
    arch: Arch,
) -> Result<(Vec<EntryResources>, Vec<u8>), ToolError> {
    let ptxas = locate_ptxas()?;
    let dir = std::env::temp_dir().join(format!("tally-ptxas-{}-{}", std::process::id(), unique()));
    std::fs::create_dir_all(&dir).map_err(|source| ToolError::Io {
        path: dir.clone(),
        source,
    })?;
    let input = dir.join("in.ptx");
    let result = (|| {
        std::fs::write(&input, ptx).map_err(|source| ToolError::Io {
            path: input.clone(),
            source,
        })?;
        let cubin = dir.join("out.cubin");
        let resources = run(&ptxas, &input, &cubin, name, arch)?;
        let bytes = std::fs::read(&cubin).map_err(|source| ToolError::Io {
            path: cubin.clone(),
            source,
        })?;
        Ok((resources, bytes))
    })();
    // Scratch files only; failing to remove them is not worth an error.
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

fn run(
    ptxas: &Path,
    input: &Path,
    output: &Path,
    name: &str,
    arch: Arch,
) -> Result<Vec<EntryResources>, ToolError> {
    let out = Command::new(ptxas)
        .arg(format!("-arch={}", arch.sm()))
        .arg("-v")
        .arg(input)
        .arg("-o")
        .arg(output)
        .output()
        .map_err(|source| ToolError::Spawn {
            tool: "ptxas",
            path: ptxas.to_path_buf(),
            source,
        })?;
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        return Err(ToolError::Assemble {
            name: name.to_string(),
            arch: arch.sm().to_string(),
            log,
        });
    }
    parse_ptxas_info(&log)
}

/// Parse the `ptxas info` lines of `ptxas -v`. Lines it does not know
/// (compile times, gmem totals, warnings) are skipped; a known line with a
/// malformed figure is an error naming the line.
pub fn parse_ptxas_info(log: &str) -> Result<Vec<EntryResources>, ToolError> {
    let mut by_name: BTreeMap<String, EntryResources> = BTreeMap::new();
    // ptxas prints "Function properties for F" and then the stack/spill
    // line; "Compiling entry function 'F'" is followed by the "Used" line.
    let mut properties_of: Option<String> = None;
    let mut compiling: Option<String> = None;
    for (i, raw) in log.lines().enumerate() {
        let line = raw.trim();
        let bad = || ToolError::PtxasOutput {
            line: i + 1,
            text: raw.to_string(),
        };
        let info = line
            .strip_prefix("ptxas info")
            .map(|rest| rest.trim_start().trim_start_matches(':').trim());
        match info {
            Some(rest) => {
                if let Some(f) = rest.strip_prefix("Compiling entry function") {
                    let f = quoted(f).ok_or_else(bad)?;
                    by_name.entry(f.clone()).or_default().is_entry = true;
                    compiling = Some(f);
                    properties_of = None;
                } else if let Some(f) = rest.strip_prefix("Function properties for") {
                    let f = f.trim().to_string();
                    if f.is_empty() {
                        return Err(bad());
                    }
                    by_name.entry(f.clone()).or_default();
                    properties_of = Some(f);
                } else if rest.starts_with("Used") {
                    let f = compiling.take().ok_or_else(bad)?;
                    let e = by_name.entry(f).or_default();
                    for part in rest.split(',') {
                        let part = part.trim();
                        let figure = || leading_number(part).ok_or_else(bad);
                        if part.contains("registers") {
                            e.registers = figure()?;
                        } else if part.contains("barriers") {
                            e.barriers = figure()?;
                        } else if part.ends_with("bytes smem") {
                            e.shared_bytes = figure()?;
                        } else if part.contains("bytes cmem[0]") {
                            e.const_bytes = figure()?;
                        }
                    }
                }
            }
            None => {
                // The stack/spill line belongs to the last "Function properties".
                if line.contains("bytes stack frame") {
                    let f = properties_of.take().ok_or_else(bad)?;
                    let e = by_name.entry(f).or_default();
                    for part in line.split(',') {
                        let part = part.trim();
                        let figure = || leading_number(part).ok_or_else(bad);
                        if part.ends_with("stack frame") {
                            e.stack_frame_bytes = figure()?;
                        } else if part.ends_with("spill stores") {
                            e.spill_store_bytes = figure()?;
                        } else if part.ends_with("spill loads") {
                            e.spill_load_bytes = figure()?;
                        }
                    }
                }
            }
        }
    }
    Ok(by_name
        .into_iter()
        .map(|(name, mut e)| {
            e.name = name;
            e
        })
        .collect())
}

/// The text between the first pair of single quotes.
fn quoted(s: &str) -> Option<String> {
    let start = s.find('\'')? + 1;
    let len = s[start..].find('\'')?;
    Some(s[start..start + len].to_string())
}

/// The number a fragment such as "used 40 registers" or "1024 bytes smem" holds.
fn leading_number(part: &str) -> Option<u32> {
    part.split_whitespace().find_map(|w| w.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Verbatim `ptxas -v` output of ptxas 13.5 for a module with two
    /// entries and a non-inlined device function.
    const LOG: &str = "ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'g' for 'sm_90'
ptxas info    : Function properties for g
    160 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 0 barriers, 160 bytes cumulative stack size
ptxas info    : Compile time = 15.739 ms
ptxas info    : Function properties for _Z1ff
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function 'scale' for 'sm_90'
ptxas info    : Function properties for scale
    0 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 10 registers, used 1 barriers, 1024 bytes smem, 368 bytes cmem[0]
ptxas info    : Compile time = 7.357 ms
";

    #[test]
    fn reads_every_function() {
        let r = parse_ptxas_info(LOG).unwrap();
        let names: Vec<&str> = r.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["_Z1ff", "g", "scale"]);
        let scale = &r[2];
        assert!(scale.is_entry);
        assert_eq!(
            (
                scale.registers,
                scale.barriers,
                scale.shared_bytes,
                scale.const_bytes
            ),
            (10, 1, 1024, 368)
        );
        assert_eq!((scale.spill_store_bytes, scale.spill_load_bytes), (8, 12));
        let g = &r[1];
        assert_eq!(
            (g.registers, g.stack_frame_bytes, g.shared_bytes),
            (32, 160, 0)
        );
        assert!(!r[0].is_entry);
    }

    #[test]
    fn malformed_figure_names_the_line() {
        let log = "ptxas info    : Compiling entry function 'k' for 'sm_90'\nptxas info    : Used many registers\n";
        match parse_ptxas_info(log) {
            Err(ToolError::PtxasOutput { line, .. }) => assert_eq!(line, 2),
            other => panic!("{other:?}"),
        }
        let orphan = "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n";
        assert!(matches!(
            parse_ptxas_info(orphan),
            Err(ToolError::PtxasOutput { line: 1, .. })
        ));
    }
}
