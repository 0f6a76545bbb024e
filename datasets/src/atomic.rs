//! Atomic file writes: write a hidden temporary file next to the target,
//! flush and fsync it, then rename it over the target. A crash leaves either
//! the old file, the new file, or a stray `.NAME.tmp-PID` that no reader
//! opens — never a truncated file under the real name.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::error::{DatasetError, Result};

/// The temporary name used while `target` is being written. It lives in the
/// same directory because `rename` is only atomic within one file system.
pub fn temp_path(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    target.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

/// Write `target` atomically; `body` fills a buffered writer. Errors from
/// `body` are returned as they are (they already name the file); I/O errors
/// here name `target`.
pub fn write_atomic<F>(target: &Path, body: F) -> Result<()>
where
    F: FnOnce(&mut BufWriter<File>) -> Result<()>,
{
    let tmp = temp_path(target);
    let result = write_and_rename(target, &tmp, body);
    if result.is_err() {
        // Best effort: the failure being reported matters more than a stray
        // temporary, which readers ignore anyway.
        let _ = fs::remove_file(&tmp);
    }
    result
}

fn write_and_rename<F>(target: &Path, tmp: &Path, body: F) -> Result<()>
where
    F: FnOnce(&mut BufWriter<File>) -> Result<()>,
{
    let file = File::create(tmp).map_err(|e| DatasetError::io(target, e))?;
    let mut writer = BufWriter::new(file);
    body(&mut writer)?;
    writer.flush().map_err(|e| DatasetError::io(target, e))?;
    let file = writer
        .into_inner()
        .map_err(|e| DatasetError::io(target, e.into_error()))?;
    // Data must be on disk before the rename makes it visible, or a power
    // loss could leave the real name pointing at an empty file.
    file.sync_all().map_err(|e| DatasetError::io(target, e))?;
    drop(file);
    fs::rename(tmp, target).map_err(|e| DatasetError::io(target, e))?;
    sync_parent(target)
}

/// Persist the rename itself by syncing the directory entry (Unix only;
/// other platforms cannot open a directory as a file).
fn sync_parent(target: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        File::open(parent)
            .and_then(|d| d.sync_all())
            .map_err(|e| DatasetError::io(parent, e))?;
    }
    #[cfg(not(unix))]
    let _ = target;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_body_leaves_no_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("x.csv");
        let err = write_atomic(&target, |w| {
            w.write_all(b"half").map_err(|e| DatasetError::io("x", e))?;
            Err(DatasetError::UnknownFormat("boom".into()))
        })
        .expect_err("body failed");
        assert!(err.to_string().contains("boom"));
        assert!(!target.exists());
        assert!(!temp_path(&target).exists());
        write_atomic(&target, |w| {
            w.write_all(b"whole").map_err(|e| DatasetError::io("x", e))
        })
        .expect("write");
        assert_eq!(fs::read_to_string(&target).expect("read"), "whole");
    }
}
