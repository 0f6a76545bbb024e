//! The ncu CSV parser on files in each layout ncu writes (fixtures under
//! `tests/fixtures/ncu/`), and the line numbers of its errors.

use std::path::{Path, PathBuf};

use tally_gpu::cuda::{parse_ncu_csv, read_ncu_csv, NcuCsvError, NcuLayout};
use tally_gpu::{Counter, Dim3};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/ncu")
        .join(name)
}

#[test]
fn wide_raw_page_of_current_ncu() {
    let r = read_ncu_csv(&fixture("raw-wide-2024.csv")).expect("parses");
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
    assert_eq!(gemm.grid, Dim3::new(8, 16, 1));
    assert_eq!(gemm.block, Dim3::linear(384));
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
}

#[test]
fn wide_raw_page_of_older_ncu_takes_launch_sizes_from_metrics() {
    let r = read_ncu_csv(&fixture("raw-wide-2021.csv")).expect("parses");
    assert_eq!(r.layout, NcuLayout::Wide);
    assert_eq!(r.launches.len(), 2);
    assert_eq!(r.ignored_metrics, ["sm__warps_launched.sum"]);
    let sgemm = &r.launches[0];
    assert_eq!(sgemm.kernel_name, "ampere_sgemm_128x64_nn");
    // No Grid Size / Block Size columns: launch__grid_size is the block count.
    assert_eq!(sgemm.grid, Dim3::linear(128));
    assert_eq!(sgemm.block, Dim3::linear(384));
    assert_eq!(sgemm.device, None);
    assert_eq!(sgemm.counter(Counter::DurationNs), Some(91_230.0));
    assert_eq!(sgemm.missing(), [Counter::TensorActivePct]);
}

#[test]
fn long_details_page_of_current_ncu() {
    let r = read_ncu_csv(&fixture("details-long-2024.csv")).expect("parses");
    assert_eq!(r.layout, NcuLayout::Long);
    assert_eq!(r.launches.len(), 2);
    let gemm = &r.launches[0];
    assert_eq!(gemm.line, 4);
    assert_eq!(gemm.grid, Dim3::new(8, 16, 1));
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
    let r = read_ncu_csv(&fixture("details-long-2021.csv")).expect("parses");
    assert_eq!(r.layout, NcuLayout::Long);
    assert_eq!(r.launches.len(), 1);
    let l = &r.launches[0];
    assert_eq!(l.line, 2);
    assert_eq!((l.grid, l.block), (Dim3::linear(128), Dim3::linear(384)));
    assert_eq!(l.counter(Counter::RegistersPerThread), Some(168.0));
}

#[test]
fn malformed_value_names_file_line_and_field() {
    let path = fixture("malformed.csv");
    let err = read_ncu_csv(&path).expect_err("bad value");
    match &err {
        NcuCsvError::Field {
            path: p,
            line,
            field,
            found,
            ..
        } => {
            assert_eq!(p, &path);
            assert_eq!(*line, 9);
            assert_eq!(field, "dram__bytes_read.sum");
            assert_eq!(found, "33,55X,432");
        }
        other => panic!("{other:?}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains("malformed.csv") && msg.contains("line 9"),
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
    let short =
        "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"nsecond\"\n\"0\",\"k\"\n";
    assert!(matches!(
        parse_ncu_csv(short, p),
        Err(NcuCsvError::Syntax { line: 3, .. })
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
            assert_eq!(field, "gpu__time_duration.sum")
        }
        other => panic!("{other:?}"),
    }
    let no_launch = "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"0\",\"k\",\"10\"\n";
    assert!(matches!(
        parse_ncu_csv(no_launch, p),
        Err(NcuCsvError::Syntax { line: 2, .. })
    ));
    let bad_dims = "\"ID\",\"Kernel Name\",\"Block Size\",\"Grid Size\"\n\"0\",\"k\",\"(32, 1)\",\"(4, 1, 1)\"\n";
    assert!(matches!(
        parse_ncu_csv(bad_dims, p),
        Err(NcuCsvError::Field { line: 2, .. })
    ));
    assert!(matches!(
        parse_ncu_csv("\"ID\",\"Kernel Name\"\n", p),
        Err(NcuCsvError::Empty { .. })
    ));
}

#[test]
fn the_metrics_argument_lists_every_counter() {
    let arg = tally_gpu::cuda::ncu_metrics_arg();
    assert_eq!(arg.split(',').count(), Counter::ALL.len());
    assert!(arg.contains("lts__t_bytes.sum"));
}
