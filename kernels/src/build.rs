//! Building the kernel library for one architecture: every library file is
//! compiled with NVRTC, every entry transformed into its sliced, PTB and
//! preemptive-PTB variants, and the whole module assembled with ptxas, whose
//! `-v` report gives each entry's and variant's real registers, shared
//! memory and spills. `tally kernels build` prints the result as a table.

use crate::library::{self, LibraryKernel};
use serde::Serialize;
use tally_gpu::cuda::{assemble_cubin, compile_to_ptx, Arch, EntryResources, ToolError};
use tally_gpu::{GpuError, KernelKind};

use crate::ptx::transform::{preempt, ptb, sliced};
use crate::ptx::{parse_module, transform_module_skipping, PtxError, Variants};

/// One way a kernel can be launched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum KernelVariant {
    Original,
    Sliced,
    Ptb,
    PreemptivePtb,
}

impl KernelVariant {
    pub const ALL: [KernelVariant; 4] = [
        KernelVariant::Original,
        KernelVariant::Sliced,
        KernelVariant::Ptb,
        KernelVariant::PreemptivePtb,
    ];

    pub fn as_str(&self) -> &'static str {
        match self {
            KernelVariant::Original => "original",
            KernelVariant::Sliced => "sliced",
            KernelVariant::Ptb => "ptb",
            KernelVariant::PreemptivePtb => "preemptive-ptb",
        }
    }

    /// The entry name of this variant of `entry` in a transformed module.
    pub fn entry_name(&self, entry: &str) -> String {
        match self {
            KernelVariant::Original => entry.to_string(),
            KernelVariant::Sliced => format!("{entry}{}", sliced::SUFFIX),
            KernelVariant::Ptb => format!("{entry}{}", ptb::SUFFIX),
            KernelVariant::PreemptivePtb => format!("{entry}{}", preempt::SUFFIX),
        }
    }
}

/// The outcome for one (entry, variant).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum VariantStatus {
    /// Assembled; ptxas's figures.
    Ok(EntryResources),
    /// The transformer refused the entry for this variant.
    Refused { reason: String },
    /// The kernel needs a newer architecture.
    Skipped { reason: String },
}

/// One row of the build table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BuildRow {
    pub entry: String,
    pub file: String,
    pub kind: KernelKind,
    pub variant: KernelVariant,
    #[serde(flatten)]
    pub status: VariantStatus,
}

/// The transformed, assembled PTX of one library file.
#[derive(Debug, Clone, PartialEq)]
pub struct BuiltModule {
    pub file: String,
    pub ptx: String,
}

/// The library built for one architecture.
#[derive(Debug, Clone, PartialEq)]
pub struct LibraryBuild {
    pub arch: Arch,
    pub rows: Vec<BuildRow>,
    pub modules: Vec<BuiltModule>,
}

impl LibraryBuild {
    /// Whether every kernel the architecture supports built in every variant.
    pub fn all_ok(&self) -> bool {
        self.rows
            .iter()
            .all(|r| !matches!(r.status, VariantStatus::Refused { .. }))
    }
}

/// Why a build could not be carried out at all.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error(transparent)]
    Tool(#[from] ToolError),
    #[error(transparent)]
    Library(#[from] GpuError),
    #[error("NVRTC output for `{file}` does not parse: {source}")]
    Parse { file: String, source: PtxError },
    #[error("ptxas did not report entry `{entry}` of `{file}`")]
    Missing { file: String, entry: String },
}

/// Compile, transform and assemble every library file for `arch`.
pub fn build_library(arch: Arch) -> Result<LibraryBuild, BuildError> {
    let kernels = library::kernels()?;
    let mut rows = Vec::new();
    let mut modules = Vec::new();
    for (file, source) in library::SOURCES {
        let in_file: Vec<&LibraryKernel> = kernels.iter().filter(|k| k.file == file).collect();
        let (supported, too_new): (Vec<&LibraryKernel>, Vec<&LibraryKernel>) = in_file
            .into_iter()
            .partition(|k| k.min_arch <= arch.number());
        for k in too_new {
            for variant in KernelVariant::ALL {
                rows.push(row(
                    k,
                    variant,
                    VariantStatus::Skipped {
                        reason: format!("needs sm_{}", k.min_arch),
                    },
                ));
            }
        }
        if supported.is_empty() {
            continue;
        }
        let FileBuild {
            ptx,
            resources,
            refusals,
            ..
        } = build_file(file, source, arch)?;
        for k in supported {
            for variant in KernelVariant::ALL {
                let name = variant.entry_name(&k.entry);
                let status = match resources.iter().find(|r| r.name == name) {
                    Some(r) => VariantStatus::Ok(r.clone()),
                    None => match refusal_of(&refusals, &k.entry) {
                        Some(reason) if variant != KernelVariant::Original => {
                            VariantStatus::Refused { reason }
                        }
                        _ => {
                            return Err(BuildError::Missing {
                                file: file.to_string(),
                                entry: name,
                            })
                        }
                    },
                };
                rows.push(row(k, variant, status));
            }
        }
        modules.push(BuiltModule {
            file: file.to_string(),
            ptx,
        });
    }
    Ok(LibraryBuild {
        arch,
        rows,
        modules,
    })
}

/// One library file built: the transformed PTX, ptxas's figures for every
/// function, the cubin, and the entries the transformer refused.
#[derive(Debug, Clone, PartialEq)]
pub struct FileBuild {
    pub ptx: String,
    pub resources: Vec<EntryResources>,
    pub cubin: Vec<u8>,
    pub refusals: Vec<PtxError>,
}

/// NVRTC, every variant of every entry (refused ones skipped), ptxas.
pub fn build_file(file: &str, source: &str, arch: Arch) -> Result<FileBuild, BuildError> {
    let ptx = compile_to_ptx(source, file, arch)?;
    let module = parse_module(&ptx).map_err(|source| BuildError::Parse {
        file: file.to_string(),
        source,
    })?;
    let (transformed, refusals) = transform_module_skipping(&module, Variants::ALL);
    let ptx = transformed.to_string();
    let (resources, cubin) = assemble_cubin(&ptx, file, arch)?;
    Ok(FileBuild {
        ptx,
        resources,
        cubin,
        refusals,
    })
}

fn refusal_of(refusals: &[PtxError], entry: &str) -> Option<String> {
    refusals
        .iter()
        .find(|e| match e {
            PtxError::Unsupported { entry: en, .. } | PtxError::Transform { entry: en, .. } => {
                en == entry
            }
            PtxError::Syntax { .. } => false,
        })
        .map(|e| e.to_string())
}

fn row(k: &LibraryKernel, variant: KernelVariant, status: VariantStatus) -> BuildRow {
    BuildRow {
        entry: k.entry.clone(),
        file: k.file.clone(),
        kind: k.kind,
        variant,
        status,
    }
}
