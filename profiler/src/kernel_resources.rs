//! The kernel library's real resource usage applied to the zoo's kernels.
//! `tally kernels build --out DIR` writes `DIR/resources.json`: ptxas's
//! registers and shared memory for every library entry. On the CUDA
//! backend an operator runs as the library entry of its kind, so its
//! `KernelSpec` takes that entry's block size, registers per thread and
//! static shared memory, with the grid resized to keep the same number of
//! threads; the work and bytes stay those of the operator. The simulator
//! then sees the occupancy the real kernel has (`tally profile
//! --kernel-resources DIR/resources.json`).

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;
use tally_gpu::{library, Dim3, KernelKind, KernelSpec};

use crate::campaign::CampaignError;

/// The library entry an operator of each kind runs as.
pub fn library_entry(kind: KernelKind) -> &'static str {
    match kind {
        KernelKind::Gemm => "gemm_f16_mma",
        KernelKind::Gemv => "gemv_f16",
        KernelKind::Conv => "conv2d_implicit_gemm_f16",
        KernelKind::Elementwise => "add_f16",
        KernelKind::Reduction => "row_sum_f32",
        KernelKind::Softmax => "softmax_rows_f16",
        KernelKind::LayerNorm => "layer_norm_f16",
        KernelKind::Attention => "flash_attn_fwd_f16",
        KernelKind::Embedding => "embedding_gather_f16",
        KernelKind::Optimizer => "adam_step_f32",
        KernelKind::Copy => "copy_f32_vec",
    }
}

/// One row of resources.json (only what is used here).
#[derive(Debug, Deserialize)]
struct Row {
    entry: String,
    variant: String,
    status: String,
    registers: Option<u32>,
    shared_bytes: Option<u32>,
}

/// What a library entry launches with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Launch {
    block: Dim3,
    registers: u32,
    shared_bytes: u32,
}

/// Resources by library entry, for the original (untransformed) kernels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelResources {
    by_entry: HashMap<String, Launch>,
}

impl KernelResources {
    /// Read `tally kernels build`'s resources.json.
    pub fn read(path: &Path) -> Result<KernelResources, CampaignError> {
        let bad = |what: String| CampaignError::Config(format!("`{}`: {what}", path.display()));
        let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
        let rows: Vec<Row> = serde_json::from_str(&text).map_err(|e| {
            bad(format!(
                "{e} (expected the resources.json of `tally kernels build --out DIR`)"
            ))
        })?;
        let kernels = library::kernels()?;
        let mut by_entry = HashMap::new();
        for (i, r) in rows.iter().enumerate() {
            if r.variant != "original" || r.status != "ok" {
                continue;
            }
            let k = kernels.iter().find(|k| k.entry == r.entry).ok_or_else(|| {
                bad(format!(
                    "row {}: unknown library entry `{}`",
                    i + 1,
                    r.entry
                ))
            })?;
            let (Some(registers), Some(shared_bytes)) = (r.registers, r.shared_bytes) else {
                return Err(bad(format!(
                    "row {}: entry `{}` has no registers / shared_bytes",
                    i + 1,
                    r.entry
                )));
            };
            let [x, y, z] = k.block;
            by_entry.insert(
                r.entry.clone(),
                Launch {
                    block: Dim3 { x, y, z },
                    registers,
                    shared_bytes,
                },
            );
        }
        Ok(KernelResources { by_entry })
    }

    /// Give `k` the launch of its library entry; false (unchanged) if the
    /// file holds no resources for that entry.
    pub fn apply(&self, k: &mut KernelSpec) -> bool {
        let Some(l) = self.by_entry.get(library_entry(k.kind)) else {
            return false;
        };
        let threads = k.grid.count() * k.block.count();
        let per_block = l.block.count().max(1);
        k.block = l.block;
        k.grid = Dim3 {
            x: u32::try_from(threads.div_ceil(per_block).max(1)).unwrap_or(u32::MAX),
            y: 1,
            z: 1,
        };
        k.registers_per_thread = l.registers;
        k.shared_mem_static = l.shared_bytes;
        k.shared_mem_dynamic = 0;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_maps_to_a_library_entry() {
        let kernels = library::kernels().unwrap();
        for kind in KernelKind::ALL {
            let entry = library_entry(kind);
            let k = kernels.iter().find(|k| k.entry == entry).expect(entry);
            assert_eq!(k.kind, kind, "{entry}");
        }
    }

    #[test]
    fn applies_the_library_launch_and_keeps_the_threads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("resources.json");
        std::fs::write(
            &path,
            r#"[{"entry":"gemm_f16_mma","file":"gemm.cu","kind":"gemm","variant":"original","status":"ok","registers":83,"shared_bytes":10240},
                {"entry":"gemm_f16_mma","file":"gemm.cu","kind":"gemm","variant":"ptb","status":"ok","registers":92,"shared_bytes":10244}]"#,
        )
        .unwrap();
        let r = KernelResources::read(&path).unwrap();
        let model = crate::zoo::resolve_model("bert-base", &Default::default()).unwrap();
        let (mut k, _) = model
            .unique_kernels()
            .into_iter()
            .find(|(k, _)| k.kind == KernelKind::Gemm)
            .unwrap();
        let threads = k.grid.count() * k.block.count();
        assert!(r.apply(&mut k));
        assert_eq!(
            (k.block.x, k.registers_per_thread, k.shared_mem_static),
            (128, 83, 10240)
        );
        assert!(k.grid.count() * 128 >= threads && (k.grid.count() - 1) * 128 < threads);
        // No row for layer norm: left alone.
        let (mut s, _) = model
            .unique_kernels()
            .into_iter()
            .find(|(k, _)| k.kind == KernelKind::LayerNorm)
            .unwrap();
        let before = s.clone();
        assert!(!r.apply(&mut s));
        assert_eq!(s, before);
        std::fs::write(&path, "[{\"entry\":\"nope\",\"variant\":\"original\",\"status\":\"ok\",\"registers\":1,\"shared_bytes\":0}]").unwrap();
        let e = KernelResources::read(&path).unwrap_err().to_string();
        assert!(
            e.contains("resources.json") && e.contains("row 1") && e.contains("nope"),
            "{e}"
        );
    }
}
