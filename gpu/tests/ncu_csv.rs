//! The ncu CSV parser on files in each layout ncu writes (fixtures under
//! `tests/fixtures/ncu/`): the wide raw page and the long details page of
//! current and older releases, `--set full` runs with rule rows and short
//! rows, preambles, program output and `==ERROR==` lines, template names
//! with commas and quotes, repeated launches; and the line and field that
//! every malformed file's error names.

use std::path::{Path, PathBuf};

use tally_gpu::cuda::{parse_ncu_csv, read_ncu_csv, NcuCsvError, NcuLayout, NcuReport};
use tally_gpu::{Counter, Dim3};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/ncu")
        .join(name)
}

fn read(name: &str) -> NcuReport {
    read_ncu_csv(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The names a counter was read from.
fn sources(r: &NcuReport, c: Counter) -> Vec<String> {
    r.mapped_from
        .iter()
        .find(|(x, _)| *x == c)
        .map(|(_, s)| s.clone())
        .unwrap_or_default()
}

#[test]
fn wide_raw_page_of_current_ncu() {
    let r = read("raw-wide-2024.csv");
    assert_eq!(r.layout, NcuLayout::Wide);
    assert_eq!(r.launches.len(), 6);
    assert!(r.ignored_metrics.is_empty(), "{:?}", r.ignored_metrics);
    let gemm = &r.launches[0];
    assert_eq!(gemm.id, "0");
    assert_eq!(
        gemm.line, 8,
        "after 5 ==PROF== / program lines, header and units"
    );
    assert!(gemm.kernel_name.starts_with("sm90_xmma_gemm_f16f16"));
    assert_eq!(gemm.grid, Some(Dim3::new(8, 16, 1)));
    assert_eq!(gemm.block, Some(Dim3::linear(384)));
    assert_eq!(gemm.device, Some(0));
    assert_eq!(gemm.compute_capability.as_deref(), Some("9.0"));
    // Thousands separators: "201,326,592" and "48,512".
    assert_eq!(gemm.counter(Counter::L2Bytes), Some(201_326_592.0));
    assert_eq!(gemm.counter(Counter::DurationNs), Some(48_512.0));
    assert_eq!(gemm.duration_us(), Some(48.512));
    assert_eq!(gemm.counter(Counter::SharedMemDynamic), Some(213_248.0));
    assert_eq!(gemm.counter(Counter::L2HitRatePct), Some(86.73));
    assert!(gemm.missing().is_empty());
    // A kernel name with commas, quotes-free but full of template punctuation.
    let gelu = &r.launches[1];
    assert!(gelu
        .kernel_name
        .contains("at::detail::Array<char *, 2>>(int, T2, T3)"));
    assert_eq!(gelu.counter(Counter::SmCount), Some(132.0));
    assert_eq!(r.launches[3].counter(Counter::SmCount), Some(64.0));
    assert_eq!(sources(&r, Counter::DurationNs), ["gpu__time_duration.sum"]);
}

#[test]
fn wide_raw_page_of_older_ncu_takes_launch_sizes_from_metrics() {
    let r = read("raw-wide-2021.csv");
    assert_eq!(r.layout, NcuLayout::Wide);
    assert_eq!(r.launches.len(), 2);
    assert_eq!(r.ignored_metrics, ["sm__warps_launched.sum"]);
    let sgemm = &r.launches[0];
    assert_eq!(sgemm.kernel_name, "ampere_sgemm_128x64_nn");
    // No Grid Size / Block Size columns: launch__grid_size is the block count.
    assert_eq!(sgemm.grid, Some(Dim3::linear(128)));
    assert_eq!(sgemm.block, Some(Dim3::linear(384)));
    assert_eq!(sgemm.device, None);
    assert_eq!(sgemm.counter(Counter::DurationNs), Some(91_230.0));
    assert_eq!(sgemm.missing(), [Counter::TensorActivePct]);
}

#[test]
fn wide_raw_subset_with_auto_units_and_n_a() {
    let r = read("raw-rtx5090-2025.csv");
    assert_eq!(r.launches.len(), 2);
    let l = &r.launches[0];
    assert_eq!(l.compute_capability.as_deref(), Some("12.0"));
    assert_eq!(l.grid, Some(Dim3::new(1, 170, 1)));
    // Mbyte, Kbyte and usecond to bytes and nanoseconds.
    assert!((l.counter(Counter::DramBytesRead).unwrap() - 16.78e6).abs() < 1e-3);
    assert!((l.counter(Counter::DramBytesWrite).unwrap() - 4.10e3).abs() < 1e-6);
    assert!((l.counter(Counter::DurationNs).unwrap() - 9_890.0).abs() < 1e-6);
    // `n/a`: not measured, not zero.
    assert_eq!(r.launches[1].counter(Counter::SmThroughputPct), None);
    assert_eq!(
        l.present(),
        [
            Counter::DurationNs,
            Counter::SmThroughputPct,
            Counter::DramBytesRead,
            Counter::DramBytesWrite,
            Counter::SmCount
        ]
    );
}

#[test]
fn long_details_page_of_current_ncu() {
    let r = read("details-long-2024.csv");
    assert_eq!(r.layout, NcuLayout::Long);
    assert_eq!(r.launches.len(), 2);
    let gemm = &r.launches[0];
    assert_eq!(gemm.line, 4);
    assert_eq!(gemm.grid, Some(Dim3::new(8, 16, 1)));
    // "Duration" in usecond: 48.51 us.
    assert!((gemm.counter(Counter::DurationNs).unwrap() - 48_510.0).abs() < 1e-6);
    // "Dynamic Shared Memory Per Block" in Kbyte/block.
    assert!((gemm.counter(Counter::SharedMemDynamic).unwrap() - 213_250.0).abs() < 1e-6);
    assert_eq!(gemm.counter(Counter::DramBytesRead), Some(25_165_824.0));
    assert_eq!(gemm.counter(Counter::AchievedOccupancyPct), Some(18.64));
    // Not in the file: the detail page has no L1 hit rate row here.
    assert_eq!(gemm.counter(Counter::L1HitRatePct), None);
    assert!(r.ignored_metrics.iter().any(|m| m == "Memory Throughput"));
    assert!(r
        .ignored_metrics
        .iter()
        .any(|m| m == "Theoretical Occupancy"));
    assert_eq!(
        r.launches[1].counter(Counter::DramBytesWrite),
        Some(33_554_432.0)
    );
}

#[test]
fn long_details_page_of_older_ncu() {
    let r = read("details-long-2021.csv");
    assert_eq!(r.layout, NcuLayout::Long);
    assert_eq!(r.launches.len(), 1);
    let l = &r.launches[0];
    assert_eq!(l.line, 2);
    assert_eq!(
        (l.grid, l.block),
        (Some(Dim3::linear(128)), Some(Dim3::linear(384)))
    );
    assert_eq!(l.counter(Counter::RegistersPerThread), Some(168.0));
}

/// `--set full` on ncu 2025: 20 columns, rule rows, rows that stop after
/// `Metric Value` with a trailing comma, program output between rows.
#[test]
fn set_full_details_page_with_rules_and_short_rows() {
    let r = read("details-full-2025.csv");
    assert_eq!(r.layout, NcuLayout::Long);
    assert_eq!(r.launches.len(), 4);
    assert_eq!(r.skipped_lines.len(), 1, "the program's line between rows");
    assert!(r.ncu_errors.is_empty());
    let ids: Vec<&str> = r.launches.iter().map(|l| l.id.as_str()).collect();
    assert_eq!(ids, ["0", "1", "2", "3"]);
    let gemm = &r.launches[0];
    assert!((gemm.counter(Counter::DurationNs).unwrap() - 48_510.0).abs() < 1e-6);
    assert_eq!(gemm.counter(Counter::SmThroughputPct), Some(71.42));
    assert_eq!(gemm.counter(Counter::L1ThroughputPct), Some(22.40));
    assert_eq!(gemm.counter(Counter::L2ThroughputPct), Some(33.80));
    assert_eq!(gemm.counter(Counter::IpcActive), Some(1.55));
    assert_eq!(gemm.counter(Counter::L2HitRatePct), Some(86.73));
    assert_eq!(gemm.counter(Counter::SmCount), Some(132.0));
    assert_eq!(gemm.counter(Counter::OccLimitWarps), Some(5.0));
    assert_eq!(gemm.counter(Counter::GridSize), Some(128.0));
    // Labels whose metric is not tally's are read and left alone.
    assert_eq!(gemm.counter(Counter::DramThroughputPct), None);
    assert_eq!(gemm.counter(Counter::IssueActivePct), None);
    assert_eq!(gemm.counter(Counter::CyclesElapsed), None);
    for label in [
        "DRAM Throughput",
        "Issue Slots Busy",
        "Memory Throughput",
        "Function Cache Configuration",
    ] {
        assert!(r.ignored_metrics.iter().any(|m| m == label), "{label}");
    }
    // "13,485" us with a thousands separator... and a template name with
    // commas, and one with quotes.
    let softmax = &r.launches[1];
    assert!(softmax
        .kernel_name
        .contains("cunn_SoftMaxForward<8, c10::Half, float, c10::Half"));
    assert!((softmax.counter(Counter::DurationNs).unwrap() - 13_485.0).abs() < 1e-6);
    assert_eq!(softmax.counter(Counter::GridSize), Some(8192.0));
    assert!(r.launches[3]
        .kernel_name
        .contains("registry<\"gelu\", 2>, float>"));
    assert_eq!(
        sources(&r, Counter::SmThroughputPct),
        ["Compute (SM) Throughput"]
    );
    assert_eq!(sources(&r, Counter::SmCount), ["# SMs"]);
}

/// ncu 2020 on a V100: `Kernel Time`, no launch columns, the old SOL labels,
/// durations in nsecond and frequencies in cycle/second.
#[test]
fn details_page_of_ncu_2020() {
    let r = read("details-v100-2020.csv");
    assert_eq!(r.launches.len(), 3);
    let l = &r.launches[0];
    assert_eq!(l.compute_capability, None);
    assert_eq!(l.grid, Some(Dim3::linear(506)));
    assert_eq!(l.block, Some(Dim3::linear(192)));
    assert_eq!(l.counter(Counter::DurationNs), Some(8_992.0));
    assert_eq!(l.counter(Counter::SmThroughputPct), Some(22.48));
    assert_eq!(l.counter(Counter::AchievedOccupancyPct), Some(48.0));
    assert_eq!(l.counter(Counter::OccLimitRegisters), Some(14.0));
    assert_eq!(l.counter(Counter::SmCount), None);
    assert_eq!(sources(&r, Counter::SmThroughputPct), ["SM [%]"]);
    assert!(r.ignored_metrics.iter().any(|m| m == "SOL FB"));
    assert!(r.ignored_metrics.iter().any(|m| m == "Memory Frequency"));
}

#[test]
fn a_rule_row_and_milliseconds() {
    let r = read("details-b200-2025.csv");
    assert_eq!(r.launches.len(), 1);
    let l = &r.launches[0];
    assert!((l.counter(Counter::DurationNs).unwrap() - 1.21e6).abs() < 1e-3);
    assert_eq!(l.compute_capability.as_deref(), Some("10.0"));
    assert_eq!(l.counter(Counter::SmCount), Some(148.0));
}

/// A counter given twice for one launch (two passes, or a raw metric beside
/// its section line): the raw name wins, and repeated raw values give
/// their median whatever their order.
#[test]
fn repeated_values_resolve_independently_of_order() {
    let head = "\"ID\",\"Kernel Name\",\"Block Size\",\"Grid Size\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n";
    let row = |name: &str, unit: &str, v: &str| {
        format!("\"0\",\"k\",\"(32, 1, 1)\",\"(4, 1, 1)\",\"s\",\"{name}\",\"{unit}\",\"{v}\"\n")
    };
    let rows = [
        row("Duration", "us", "9"),
        row("gpu__time_duration.sum", "nsecond", "4000"),
        row("gpu__time_duration.sum", "nsecond", "5000"),
        row("gpu__time_duration.sum", "nsecond", "6000"),
    ];
    for order in [[0, 1, 2, 3], [3, 2, 0, 1], [1, 3, 0, 2]] {
        let text: String = std::iter::once(head.to_string())
            .chain(order.iter().map(|&i| rows[i].clone()))
            .collect();
        let r = parse_ncu_csv(&text, Path::new("x.csv")).expect("parses");
        assert_eq!(r.launches[0].counter(Counter::DurationNs), Some(5000.0));
        assert_eq!(sources(&r, Counter::DurationNs), ["gpu__time_duration.sum"]);
    }
}

#[test]
fn a_file_without_csv_rows_quotes_ncu_error() {
    let err = read_ncu_csv(&fixture("error-only.csv")).expect_err("no rows");
    let msg = err.to_string();
    assert!(matches!(err, NcuCsvError::NoHeader { .. }), "{msg}");
    assert!(msg.contains("error-only.csv"), "{msg}");
    assert!(msg.contains("==ERROR== ERR_NVGPUCTRPERM"), "{msg}");
    let header_only = "\"ID\",\"Kernel Name\"\n==ERROR== Failed to profile kernel\n";
    let msg = parse_ncu_csv(header_only, Path::new("h.csv"))
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("no kernel launches") && msg.contains("==ERROR== Failed to profile"),
        "{msg}"
    );
}

/// Every malformed fixture names the file, the line and the field.
#[test]
fn malformed_files_name_file_line_and_field() {
    let cases = [
        ("malformed.csv", 9, "dram__bytes_read.sum", "33,55X,432"),
        ("malformed-unit.csv", 3, "Duration (unit)", "byte"),
        ("malformed-kernel.csv", 3, "Kernel Name", "other_kernel"),
        ("malformed-grid.csv", 3, "Grid Size", "(4, 1)"),
    ];
    for (name, want_line, want_field, want_found) in cases {
        let path = fixture(name);
        let err = read_ncu_csv(&path).expect_err(name);
        match &err {
            NcuCsvError::Field {
                path: p,
                line,
                field,
                found,
                ..
            } => {
                assert_eq!(p, &path);
                assert_eq!((*line, field.as_str()), (want_line, want_field), "{name}");
                assert_eq!(found, want_found, "{name}");
            }
            other => panic!("{name}: {other:?}"),
        }
        let msg = err.to_string();
        assert!(
            msg.contains(name) && msg.contains(&format!("line {want_line}")),
            "{msg}"
        );
    }
    let msg = read_ncu_csv(&fixture("malformed-extra.csv"))
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("malformed-extra.csv` line 3") && msg.contains("`stray`"),
        "{msg}"
    );
}

#[test]
fn structural_errors_name_the_line() {
    let p = Path::new("x.csv");
    assert!(matches!(
        parse_ncu_csv("==PROF== nothing profiled\n", p),
        Err(NcuCsvError::NoHeader { .. })
    ));
    let no_kernel = "\"ID\",\"gpu__time_duration.sum\"\n";
    assert!(matches!(
        parse_ncu_csv(no_kernel, p),
        Err(NcuCsvError::MissingColumn {
            line: 1,
            column: "Kernel Name",
            ..
        })
    ));
    let wrong_unit = "\"ID\",\"Kernel Name\",\"Block Size\",\"Grid Size\",\"gpu__time_duration.sum\"\n\
                      \"\",\"\",\"\",\"\",\"byte\"\n\"0\",\"k\",\"(32, 1, 1)\",\"(4, 1, 1)\",\"10\"\n";
    match parse_ncu_csv(wrong_unit, p) {
        Err(NcuCsvError::Field { line: 3, field, .. }) => {
            assert_eq!(field, "gpu__time_duration.sum (unit)")
        }
        other => panic!("{other:?}"),
    }
    // No launch configuration at all: read, with the grid and block unknown.
    let no_launch = "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"0\",\"k\",\"10\"\n";
    let r = parse_ncu_csv(no_launch, p).expect("parses");
    assert_eq!((r.launches[0].grid, r.launches[0].block), (None, None));
    let bad_quote = "\"ID\",\"Kernel Name\"\n\"0\",\"k\"x\n";
    assert!(matches!(
        parse_ncu_csv(bad_quote, p),
        Err(NcuCsvError::Syntax { line: 2, .. })
    ));
    let second_header = "\"ID\",\"Kernel Name\"\n\"0\",\"k\"\n\"ID\",\"Kernel Name\",\"CC\"\n";
    assert!(matches!(
        parse_ncu_csv(second_header, p),
        Err(NcuCsvError::Syntax { line: 3, .. })
    ));
}

#[test]
fn the_metrics_argument_lists_every_counter() {
    let arg = tally_gpu::cuda::ncu_metrics_arg();
    assert_eq!(arg.split(',').count(), Counter::ALL.len());
    assert!(arg.contains("lts__t_bytes.sum"));
}
