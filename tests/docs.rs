//! The documentation cannot rot: every fenced block of README.md and
//! docs/*.md whose info string is `sh runnable` is run, in order, in one
//! fresh directory per page against the built `tally` (on the simulator,
//! `tally run` shortened through `TALLY_DURATION`), and must exit 0 and
//! leave every file it names with `creates=` or `--out` / `-o`. Prose may
//! name only files the checkout has and run directories a block of the
//! same page writes.

use std::path::{Path, PathBuf};
use std::process::Command;

use tally_e2e::{repo, tally_binary};

/// One fenced block: where it starts, its info string and its text.
#[derive(Debug)]
struct Block {
    line: usize,
    info: String,
    body: String,
}

/// The fenced blocks of a Markdown page, in order (``` fences only, as the
/// docs use; an unclosed fence is an error, not a silently dropped block).
fn blocks(page: &Path) -> Vec<Block> {
    let text = std::fs::read_to_string(page).expect("doc page");
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    for (i, line) in text.lines().enumerate() {
        let fence = line.trim_start().strip_prefix("```");
        match (&mut open, fence) {
            (None, Some(info)) => {
                open = Some(Block {
                    line: i + 1,
                    info: info.trim().to_string(),
                    body: String::new(),
                })
            }
            (Some(_), Some(_)) => out.push(open.take().unwrap()),
            (Some(b), None) => {
                b.body.push_str(line);
                b.body.push('\n');
            }
            (None, None) => {}
        }
    }
    assert!(
        open.is_none(),
        "{}: a fence opened at line {} is never closed",
        page.display(),
        open.unwrap().line
    );
    out
}

fn is_runnable(b: &Block) -> bool {
    let mut words = b.info.split_whitespace();
    words.next() == Some("sh") && words.next() == Some("runnable")
}

/// The files a runnable block must leave: `creates=a,b` in its info string,
/// and every `--out X` / `-o X` / `--out-dir X` argument of its commands.
fn expected_outputs(b: &Block) -> Vec<String> {
    let mut out: Vec<String> = b
        .info
        .split_whitespace()
        .filter_map(|w| w.strip_prefix("creates="))
        .flat_map(|list| list.split(',').map(String::from))
        .collect();
    let words: Vec<&str> = b.body.split_whitespace().collect();
    for pair in words.windows(2) {
        if matches!(pair[0], "--out" | "-o" | "--out-dir") && !pair[1].starts_with('-') {
            out.push(pair[1].to_string());
        }
    }
    out
}

/// README.md and every docs/*.md, sorted.
fn pages() -> Vec<PathBuf> {
    let root = repo();
    let mut pages = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// A fresh directory that looks like a clone: every top-level entry of the
/// repository linked in (scripts, example models, fixtures), but none of
/// its outputs (`runs/`, `target/`), and `tally` first on PATH.
fn fresh_clone_dir() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    for entry in std::fs::read_dir(repo()).expect("repo").flatten() {
        let name = entry.file_name();
        let skip = ["runs", "target", ".git"];
        if skip.iter().any(|s| name == *s) {
            continue;
        }
        std::os::unix::fs::symlink(entry.path(), dir.path().join(&name)).expect("symlink");
    }
    let bin = dir.path().join(".bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(tally_binary(), bin.join("tally")).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    (dir, path)
}

#[test]
fn every_runnable_block_of_the_docs_runs_and_writes_what_it_says() {
    let mut ran = 0;
    for page in pages() {
        let runnable: Vec<Block> = blocks(&page).into_iter().filter(is_runnable).collect();
        if runnable.is_empty() {
            continue;
        }
        let (dir, path) = fresh_clone_dir();
        for b in &runnable {
            let out = Command::new("bash")
                .arg("-euo")
                .arg("pipefail")
                .arg("-c")
                .arg(&b.body)
                .current_dir(dir.path())
                .env("PATH", &path)
                .env("TALLY_DURATION", "1s")
                .env("TALLY_QUIET", "true")
                .env_remove("TALLY_GPU")
                .env_remove("TALLY_BACKEND")
                .output()
                .expect("bash runs");
            assert!(
                out.status.success(),
                "{} line {}: the block exited {}\n--- block\n{}--- stdout\n{}--- stderr\n{}",
                page.display(),
                b.line,
                out.status,
                b.body,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            for file in expected_outputs(b) {
                assert!(
                    dir.path().join(&file).exists(),
                    "{} line {}: the block says it writes `{file}`, which is missing",
                    page.display(),
                    b.line
                );
            }
            ran += 1;
        }
    }
    // The README's tour and every guide page have runnable blocks: a
    // change that drops the marker everywhere must not pass silently.
    assert!(ran >= 20, "only {ran} runnable blocks found");
}

/// Backticked or linked paths that name a file of this repository.
fn cited_repo_paths(text: &str) -> Vec<String> {
    let roots = [
        "gpu/",
        "kernels/",
        "profiler/",
        "datasets/",
        "predictor/",
        "sched-runtime/",
        "gpu-engine/",
        "plot/",
        "cli/",
        "tests/",
        "scripts/",
        "docs/",
        "data/",
        "notebooks/",
    ];
    let mut out = Vec::new();
    for piece in text.split(['`', '(', ')', ' ', '\n', '[', ']', '\'']) {
        let p = piece.trim_end_matches([',', '.', ':', ';']);
        if roots.iter().any(|r| p.starts_with(r)) && !p.contains(['*', '<', '{', '$']) {
            // `file.rs:line` and `DIR/` cite the file and the folder.
            let p = p.split(':').next().unwrap();
            out.push(p.trim_end_matches('/').to_string());
        }
    }
    out
}

#[test]
fn the_docs_cite_only_files_the_checkout_has() {
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let base = page.parent().unwrap();
        for cited in cited_repo_paths(&text) {
            // Relative to the repository root, or to the page (docs/ links).
            let exists = repo().join(&cited).exists() || base.join(&cited).exists();
            assert!(
                exists,
                "{} cites `{cited}`, which the checkout lacks",
                page.display()
            );
        }
    }
}

#[test]
fn every_run_directory_the_docs_name_is_written_by_a_command_of_the_same_page() {
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let in_blocks: String = blocks(&page).iter().map(|b| b.body.as_str()).collect();
        for (i, _) in text.match_indices("runs/") {
            let name: String = text[i..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || "/_.-".contains(*c))
                .collect();
            let name = name.trim_end_matches(['.', '/']);
            if name == "runs" {
                continue;
            }
            // The directory itself or its parent run appears in a command.
            let run = name.split('/').take(2).collect::<Vec<_>>().join("/");
            assert!(
                in_blocks.contains(&run),
                "{} names `{name}`, which no command of the page writes",
                page.display()
            );
        }
    }
}

#[test]
fn the_doc_checks_themselves_find_what_they_look_for() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("p.md");
    std::fs::write(
        &page,
        "intro `gpu/src/lib.rs:10` and `nothere/x`\n\
         ```sh runnable creates=a.txt\ntally profile --out runs/x\n```\n\
         ```text\n$ not run\n```\n",
    )
    .unwrap();
    let bs = blocks(&page);
    assert_eq!(bs.len(), 2);
    assert!(is_runnable(&bs[0]) && !is_runnable(&bs[1]));
    assert_eq!(bs[0].line, 2);
    assert_eq!(expected_outputs(&bs[0]), ["a.txt", "runs/x"]);
    let cited = cited_repo_paths(&std::fs::read_to_string(&page).unwrap());
    assert_eq!(cited, ["gpu/src/lib.rs"]);
}
