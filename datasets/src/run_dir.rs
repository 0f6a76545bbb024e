//! `RunDir`: the file names inside one run directory, so no other module
//! spells them.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::DatasetError;
use crate::format::Format;

/// The three tables of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableName {
    Ops,
    Standalone,
    Pairs,
}

impl TableName {
    pub const ALL: [TableName; 3] = [TableName::Ops, TableName::Standalone, TableName::Pairs];

    pub fn stem(&self) -> &'static str {
        match self {
            TableName::Ops => "ops",
            TableName::Standalone => "standalone",
            TableName::Pairs => "pairs",
        }
    }
}

/// A run directory and the paths of its files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunDir {
    root: PathBuf,
    /// Whether it held a complete run when claimed.
    had_run: bool,
}

/// An exclusive advisory lock on a run directory while a command writes
/// it, so two writers never interleave their files; released when dropped
/// (or when the process ends, however it ends).
#[derive(Debug)]
pub struct WriteLock {
    _file: fs::File,
}

impl RunDir {
    pub const RUN_JSON: &'static str = "run.json";

    /// The lock file `lock_for_write` holds.
    pub const LOCK: &'static str = ".tally.lock";

    pub fn new(root: impl Into<PathBuf>) -> RunDir {
        let root = root.into();
        let had_run = root.join(Self::RUN_JSON).exists();
        RunDir { root, had_run }
    }

    /// The run directory `root` for a new run: refused if it already
    /// holds a complete one (its `run.json`), unless `force`. The one place
    /// every command that writes a run directory asks.
    pub fn claim(root: impl Into<PathBuf>, force: bool) -> Result<RunDir, DatasetError> {
        let dir = RunDir::new(root);
        if dir.had_run && !force {
            return Err(DatasetError::RunExists { dir: dir.root });
        }
        Ok(dir)
    }

    /// Take the directory for writing: create it, hold an exclusive lock on
    /// its lock file (refused at once while another command holds it), and
    /// refuse when a complete run appeared in it since it was claimed
    /// (another command finished writing there meanwhile). Hold the lock
    /// until every file is written.
    pub fn lock_for_write(&self) -> Result<WriteLock, DatasetError> {
        fs::create_dir_all(&self.root).map_err(|e| DatasetError::io(&self.root, e))?;
        let path = self.root.join(Self::LOCK);
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| DatasetError::io(&path, e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                return Err(DatasetError::Busy {
                    dir: self.root.clone(),
                })
            }
            Err(fs::TryLockError::Error(e)) => return Err(DatasetError::io(&path, e)),
        }
        if !self.had_run && self.run_json().exists() {
            return Err(DatasetError::Busy {
                dir: self.root.clone(),
            });
        }
        Ok(WriteLock { _file: file })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Refuse `out` as an output of a command that reads this run: the
    /// run's directory itself or one of its files (`run.json`, a table in
    /// either encoding), which writing would destroy. Paths are compared
    /// after resolving links and `..`; an `out` that does not exist yet is
    /// resolved through its parent.
    pub fn refuse_as_output(&self, out: &Path) -> Result<(), DatasetError> {
        let Some(root) = resolved(&self.root) else {
            return Ok(());
        };
        let Some(target) = resolved(out) else {
            return Ok(());
        };
        let mut own = vec![root.clone(), root.join(Self::RUN_JSON)];
        for t in TableName::ALL {
            own.push(root.join(format!("{}.csv", t.stem())));
            own.push(root.join(format!("{}.parquet", t.stem())));
        }
        if own.contains(&target) {
            return Err(DatasetError::OutputOverInput {
                out: out.to_path_buf(),
                input: self.root.clone(),
            });
        }
        Ok(())
    }

    /// `run.json`, written last: its presence marks a complete run.
    pub fn run_json(&self) -> PathBuf {
        self.root.join(Self::RUN_JSON)
    }

    pub fn csv(&self, table: TableName) -> PathBuf {
        self.root.join(format!("{}.csv", table.stem()))
    }

    pub fn parquet(&self, table: TableName) -> PathBuf {
        self.root.join(format!("{}.parquet", table.stem()))
    }

    /// The path of `table` in a single encoding (`Both` means CSV, the one
    /// readers prefer).
    pub fn table(&self, table: TableName, format: Format) -> PathBuf {
        match format {
            Format::Parquet => self.parquet(table),
            Format::Csv | Format::Both => self.csv(table),
        }
    }

    pub fn ops_csv(&self) -> PathBuf {
        self.csv(TableName::Ops)
    }

    pub fn standalone_csv(&self) -> PathBuf {
        self.csv(TableName::Standalone)
    }

    pub fn pairs_csv(&self) -> PathBuf {
        self.csv(TableName::Pairs)
    }

    pub fn ops_parquet(&self) -> PathBuf {
        self.parquet(TableName::Ops)
    }

    pub fn standalone_parquet(&self) -> PathBuf {
        self.parquet(TableName::Standalone)
    }

    pub fn pairs_parquet(&self) -> PathBuf {
        self.parquet(TableName::Pairs)
    }

    /// Whether the run finished writing (its `run.json` exists).
    pub fn is_complete(&self) -> bool {
        self.run_json().is_file()
    }
}

/// `path` with links and `..` resolved; through its parent when it does
/// not exist yet. `None` when neither exists.
fn resolved(path: &Path) -> Option<PathBuf> {
    if let Ok(p) = path.canonicalize() {
        return Some(p);
    }
    let name = path.file_name()?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Some(parent.canonicalize().ok()?.join(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_writer_at_a_time_and_no_run_appearing_behind_a_claim() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        let claimed = RunDir::claim(&dir, false).unwrap();
        let held = claimed.lock_for_write().unwrap();
        let again = RunDir::claim(&dir, false).unwrap();
        assert!(matches!(
            again.lock_for_write(),
            Err(DatasetError::Busy { .. })
        ));
        drop(held);
        // Another command finished a run here after this one claimed it.
        fs::write(dir.join(RunDir::RUN_JSON), "{}").unwrap();
        assert!(matches!(
            again.lock_for_write(),
            Err(DatasetError::Busy { .. })
        ));
        // A run that was there when claimed with --force is replaced.
        let forced = RunDir::claim(&dir, true).unwrap();
        assert!(forced.lock_for_write().is_ok());
    }
}
