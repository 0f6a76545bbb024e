//! A small, valid run used by the integration tests.

#![allow(dead_code)]

use std::path::Path;

use tally_datasets::{
    Dataset, Format, OpRecord, PairRow, RunCounts, RunInfo, StandaloneRow, StandaloneTable,
    SCHEMA_VERSION,
};
use tally_gpu::{Dim3, GpuSpec, KernelKind, KernelSpec, MemoryUse, Work};

pub const COUNTERS: [&str; 2] = [
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
];

pub fn kernel(name: &str, kind: KernelKind, blocks: u32, fma: f64) -> KernelSpec {
    KernelSpec {
        name: name.into(),
        kind,
        grid: Dim3::new(blocks, 2, 1),
        block: Dim3::linear(256),
        registers_per_thread: 64,
        shared_mem_static: 1024,
        shared_mem_dynamic: 49_152,
        work: Work {
            fadd: 0.1 + 0.2,
            ffma: fma,
            tensor_flops: 1.234_567_890_123_456_7e12,
            other_warp_insts: 1e-300,
            ..Work::default()
        },
        memory: MemoryUse {
            l1_bytes: 3e6,
            l2_bytes: 2.5e6,
            dram_read_bytes: 1.0 / 3.0,
            dram_write_bytes: 1e6,
            l2_working_set: f64::MIN_POSITIVE,
            inflight_bytes_per_warp: 512.0,
        },
    }
}

pub fn info(format: Format, counts: RunCounts) -> RunInfo {
    RunInfo {
        schema_version: SCHEMA_VERSION,
        tool: RunInfo::TOOL.into(),
        tool_version: "0.1.0".into(),
        command_line: vec![
            "tally".into(),
            "profile".into(),
            "--model".into(),
            "gpt2".into(),
        ],
        backend: "sim".into(),
        gpu: GpuSpec::preset("h100-sxm").expect("preset"),
        model: "gpt2".into(),
        phase: "train".into(),
        params: serde_json::json!({"batch": 8, "seq_len": 1024}),
        seed: 42,
        noise_sigma: 0.03,
        sm_counts: vec![8, 16, 132],
        splits: vec![(8, 124), (66, 66)],
        formats: format.encodings(),
        started_at: "2024-02-29T12:34:56Z".into(),
        finished_at: "2024-02-29T12:35:10Z".into(),
        counts,
    }
}

pub fn sample(dir: &Path, format: Format) -> Dataset {
    let ops = vec![
        OpRecord::from_kernel(
            "gpt2",
            12,
            kernel("matmul, \"qkv\"", KernelKind::Gemm, 132, 7e9),
        ),
        OpRecord::from_kernel(
            "gpt2",
            1,
            kernel("softmax\nline2", KernelKind::Softmax, 64, 0.0),
        ),
        OpRecord::from_kernel(
            "gpt2",
            3,
            kernel("layer_norm", KernelKind::LayerNorm, 7, 1.5),
        ),
    ];
    let mut standalone = StandaloneTable::new(COUNTERS.iter().map(|s| s.to_string()).collect());
    for op in &ops {
        for sm in [8, 16, 132] {
            standalone.rows.push(StandaloneRow {
                op_id: op.op_id.clone(),
                sm_count: sm,
                duration_us: 100.0 / f64::from(sm) + 0.1,
                counters: vec![f64::from(sm) / 1.7, 99.999_999_999_999_99],
            });
        }
    }
    let pairs = vec![
        pair(&ops[0].op_id, &ops[1].op_id, 8, 124),
        pair(&ops[1].op_id, &ops[2].op_id, 66, 66),
    ];
    let mut ds = Dataset {
        dir: dir.to_path_buf(),
        info: info(format, RunCounts::default()),
        ops,
        standalone,
        pairs,
    };
    ds.info.counts = ds.counts();
    ds
}

pub fn pair(a: &str, b: &str, sm_a: u32, sm_b: u32) -> PairRow {
    PairRow {
        op_a: a.into(),
        op_b: b.into(),
        sm_a,
        sm_b,
        duration_a_us: 13.7,
        duration_b_us: 21.0 / 9.0,
        solo_a_us: 10.0,
        solo_b_us: 2.0,
        slowdown_a: 1.37,
        slowdown_b: 21.0 / 18.0,
    }
}
