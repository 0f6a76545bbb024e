//! Shared test support: fixture discovery and the PTX interpreter.

#![allow(dead_code)]

pub mod interp;
pub mod memory;
pub mod program;
pub mod sync_early;
pub mod threads;
pub mod values;

use std::path::PathBuf;

/// `tests/fixtures/<sub>` of this crate.
pub fn fixture_dir(sub: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(sub)
}

/// Every `.ptx` file under `tests/fixtures/{handwritten,ptx}`, sorted; the
/// NVRTC-generated ones included.
pub fn all_fixtures() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for sub in ["handwritten", "ptx"] {
        if let Ok(rd) = std::fs::read_dir(fixture_dir(sub)) {
            for e in rd.flatten() {
                let p = e.path();
                if p.extension().is_some_and(|x| x == "ptx") {
                    out.push(p);
                }
            }
        }
    }
    out.sort();
    out
}

pub fn read(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A hand-written fixture's text.
pub fn handwritten(name: &str) -> String {
    read(&fixture_dir("handwritten").join(name))
}

/// Fixtures whose file name starts with `unsupported`.
pub fn is_unsupported(path: &std::path::Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("unsupported"))
}
