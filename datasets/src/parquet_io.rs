//! Parquet encoding of a table through polars: typed columns in, typed
//! columns out, with the same column names as the CSV.

use std::fs::File;
use std::path::Path;

use polars::prelude::{
    Column, DataFrame, DataType, ParquetReader, ParquetWriter, PolarsError, SerReader,
};

use crate::atomic::write_atomic;
use crate::error::{DatasetError, Result};
use crate::table::{Cells, OutTable, RawTable, Values};

fn parquet_err(path: &Path) -> impl Fn(PolarsError) -> DatasetError + '_ {
    move |e| DatasetError::Parquet {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// Write `table` to `path` atomically.
pub(crate) fn write_parquet(path: &Path, table: OutTable) -> Result<()> {
    let columns: Vec<Column> = table
        .columns
        .into_iter()
        .map(|(name, values)| match values {
            Values::Str(v) => Column::new(name.into(), v),
            Values::U32(v) => Column::new(name.into(), v),
            Values::F64(v) => Column::new(name.into(), v),
        })
        .collect();
    let mut df = DataFrame::new(table.height, columns).map_err(parquet_err(path))?;
    write_atomic(path, |w| {
        ParquetWriter::new(&mut *w)
            .finish(&mut df)
            .map_err(parquet_err(path))?;
        Ok(())
    })
}

/// Read `path` into a `RawTable` keeping each column's type.
pub(crate) fn read_parquet(path: &Path) -> Result<RawTable> {
    let file = File::open(path).map_err(|e| DatasetError::io(path, e))?;
    let err = parquet_err(path);
    let df = ParquetReader::new(file).finish().map_err(&err)?;
    let mut names = Vec::with_capacity(df.width());
    let mut columns = Vec::with_capacity(df.width());
    for column in df.columns() {
        names.push(column.name().to_string());
        let cells = match column.dtype() {
            DataType::String => Cells::Text(
                column
                    .str()
                    .map_err(&err)?
                    .iter()
                    .map(|s| s.map(str::to_string))
                    .collect(),
            ),
            DataType::UInt32 | DataType::UInt64 => Cells::UInt(
                column
                    .cast(&DataType::UInt64)
                    .map_err(&err)?
                    .u64()
                    .map_err(&err)?
                    .iter()
                    .collect(),
            ),
            DataType::Int32 | DataType::Int64 => Cells::Int(
                column
                    .cast(&DataType::Int64)
                    .map_err(&err)?
                    .i64()
                    .map_err(&err)?
                    .iter()
                    .collect(),
            ),
            DataType::Float32 | DataType::Float64 => Cells::Float(
                column
                    .cast(&DataType::Float64)
                    .map_err(&err)?
                    .f64()
                    .map_err(&err)?
                    .iter()
                    .collect(),
            ),
            other => {
                return Err(DatasetError::Parquet {
                    path: path.to_path_buf(),
                    message: format!(
                        "column `{}` has type {other}; expected a string, integer or float column",
                        column.name()
                    ),
                })
            }
        };
        columns.push(cells);
    }
    RawTable::new(path, names, columns, df.height(), None)
}
