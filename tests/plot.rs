//! `tally plot`: the figures of a profile dataset, an eval result and a
//! `tally run` directory, each a valid 1200x800 PNG (or SVG) with content;
//! an unknown directory and a damaged dataset exit 2 naming the file.

use std::path::{Path, PathBuf};

use tally_e2e::{fails_with, profile_small, read_csv, stdout_of, tally};

/// The paths `tally plot` printed, one a line, each existing.
fn plot(dir: &Path, extra: &[&str]) -> Vec<PathBuf> {
    let out = stdout_of(tally().arg("plot").arg(dir).args(extra));
    let files: Vec<PathBuf> = out.lines().map(PathBuf::from).collect();
    for f in &files {
        assert!(f.is_file(), "`{}` was printed but not written", f.display());
    }
    files
}

/// Decode a PNG: 1200x800, and more than a handful of distinct pixels
/// (axes, text and data, not a blank canvas).
fn check_png(path: &Path) {
    let decoder = png::Decoder::new(std::fs::File::open(path).expect("png file"));
    let mut reader = decoder.read_info().expect("a PNG header");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("a PNG frame");
    assert_eq!((info.width, info.height), (1200, 800), "{}", path.display());
    let px = info.color_type.samples();
    let pixels = &buf[..info.buffer_size()];
    let non_white = pixels
        .chunks(px)
        .filter(|p| p.iter().take(3).any(|&c| c < 250))
        .count();
    let total = pixels.len() / px;
    assert!(
        non_white > total / 50,
        "`{}` is nearly blank: {non_white} of {total} pixels drawn",
        path.display()
    );
    let mut colors: Vec<&[u8]> = pixels.chunks(px).collect();
    colors.sort_unstable();
    colors.dedup();
    assert!(
        colors.len() > 8,
        "`{}` has {} colours",
        path.display(),
        colors.len()
    );
}

fn check_svg(path: &Path) {
    let text = std::fs::read_to_string(path).expect("svg text");
    assert!(text.contains("<svg"), "{}", path.display());
    assert!(text.contains(r#"width="1200""#) && text.contains(r#"height="800""#));
    let elements = text.matches("<rect").count()
        + text.matches("<polyline").count()
        + text.matches("<circle").count();
    assert!(elements > 20, "`{}` has {elements} shapes", path.display());
    assert!(text.contains("<text"), "`{}` has no text", path.display());
}

fn names(files: &[PathBuf]) -> Vec<String> {
    files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn dataset_plots_as_png_and_svg() {
    let tmp = tempfile::tempdir().unwrap();
    let ds = tmp.path().join("bert");
    profile_small("bert-base", "60", &ds);
    let files = plot(&ds, &[]);
    assert_eq!(
        names(&files),
        [
            "pair-slowdown-heatmap.png",
            "standalone-scaling.png",
            "slowdown-by-class.png"
        ]
    );
    assert!(files.iter().all(|f| f.starts_with(ds.join("plots"))));
    files.iter().for_each(|f| check_png(f));
    let svg_dir = tmp.path().join("svg");
    let svgs = plot(&ds, &["--svg", "-o", svg_dir.to_str().unwrap()]);
    assert_eq!(svgs.len(), 3);
    svgs.iter().for_each(|f| check_svg(f));
}

#[test]
fn eval_and_run_plots() {
    let tmp = tempfile::tempdir().unwrap();
    let (bert, gpt2) = (tmp.path().join("bert"), tmp.path().join("gpt2"));
    profile_small("bert-base", "40", &bert);
    profile_small("gpt2", "40", &gpt2);
    let eval = tmp.path().join("eval");
    stdout_of(
        tally()
            .args(["eval", "--split", "random", "--gbm-trees", "20", "--out"])
            .arg(&eval)
            .arg("--data")
            .args([&bert, &gpt2]),
    );
    let files = plot(&eval, &[]);
    assert_eq!(names(&files), ["eval-parity.png", "eval-error-cdf.png"]);
    files.iter().for_each(|f| check_png(f));

    let run = tmp.path().join("run");
    stdout_of(
        tally()
            .args(["run", "--hp", "bert-base:infer", "--be", "resnet50:train"])
            .args(["--compare", "mps,tally", "--duration", "200ms", "--out"])
            .arg(&run),
    );
    let files = plot(&run, &["--svg"]);
    assert_eq!(names(&files), ["hp-latency-cdf.svg", "policy-bars.svg"]);
    files.iter().for_each(|f| check_svg(f));

    // With --timeline, the engine's SM occupancy by job is drawn too.
    let run = tmp.path().join("run-timeline");
    stdout_of(
        tally()
            .args(["run", "--hp", "bert-base:infer", "--be", "resnet50:train"])
            .args([
                "--compare",
                "mps,tally",
                "--duration",
                "200ms",
                "--load",
                "0.5",
                "--timeline",
                "4",
            ])
            .arg("--out")
            .arg(&run),
    );
    let (header, rows) = read_csv(&run.join("timeline.csv"));
    assert_eq!(header, ["policy", "time_ms", "job", "sm_count"]);
    for policy in ["mps", "tally"] {
        for job in ["bert-base:infer", "resnet50:train"] {
            assert!(
                rows.iter().any(|r| &r[0] == policy && &r[2] == job),
                "no {policy} / {job} rows"
            );
        }
    }
    assert!(rows.iter().all(|r| r[1].parse::<f64>().unwrap() <= 4.0));
    let files = plot(&run, &[]);
    assert_eq!(
        names(&files),
        ["hp-latency-cdf.png", "policy-bars.png", "sm-timeline.png"]
    );
    files.iter().for_each(|f| check_png(f));
}

#[test]
fn unknown_directory_exits_2_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("nothing-here");
    std::fs::create_dir(&dir).unwrap();
    fails_with(
        tally().arg("plot").arg(&dir),
        &["nothing-here", "is not a profile dataset"],
    );
}

#[test]
fn damaged_dataset_exits_2_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let ds = tmp.path().join("bert");
    profile_small("bert-base", "20", &ds);
    let pairs = ds.join("pairs.csv");
    let text = std::fs::read_to_string(&pairs).unwrap();
    std::fs::write(&pairs, &text[..text.len() / 2]).unwrap();
    fails_with(tally().arg("plot").arg(&ds), &["pairs.csv"]);
}

#[test]
fn tally_table_output_plots_simulated_against_published() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("tally-table");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(
        dir.join("side_by_side.csv"),
        "hp,be,policy,p99_slowdown,system_throughput,published_p99_slowdown,\
         published_system_throughput,hp_throughput,be_throughput\n\
         bert,resnet50,mps,3.1,1.6,2.9,1.7,1.0,0.6\n\
         bert,resnet50,tally,1.1,1.5,1.06,1.6,1.0,0.5\n\
         bert,gpt2,mps,2.5,1.5,2.2,1.55,1.0,0.5\n\
         bert,gpt2,tally,1.05,1.45,1.04,1.5,1.0,0.45\n\
         bert,gpt2,tgs,1.2,1.2,,,1.0,0.2\n",
    )
    .unwrap();
    let files = plot(&dir, &[]);
    assert_eq!(names(&files), ["table-parity.png"]);
    files.iter().for_each(|f| check_png(f));
}
