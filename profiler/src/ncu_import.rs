//! `ncu` profiles as a tally dataset: the launches of an Nsight Compute CSV
//! grouped into kernels (keyed by name, grid and block) and partition sizes
//! (`launch__sm_count`: launches on fewer SMs land on their own rows; a
//! file without it ran on the whole GPU), each group's counters reduced to
//! their median over repeated launches, and written as the standalone
//! tables `tally profile` writes. The result has no pair rows: ncu replays
//! one kernel at a time.
//!
//! The standalone table's columns are exactly the counters the export
//! carries for every row (as the CUDA backend's datasets hold only what
//! they measured): nothing is zero-filled, and `run.json` says which file
//! names each column was read from (`params.counters.mapped_from`), which
//! counters are absent, and any present for some kernels only (not a
//! column; `params.counters.partial`). Only the duration is required.
//!
//! The `ops` table needs a full `KernelSpec` per kernel. What ncu measured
//! fills it (launch configuration, registers, shared memory, FP32/FP16
//! instruction counts, L2 and DRAM bytes, L1 bytes from the L1 hit rate);
//! the fields it did not are 0 (the grid and block, when unknown, a single
//! block of one thread) and listed in `run.json` (`params.not_measured`).
//! The predictor reads only the counters, never those fields.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use tally_datasets::{Dataset, OpRecord, StandaloneRow, StandaloneTable};
use tally_gpu::cuda::{ncu_flags_for, DerivedSpec, NcuLaunch, NcuReport};
use tally_gpu::{
    named_launch_id, Counter, Dim3, GpuSpec, KernelKind, KernelSpec, MemoryUse, Partition, Work,
};

use crate::campaign::RunMeta;

/// Fields of the `ops` table ncu never measures (see the module docs).
pub const NEVER_MEASURED: [&str; 4] = [
    "tensor_flops",
    "other_warp_insts",
    "l2_working_set",
    "inflight_bytes_per_warp",
];

/// `ops` fields and the counters they are read from: a field is not
/// measured when one of its counters is absent.
const OP_FIELD_SOURCES: [(&str, &[Counter]); 13] = [
    ("registers_per_thread", &[Counter::RegistersPerThread]),
    ("shared_mem_static", &[Counter::SharedMemStatic]),
    ("shared_mem_dynamic", &[Counter::SharedMemDynamic]),
    ("fadd", &[Counter::Fadd]),
    ("fmul", &[Counter::Fmul]),
    ("ffma", &[Counter::Ffma]),
    ("hadd", &[Counter::Hadd]),
    ("hmul", &[Counter::Hmul]),
    ("hfma", &[Counter::Hfma]),
    ("l2_bytes", &[Counter::L2Bytes]),
    ("l1_bytes", &[Counter::L2Bytes, Counter::L1HitRatePct]),
    ("dram_read_bytes", &[Counter::DramBytesRead]),
    ("dram_write_bytes", &[Counter::DramBytesWrite]),
];

/// Where the GPU spec of an import came from.
#[derive(Debug, Clone, PartialEq)]
pub enum ImportGpu {
    /// `--gpu NAME`: a preset or spec file the user named.
    Named { spec: GpuSpec, given_as: String },
    /// Derived from the export (`--gpu` omitted).
    Derived(DerivedSpec),
}

impl ImportGpu {
    pub fn spec(&self) -> &GpuSpec {
        match self {
            ImportGpu::Named { spec, .. } => spec,
            ImportGpu::Derived(d) => &d.spec,
        }
    }

    /// What `run.json` says about it.
    fn provenance(&self) -> serde_json::Value {
        match self {
            ImportGpu::Named { given_as, .. } => serde_json::json!({ "given": given_as }),
            ImportGpu::Derived(d) => serde_json::json!({
                "derived_from_export": true,
                "compute_capability_from": d.compute_capability_from,
                "sm_count_from": d.sm_count_from,
                "preset": d.preset,
                "from_preset": "everything else: per-SM limits and rates, clock, memory, L2 and \
                                DRAM figures, latencies, partition rule",
            }),
        }
    }
}

/// Why an ncu CSV could not become a dataset; every variant names the file
/// and the line of the launch at fault.
#[derive(Debug, thiserror::Error)]
pub enum NcuImportError {
    #[error(
        "`{path}` line {line}, field `gpu__time_duration.sum`: launch {id} (`{kernel}`) has no \
         duration, which every dataset row needs; profile with the GPU Speed Of Light section \
         (`ncu --section SpeedOfLight`, the `Duration` line) or `ncu {flags}`"
    )]
    MissingDuration {
        path: PathBuf,
        line: usize,
        id: String,
        kernel: String,
        flags: String,
    },
    #[error("`{path}` line {line}, field `{field}`: {problem}")]
    Value {
        path: PathBuf,
        line: usize,
        field: &'static str,
        problem: String,
    },
}

/// Kernel identity: name and launch configuration (when the file gives it).
type Key = (String, Option<Dim3>, Option<Dim3>);

/// Turn `report` (read from `source`) into a standalone dataset.
pub fn import_ncu(
    report: &NcuReport,
    source: &Path,
    gpu: &ImportGpu,
    model: &str,
    meta: RunMeta,
) -> Result<Dataset, NcuImportError> {
    let spec = gpu.spec();
    let value_err = |l: &NcuLaunch, field: &'static str, problem: String| NcuImportError::Value {
        path: source.to_path_buf(),
        line: l.line,
        field,
        problem,
    };
    // Kernels in launch order, each with its launches by SM count.
    let mut order: Vec<Key> = Vec::new();
    let mut groups: HashMap<Key, BTreeMap<u32, Vec<&NcuLaunch>>> = HashMap::new();
    for l in &report.launches {
        if l.duration_us().is_none() {
            return Err(NcuImportError::MissingDuration {
                path: source.to_path_buf(),
                line: l.line,
                id: l.id.clone(),
                kernel: l.kernel_name.clone(),
                flags: ncu_flags_for(&[Counter::DurationNs]),
            });
        }
        check_compute_capability(l, gpu).map_err(|p| value_err(l, "CC", p))?;
        let sms = match l.counter(Counter::SmCount) {
            // ncu profiles ordinary launches on the whole device.
            None => spec.sm_count,
            Some(sms) if sms >= 1.0 && sms.fract() == 0.0 && sms <= f64::from(spec.sm_count) => {
                sms as u32
            }
            Some(sms) => {
                return Err(value_err(
                    l,
                    "launch__sm_count",
                    format!("{sms} SMs is not a partition of {}", spec.name),
                ))
            }
        };
        Partition::first(sms)
            .check(spec)
            .map_err(|e| value_err(l, "launch__sm_count", e.to_string()))?;
        let duration = l.duration_us().unwrap_or_default();
        if duration <= 0.0 {
            return Err(value_err(
                l,
                "gpu__time_duration.sum",
                format!("a duration must be > 0, got {duration} us"),
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

    // One row per (kernel, SM count): each counter's median over the
    // launches that measured it.
    let mut rows: Vec<(String, u32, Vec<Option<f64>>)> = Vec::new();
    for key in &order {
        let op_id = op_id(key);
        for (&sms, launches) in &groups[key] {
            let values = Counter::ALL
                .iter()
                .map(|&c| median(launches.iter().filter_map(|l| l.counter(c))))
                .collect();
            rows.push((op_id.clone(), sms, values));
        }
    }
    let columns: Vec<Counter> = Counter::ALL
        .iter()
        .copied()
        .filter(|c| c.index() != Counter::DurationNs.index())
        .filter(|c| rows.iter().all(|r| r.2[c.index()].is_some()))
        .collect();
    let partial: BTreeMap<&str, usize> = Counter::ALL
        .iter()
        .filter(|c| !columns.contains(c) && **c != Counter::DurationNs)
        .filter_map(|c| {
            let lacking = rows.iter().filter(|r| r.2[c.index()].is_none()).count();
            (lacking < rows.len()).then_some((c.name(), lacking))
        })
        .collect();
    let mut standalone = StandaloneTable::new(
        std::iter::once(Counter::DurationNs)
            .chain(columns.iter().copied())
            .map(|c| c.name().to_string())
            .collect(),
    );
    let mut sm_counts: Vec<u32> = Vec::new();
    for (op_id, sms, values) in &rows {
        let duration_ns = values[Counter::DurationNs.index()].unwrap_or_default();
        standalone.rows.push(StandaloneRow {
            op_id: op_id.clone(),
            sm_count: *sms,
            duration_us: duration_ns / 1000.0,
            counters: std::iter::once(duration_ns)
                .chain(
                    columns
                        .iter()
                        .map(|c| values[c.index()].unwrap_or_default()),
                )
                .collect(),
        });
        sm_counts.push(*sms);
    }
    sm_counts.sort_unstable();
    sm_counts.dedup();

    let mut ops = Vec::with_capacity(order.len());
    for key in &order {
        // The kernel as seen on its largest partition (the whole GPU when
        // it was profiled there).
        let (_, widest) = groups[key]
            .iter()
            .next_back()
            .expect("a group has launches");
        let first = widest[0];
        let get = |c: Counter| {
            columns
                .contains(&c)
                .then(|| median(widest.iter().filter_map(|l| l.counter(c))))
                .flatten()
        };
        let kernel = kernel_spec(key, &get);
        kernel
            .validate()
            .map_err(|problem| value_err(first, "Kernel Name", problem))?;
        ops.push(OpRecord {
            op_id: op_id(key),
            model: model.to_string(),
            launches: u32::try_from(widest.len()).unwrap_or(u32::MAX),
            kernel,
        });
    }

    let params = serde_json::json!({
        "source": "ncu",
        "file": source.display().to_string(),
        "layout": report.layout.as_str(),
        "gpu": gpu.provenance(),
        "sm_count_from": if report.launches.iter().all(|l| l.counter(Counter::SmCount).is_some()) {
            "launch__sm_count of each launch".to_string()
        } else {
            format!("the GPU's {} SMs where a launch has no launch__sm_count", spec.sm_count)
        },
        "counters": {
            "mapped_from": report
                .mapped_from
                .iter()
                .filter(|(c, _)| *c == Counter::DurationNs || columns.contains(c))
                .map(|(c, names)| (c.name().to_string(), serde_json::json!(names)))
                .collect::<serde_json::Map<_, _>>(),
            "absent": Counter::ALL
                .iter()
                .filter(|c| !columns.contains(c) && **c != Counter::DurationNs && !partial.contains_key(c.name()))
                .map(Counter::name)
                .collect::<Vec<_>>(),
            "partial": partial,
        },
        "ignored_metrics": report.ignored_metrics,
        "not_measured": not_measured(&columns, &order),
    });
    let mut dataset = Dataset {
        dir: PathBuf::new(),
        info: meta.into_info(spec, model, "unknown", params, sm_counts, Vec::new()),
        ops,
        standalone,
        pairs: Vec::new(),
    };
    dataset.info.counts = dataset.counts();
    Ok(dataset)
}

/// A file's compute capability against the named GPU's (a derived spec
/// took it from the file).
fn check_compute_capability(l: &NcuLaunch, gpu: &ImportGpu) -> Result<(), String> {
    let (ImportGpu::Named { spec, .. }, Some(cc)) = (gpu, &l.compute_capability) else {
        return Ok(());
    };
    if spec.compute_capability.is_empty() || *cc == spec.compute_capability {
        return Ok(());
    }
    Err(format!(
        "profiled on compute capability {cc}, but {} is {}; pass the GPU it ran on with \
         --gpu, or omit --gpu to derive it from the file",
        spec.name, spec.compute_capability
    ))
}

/// The dataset's op id of a kernel: its name and launch configuration (a
/// single one-thread block stands for an unknown one).
fn op_id(key: &Key) -> String {
    let one = Dim3::linear(1);
    named_launch_id(&key.0, key.1.unwrap_or(one), key.2.unwrap_or(one))
}

/// The `ops` fields no counter of `columns` gave, for `run.json`.
fn not_measured(columns: &[Counter], order: &[Key]) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    if order.iter().any(|k| k.1.is_none()) {
        out.push("grid");
    }
    if order.iter().any(|k| k.2.is_none()) {
        out.push("block");
    }
    out.extend(
        OP_FIELD_SOURCES
            .iter()
            .filter(|(_, from)| from.iter().any(|c| !columns.contains(c)))
            .map(|(field, _)| *field),
    );
    out.extend(NEVER_MEASURED);
    out
}

/// The `KernelSpec` of a kernel from its counters (see the module docs for
/// the fields ncu does not give: 0 here).
fn kernel_spec(key: &Key, get: &dyn Fn(Counter) -> Option<f64>) -> KernelSpec {
    let or0 = |c: Counter| get(c).unwrap_or(0.0);
    let l2_bytes = or0(Counter::L2Bytes);
    // L1 requests = L2 requests / L1 miss rate; a kernel that hits L1 all
    // the time still sends its L2 traffic.
    let l1_bytes = match get(Counter::L1HitRatePct) {
        Some(hit) if hit < 100.0 => l2_bytes / (1.0 - hit / 100.0),
        _ => l2_bytes,
    };
    let one = Dim3::linear(1);
    KernelSpec {
        name: key.0.clone(),
        kind: kind_of(&key.0),
        grid: key.1.unwrap_or(one),
        block: key.2.unwrap_or(one),
        registers_per_thread: or0(Counter::RegistersPerThread) as u32,
        shared_mem_static: or0(Counter::SharedMemStatic) as u32,
        shared_mem_dynamic: or0(Counter::SharedMemDynamic) as u32,
        work: Work {
            fadd: or0(Counter::Fadd),
            fmul: or0(Counter::Fmul),
            ffma: or0(Counter::Ffma),
            hadd: or0(Counter::Hadd),
            hmul: or0(Counter::Hmul),
            hfma: or0(Counter::Hfma),
            tensor_flops: 0.0,
            other_warp_insts: 0.0,
        },
        memory: MemoryUse {
            l1_bytes: l1_bytes.max(l2_bytes),
            l2_bytes,
            dram_read_bytes: or0(Counter::DramBytesRead),
            dram_write_bytes: or0(Counter::DramBytesWrite),
            l2_working_set: or0(Counter::DramBytesRead) + or0(Counter::DramBytesWrite),
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
    } else if has(&["gemm", "xmma", "cutlass", "matmul", "nvjet"]) {
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
/// `None` for none.
fn median(values: impl Iterator<Item = f64>) -> Option<f64> {
    let mut v: Vec<f64> = values.collect();
    if v.is_empty() {
        return None;
    }
    v.sort_unstable_by(f64::total_cmp);
    let m = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    })
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

    fn named(name: &str) -> ImportGpu {
        ImportGpu::Named {
            spec: GpuSpec::preset(name).expect("preset"),
            given_as: name.to_string(),
        }
    }

    fn import(gpu: &ImportGpu) -> Result<Dataset, NcuImportError> {
        let path = Path::new("prof.csv");
        let report = parse_ncu_csv(WIDE, path).expect("fixture parses");
        import_ncu(&report, path, gpu, "prof", meta())
    }

    #[test]
    fn kernels_by_name_and_launch_with_their_partition_sizes() {
        let ds = import(&named("h100-sxm")).expect("imports");
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
        // Every counter of the file is a column, nothing else is claimed.
        assert_eq!(ds.standalone.counter_names.len(), Counter::ALL.len());
        assert_eq!(ds.info.params["not_measured"][0], "tensor_flops");
        assert_eq!(ds.info.params["counters"]["absent"], serde_json::json!([]));
        assert_eq!(
            ds.info.params["counters"]["mapped_from"]["gpu__time_duration.sum"][0],
            "gpu__time_duration.sum"
        );
        assert_eq!(ds.info.counts.standalone_rows, 4);
    }

    #[test]
    fn partitions_and_devices_the_gpu_cannot_have_name_the_line() {
        let mut coarse = GpuSpec::preset("h100-sxm").expect("preset");
        coarse.partition.step = 48;
        let coarse = ImportGpu::Named {
            spec: coarse,
            given_as: "coarse.toml".into(),
        };
        match import(&coarse) {
            Err(NcuImportError::Value { line, field, .. }) => {
                // The first launch on 64 SMs is the third data row.
                assert_eq!((line, field), (10, "launch__sm_count"));
            }
            other => panic!("{other:?}"),
        }
        match import(&named("a100-40gb")) {
            Err(NcuImportError::Value { line, field, .. }) => assert_eq!((line, field), (8, "CC")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_subset_becomes_exactly_its_columns() {
        let text = "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"dram__bytes_read.sum\",\"lts__t_bytes.sum\"\n\
                    \"\",\"\",\"nsecond\",\"byte\",\"byte\"\n\
                    \"0\",\"a\",\"1000\",\"64\",\"128\"\n\"1\",\"b\",\"2000\",\"32\",\"n/a\"\n";
        let path = Path::new("s.csv");
        let report = parse_ncu_csv(text, path).expect("parses");
        let ds = import_ncu(&report, path, &named("h100-sxm"), "s", meta()).expect("imports");
        ds.validate().expect("valid");
        assert_eq!(
            ds.standalone.counter_names,
            ["gpu__time_duration.sum", "dram__bytes_read.sum"]
        );
        // No SM count in the file: the whole GPU.
        assert_eq!(ds.info.sm_counts, vec![132]);
        assert_eq!(ds.info.params["counters"]["partial"]["lts__t_bytes.sum"], 1);
        let nm = &ds.info.params["not_measured"];
        for field in ["grid", "block", "registers_per_thread", "l2_bytes"] {
            assert!(
                nm.as_array().expect("list").iter().any(|v| v == field),
                "{field}: {nm}"
            );
        }
        assert!(!nm
            .as_array()
            .expect("list")
            .iter()
            .any(|v| v == "dram_read_bytes"));
        let missing = "\"ID\",\"Kernel Name\",\"dram__bytes_read.sum\"\n\"0\",\"a\",\"64\"\n";
        let report = parse_ncu_csv(missing, path).expect("parses");
        let e = import_ncu(&report, path, &named("h100-sxm"), "s", meta())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("line 2") && e.contains("gpu__time_duration.sum") && e.contains("--metrics"),
            "{e}"
        );
    }

    #[test]
    fn median_and_kinds() {
        assert_eq!(median([3.0, 1.0, 2.0].into_iter()), Some(2.0));
        assert_eq!(median([4.0, 1.0, 2.0, 3.0].into_iter()), Some(2.5));
        assert_eq!(median(std::iter::empty()), None);
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
