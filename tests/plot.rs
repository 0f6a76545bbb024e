//! `tally plot`: the figures of a profile dataset, an eval result and a
//! `tally run` directory, each a valid 1200x800 PNG (or SVG) with content;
//! an unknown directory and a damaged dataset exit 2 naming the file.

use std::path::{Path, PathBuf};

use tally_e2e::{fails_with, profile_small, stdout_of, tally};

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
