//! `ncu` profiles as a tally dataset: the launches of an Nsight Compute CSV
//! grouped into kernels (keyed by name, grid and block) and partition sizes
//! (`launch__sm_count`: launches on fewer SMs land on their own rows;
//! whether ncu reports a green context's SMs there is not verified on a
//! GPU yet), each group's counters reduced to their median over
//! repeated launches, and written as the standalone tables `tally profile`
//! writes. The result has no pair rows: ncu replays one kernel at a time.
//!
//! The `ops` table needs a full `KernelSpec` per kernel. What ncu measures
//! fills it (launch configuration, registers, shared memory, FP32/FP16
//! instruction counts, L2 and DRAM bytes, L1 bytes from the L1 hit rate);
//! what it does not is recorded in `run.json` (`params.not_measured`):
//! tensor FLOPs and other instructions are 0, the L2 working set is taken as
//! the DRAM traffic and the bytes in flight per warp as one 32-byte sector.
//! The predictor reads only the counters, never those fields.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use tally_datasets::{Dataset, OpRecord, StandaloneRow, StandaloneTable};
use tally_gpu::cuda::{NcuLaunch, NcuLayout, NcuReport};
use tally_gpu::{
    named_launch_id, Counter, Dim3, GpuSpec, KernelKind, KernelSpec, MemoryUse, Partition, Work,
};

use crate::campaign::RunMeta;

/// Fields of the `ops` table that ncu does not measure (see the module docs).
pub const NOT_MEASURED: [&str; 4] = [
    "tensor_flops",
    "other_warp_insts",
    "l2_working_set",
    "inflight_bytes_per_warp",
];

/// Why an ncu CSV could not become a dataset; every variant names the file
/// and the line of the launch at fault.
#[derive(Debug, thiserror::Error)]
pub enum NcuImportError {
    #[error(
        "`{path}` line {line}: launch {id} (`{kernel}`) lacks {missing}; profile with \
         `ncu --csv --page raw --print-units base --metrics` and every metric tally reads \
         (README, CUDA backend)"
    )]
    MissingCounters {
        path: PathBuf,
        line: usize,
        id: String,
        kernel: String,
        missing: String,
    },
    #[error("`{path}` line {line}, field `{field}`: {problem}")]
    Value {
        path: PathBuf,
        line: usize,
        field: &'static str,
        problem: String,
    },
}

/// Kernel identity: name and launch configuration.
type Key = (String, Dim3, Dim3);

/// Turn `report` (read from `source`) into a standalone dataset for `gpu`.
pub fn import_ncu(
    report: &NcuReport,
    source: &Path,
    gpu: &GpuSpec,
    model: &str,
    meta: RunMeta,
) -> Result<Dataset, NcuImportError> {
    let value_err = |l: &NcuLaunch, field: &'static str, problem: String| NcuImportError::Value {
        path: source.to_path_buf(),
        line: l.line,
        field,
        problem,
    };
    // Kernels in first-seen order, each with its launches by SM count.
    let mut order: Vec<Key> = Vec::new();
    let mut groups: HashMap<Key, BTreeMap<u32, Vec<&NcuLaunch>>> = HashMap::new();
    for l in &report.launches {
        let missing = l.missing();
        if !missing.is_empty() {
            return Err(NcuImportError::MissingCounters {
                path: source.to_path_buf(),
                line: l.line,
                id: l.id.clone(),
                kernel: l.kernel_name.clone(),
                missing: missing
                    .iter()
                    .map(|c| c.name())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        if let Some(cc) = &l.compute_capability {
            if !gpu.compute_capability.is_empty() && *cc != gpu.compute_capability {
                return Err(value_err(
                    l,
                    "CC",
                    format!(
                        "profiled on compute capability {cc}, but {} is {}; pass the GPU it \
                         ran on with --gpu",
                        gpu.name, gpu.compute_capability
                    ),
                ));
            }
        }
        let sms = l.counter(Counter::SmCount).unwrap_or_default();
        if !(sms >= 1.0 && sms.fract() == 0.0 && sms <= f64::from(gpu.sm_count)) {
            return Err(value_err(
                l,
                "launch__sm_count",
                format!("{sms} SMs is not a partition of {}", gpu.name),
            ));
        }
        let sms = sms as u32;
        Partition::first(sms)
            .check(gpu)
            .map_err(|e| value_err(l, "launch__sm_count", e.to_string()))?;
        let duration = l.duration_us().unwrap_or_default();
        if duration <= 0.0 {
            return Err(value_err(
                l,
                "gpu__time_duration.sum",
                format!("a duration must be > 0, got {duration}"),
            ));
        }
        let key = (l.kernel_name.clone(), l.grid, l.block);
        if !groups.contains_key(&key) {
            order.push(key.clone());
        }
        groups
            .entry(key)
            .or_default()
            .entry(sms)
            .or_default()
            .push(l);
    }

    let counter_names = Counter::ALL.iter().map(|c| c.name().to_string()).collect();
    let mut standalone = StandaloneTable::new(counter_names);
    let mut ops = Vec::with_capacity(order.len());
    let mut sm_counts: Vec<u32> = Vec::new();
    for key in &order {
        let by_sms = &groups[key];
        let op_id = named_launch_id(&key.0, key.1, key.2);
        for (&sms, launches) in by_sms {
            let counters: Vec<f64> = Counter::ALL
                .iter()
                .map(|&c| median(launches.iter().filter_map(|l| l.counter(c))))
                .collect();
            standalone.rows.push(StandaloneRow {
                op_id: op_id.clone(),
                sm_count: sms,
                duration_us: counters[Counter::DurationNs.index()] / 1000.0,
                counters,
            });
            sm_counts.push(sms);
        }
        // The kernel as seen on its largest partition (the whole GPU when
        // it was profiled there).
        let (_, widest) = by_sms.iter().next_back().expect("a group has launches");
        let first = widest[0];
        let get = |c: Counter| median(widest.iter().filter_map(|l| l.counter(c)));
        let kernel = kernel_spec(key, &get);
        kernel
            .validate()
            .map_err(|problem| value_err(first, "Kernel Name", problem))?;
        ops.push(OpRecord {
            op_id,
            model: model.to_string(),
            launches: u32::try_from(widest.len()).unwrap_or(u32::MAX),
            kernel,
        });
    }
    sm_counts.sort_unstable();
    sm_counts.dedup();

    let params = serde_json::json!({
        "source": "ncu",
        "file": source.display().to_string(),
        "layout": match report.layout {
            NcuLayout::Wide => "wide",
            NcuLayout::Long => "long",
        },
        "not_measured": NOT_MEASURED,
    });
    let mut dataset = Dataset {
        dir: PathBuf::new(),
        info: meta.into_info(gpu, model, "unknown", params, sm_counts, Vec::new()),
        ops,
        standalone,
        pairs: Vec::new(),
    };
    dataset.info.counts = dataset.counts();
    Ok(dataset)
}

/// The `KernelSpec` of a kernel from its counters (see the module docs for
/// the fields ncu does not give).
fn kernel_spec(key: &Key, get: &dyn Fn(Counter) -> f64) -> KernelSpec {
    let l2_bytes = get(Counter::L2Bytes);
    // L1 requests = L2 requests / L1 miss rate; a kernel that hits L1 all
    // the time still sends its L2 traffic.
    let l1_miss = 1.0 - get(Counter::L1HitRatePct) / 100.0;
    let l1_bytes = if l1_miss > 0.0 {
        l2_bytes / l1_miss
    } else {
        l2_bytes
    };
    let dram_read = get(Counter::DramBytesRead);
    let dram_write = get(Counter::DramBytesWrite);
    KernelSpec {
        name: key.0.clone(),
        kind: kind_of(&key.0),
        grid: key.1,
        block: key.2,
        registers_per_thread: get(Counter::RegistersPerThread) as u32,
        shared_mem_static: get(Counter::SharedMemStatic) as u32,
        shared_mem_dynamic: get(Counter::SharedMemDynamic) as u32,
        work: Work {
            fadd: get(Counter::Fadd),
            fmul: get(Counter::Fmul),
            ffma: get(Counter::Ffma),
            hadd: get(Counter::Hadd),
            hmul: get(Counter::Hmul),
            hfma: get(Counter::Hfma),
            tensor_flops: 0.0,
            other_warp_insts: 0.0,
        },
        memory: MemoryUse {
            l1_bytes: l1_bytes.max(l2_bytes),
            l2_bytes,
            dram_read_bytes: dram_read,
            dram_write_bytes: dram_write,
            l2_working_set: dram_read + dram_write,
            inflight_bytes_per_warp: 32.0,
        },
    }
}

/// The library kind a kernel name suggests (vendor names: cuBLAS `gemm`,
/// cuDNN `conv`, PyTorch's `softmax`, ...); elementwise otherwise.
pub fn kind_of(name: &str) -> KernelKind {
    let n = name.to_ascii_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| n.contains(w));
    if has(&["flash", "fmha", "attention", "attn"]) {
        KernelKind::Attention
    } else if has(&["gemv"]) {
        KernelKind::Gemv
    } else if has(&["conv", "wgrad", "dgrad"]) {
        KernelKind::Conv
    } else if has(&["gemm", "xmma", "cutlass", "matmul"]) {
        KernelKind::Gemm
    } else if has(&["softmax"]) {
        KernelKind::Softmax
    } else if has(&["layer_norm", "layernorm", "rmsnorm", "rms_norm"]) {
        KernelKind::LayerNorm
    } else if has(&["embedding", "gather"]) {
        KernelKind::Embedding
    } else if has(&["adam", "sgd", "optimizer"]) {
        KernelKind::Optimizer
    } else if has(&["reduce", "reduction"]) {
        KernelKind::Reduction
    } else if has(&["copy", "memcpy"]) {
        KernelKind::Copy
    } else {
        KernelKind::Elementwise
    }
}

/// The median of `values` (the mean of the middle two for an even count);
/// 0 for none, which the callers never pass.
fn median(values: impl Iterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = values.collect();
    if v.is_empty() {
        return 0.0;
    }
    v.sort_unstable_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tally_gpu::cuda::parse_ncu_csv;

    const WIDE: &str = include_str!("../../gpu/tests/fixtures/ncu/raw-wide-2024.csv");

    fn meta() -> RunMeta {
        RunMeta {
            tool_version: "0".into(),
            command_line: vec![],
            backend: "ncu".into(),
            seed: 0,
            noise_sigma: 0.0,
            started_at: String::new(),
            finished_at: String::new(),
        }
    }

    fn import(gpu: &GpuSpec) -> Result<Dataset, NcuImportError> {
        let path = Path::new("prof.csv");
        let report = parse_ncu_csv(WIDE, path).expect("fixture parses");
        import_ncu(&report, path, gpu, "prof", meta())
    }

    #[test]
    fn kernels_by_name_and_launch_with_their_partition_sizes() {
        let h100 = GpuSpec::preset("h100-sxm").expect("preset");
        let ds = import(&h100).expect("imports");
        ds.validate().expect("a dataset that reads back");
        assert_eq!(ds.ops.len(), 2);
        let gemm = &ds.ops[0];
        assert_eq!(gemm.kernel.kind, KernelKind::Gemm);
        assert_eq!(gemm.kernel.grid, Dim3::new(8, 16, 1));
        assert_eq!(gemm.kernel.registers_per_thread, 168);
        assert_eq!(gemm.launches, 1);
        // L1 hit rate 1.12 %: L1 requests = L2 bytes / 0.9888.
        let l1 = 201_326_592.0 / (1.0 - 0.0112);
        assert!((gemm.kernel.memory.l1_bytes - l1).abs() < 1.0);
        assert_eq!(
            gemm.op_id,
            named_launch_id(&gemm.kernel.name, gemm.kernel.grid, gemm.kernel.block)
        );
        assert_eq!(ds.info.sm_counts, vec![64, 132]);
        assert_eq!(ds.info.params["not_measured"][0], "tensor_flops");
        assert_eq!(ds.info.counts.standalone_rows, 4);
    }

    #[test]
    fn partitions_and_devices_the_gpu_cannot_have_name_the_line() {
        let mut coarse = GpuSpec::preset("h100-sxm").expect("preset");
        coarse.partition.step = 48;
        match import(&coarse) {
            Err(NcuImportError::Value { line, field, .. }) => {
                // The first launch on 64 SMs is the third data row.
                assert_eq!((line, field), (10, "launch__sm_count"));
            }
            other => panic!("{other:?}"),
        }
        let a100 = GpuSpec::preset("a100-40gb").expect("preset");
        match import(&a100) {
            Err(NcuImportError::Value { line, field, .. }) => assert_eq!((line, field), (8, "CC")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn median_and_kinds() {
        assert_eq!(median([3.0, 1.0, 2.0].into_iter()), 2.0);
        assert_eq!(median([4.0, 1.0, 2.0, 3.0].into_iter()), 2.5);
        assert_eq!(kind_of("ampere_sgemm_128x64_nn"), KernelKind::Gemm);
        assert_eq!(
            kind_of("sm90_xmma_gemm_f16f16_f16f32_f32_tn_n"),
            KernelKind::Gemm
        );
        assert_eq!(kind_of("cudnn::conv2d_grouped_direct"), KernelKind::Conv);
        assert_eq!(
            kind_of("void at::native::(anonymous namespace)::cunn_SoftMaxForward"),
            KernelKind::Softmax
        );
        assert_eq!(kind_of("flash_fwd_kernel"), KernelKind::Attention);
        assert_eq!(
            kind_of("void at::native::vectorized_elementwise_kernel<4>"),
            KernelKind::Elementwise
        );
    }
}
