//! `Dataset`: a whole run directory in memory, and the order in which it is
//! written (tables first, `run.json` last) and read (`run.json` first, then
//! the tables, then cross-checks).

use std::fs;
use std::path::{Path, PathBuf};

use crate::csv_io::{read_csv, write_csv};
use crate::error::{DatasetError, Result};
use crate::format::Format;
use crate::ops::{self, OpRecord};
use crate::pairs::{self, PairRow};
use crate::parquet_io::{read_parquet, write_parquet};
use crate::run_dir::{RunDir, TableName};
use crate::run_info::{RunCounts, RunInfo, SCHEMA_VERSION};
use crate::standalone::{self, StandaloneTable};
use crate::table::{OutTable, RawTable};
use crate::validate::{check, Origin, Tables};

/// One profiling run.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    /// Directory it was read from (informational; `write` takes its own).
    pub dir: PathBuf,
    pub info: RunInfo,
    pub ops: Vec<OpRecord>,
    pub standalone: StandaloneTable,
    pub pairs: Vec<PairRow>,
}

impl Dataset {
    /// Row counts of the tables as they are now.
    pub fn counts(&self) -> RunCounts {
        RunCounts {
            ops: self.ops.len() as u64,
            standalone_rows: self.standalone.rows.len() as u64,
            pair_rows: self.pairs.len() as u64,
        }
    }

    /// The checks a reader makes, on the in-memory tables; errors name the
    /// CSV file the table would be written to and the 1-based row.
    pub fn validate(&self) -> Result<()> {
        self.validate_as(&RunDir::new(&self.dir), Format::Csv)
    }

    fn validate_as(&self, run: &RunDir, format: Format) -> Result<()> {
        let ops_path = run.table(TableName::Ops, format);
        let st_path = run.table(TableName::Standalone, format);
        let pairs_path = run.table(TableName::Pairs, format);
        let origin = |path| Origin { path, lines: None };
        check(&Tables {
            ops: (&self.ops, origin(&ops_path)),
            standalone: (&self.standalone, origin(&st_path)),
            pairs: (&self.pairs, origin(&pairs_path)),
        })
    }

    /// Write the run to `dir` (created if missing) in `format`.
    ///
    /// The tables are validated first, so what is written reads back. Any
    /// existing `run.json` is removed before anything else and the new one is
    /// written last: a directory without `run.json` is an incomplete run.
    /// The written `run.json` carries this crate's `SCHEMA_VERSION`, the
    /// actual row `counts` and the `formats` written, whatever `self.info`
    /// says, so provenance cannot disagree with the data.
    pub fn write(&self, dir: impl AsRef<Path>, format: Format) -> Result<()> {
        let run = RunDir::new(dir.as_ref());
        self.validate_as(&run, format)?;
        fs::create_dir_all(run.root()).map_err(|e| DatasetError::io(run.root(), e))?;
        remove_if_present(&run.run_json())?;
        for table in TableName::ALL {
            // Tables of the encoding not being written belong to an older
            // run; leaving them would pair stale data with new provenance.
            if !format.writes_csv() {
                remove_if_present(&run.csv(table))?;
            }
            if !format.writes_parquet() {
                remove_if_present(&run.parquet(table))?;
            }
        }
        let tables: [(TableName, OutTable); 3] = [
            (TableName::Ops, ops::encode(&self.ops)),
            (TableName::Standalone, standalone::encode(&self.standalone)),
            (TableName::Pairs, pairs::encode(&self.pairs)),
        ];
        for (name, table) in tables {
            if format.writes_csv() {
                write_csv(&run.csv(name), &table)?;
            }
            if format.writes_parquet() {
                write_parquet(&run.parquet(name), table)?;
            }
        }
        let mut info = self.info.clone();
        info.schema_version = SCHEMA_VERSION;
        info.counts = self.counts();
        info.formats = format.encodings();
        info.write(&run.run_json())
    }

    /// Read and validate the run in `dir`: `run.json` first (a missing one
    /// means the run is incomplete), then the tables — CSV when the run wrote
    /// CSV, otherwise Parquet.
    pub fn read(dir: impl AsRef<Path>) -> Result<Dataset> {
        let run = RunDir::new(dir.as_ref());
        let info = RunInfo::read(&run.run_json())?;
        let format = encoding_to_read(&run, &info);
        let load = |table: TableName| -> Result<RawTable> {
            let path = run.table(table, format);
            if !path.is_file() {
                return Err(DatasetError::MissingFile {
                    why: format!(
                        "`{}` lists formats [{}]",
                        run.run_json().display(),
                        info.formats.join(", ")
                    ),
                    path,
                });
            }
            match format {
                Format::Parquet => read_parquet(&path),
                Format::Csv | Format::Both => read_csv(&path),
            }
        };
        let ops_raw = load(TableName::Ops)?;
        let ops = ops::decode(&ops_raw)?;
        let st_raw = load(TableName::Standalone)?;
        let standalone = standalone::decode(&st_raw)?;
        let pairs_raw = load(TableName::Pairs)?;
        let pairs = pairs::decode(&pairs_raw)?;
        check(&Tables {
            ops: (&ops, origin(&ops_raw)),
            standalone: (&standalone, origin(&st_raw)),
            pairs: (&pairs, origin(&pairs_raw)),
        })?;
        let found = [
            (&ops_raw, ops.len(), info.counts.ops),
            (&st_raw, standalone.rows.len(), info.counts.standalone_rows),
            (&pairs_raw, pairs.len(), info.counts.pair_rows),
        ];
        for (raw, have, said) in found {
            if have as u64 != said {
                return Err(DatasetError::Inconsistent {
                    path: raw.path().to_path_buf(),
                    message: format!(
                        "has {have} rows but `{}` says {said}",
                        run.run_json().display()
                    ),
                });
            }
        }
        Ok(Dataset {
            dir: run.root().to_path_buf(),
            info,
            ops,
            standalone,
            pairs,
        })
    }
}

impl Dataset {
    /// Read every run in `dirs`, refusing one given twice: the same
    /// directory, or a copy of one (the same `run.json`, timestamps
    /// included). Training or scoring on a dataset twice counts its pairs
    /// twice and lets copies of one pair sit on both sides of a validation
    /// split.
    pub fn read_distinct(dirs: &[impl AsRef<Path>]) -> Result<Vec<Dataset>> {
        let mut out: Vec<Dataset> = Vec::with_capacity(dirs.len());
        let mut canonical = Vec::with_capacity(dirs.len());
        for dir in dirs {
            let dir = dir.as_ref();
            let data = Dataset::read(dir)?;
            let here = fs::canonicalize(dir).map_err(|e| DatasetError::io(dir, e))?;
            for (i, earlier) in out.iter().enumerate() {
                let why = if canonical[i] == here {
                    "the same directory".to_string()
                } else if earlier.info == data.info {
                    "the same run (identical run.json): one is a copy of the other".to_string()
                } else {
                    continue;
                };
                return Err(DatasetError::SameData {
                    first: earlier.dir.clone(),
                    second: dir.to_path_buf(),
                    why,
                });
            }
            canonical.push(here);
            out.push(data);
        }
        Ok(out)
    }
}

/// CSV if the run lists it, else Parquet if listed; a run listing neither
/// (hand-made) is read as whichever `ops` file is present, CSV first.
fn encoding_to_read(run: &RunDir, info: &RunInfo) -> Format {
    let listed = |name: &str| info.formats.iter().any(|f| f == name);
    if listed("csv") {
        Format::Csv
    } else if listed("parquet") || !run.ops_csv().is_file() {
        Format::Parquet
    } else {
        Format::Csv
    }
}

/// Where a decoded table came from, for validation messages.
fn origin(t: &RawTable) -> Origin<'_> {
    Origin {
        path: t.path(),
        lines: t.lines(),
    }
}

fn remove_if_present(path: &Path) -> Result<()> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(DatasetError::io(path, e)),
    }
}
