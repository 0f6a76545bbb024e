//! `Format`: which table encodings a run writes (`--format csv|parquet|both`).

use std::fmt;
use std::str::FromStr;

use crate::error::DatasetError;

/// Table encodings written for a run. `run.json` is always JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Csv,
    Parquet,
    Both,
}

impl Format {
    pub const NAMES: [&'static str; 3] = ["csv", "parquet", "both"];

    pub fn as_str(&self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Parquet => "parquet",
            Format::Both => "both",
        }
    }

    pub fn writes_csv(&self) -> bool {
        matches!(self, Format::Csv | Format::Both)
    }

    pub fn writes_parquet(&self) -> bool {
        matches!(self, Format::Parquet | Format::Both)
    }

    /// The encodings as `run.json` lists them (`both` is two entries, so a
    /// reader can check for one without knowing about `both`).
    pub fn encodings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.writes_csv() {
            out.push("csv".to_string());
        }
        if self.writes_parquet() {
            out.push("parquet".to_string());
        }
        out
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Format {
    type Err = DatasetError;

    fn from_str(s: &str) -> Result<Format, DatasetError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "csv" => Ok(Format::Csv),
            "parquet" => Ok(Format::Parquet),
            "both" => Ok(Format::Both),
            _ => Err(DatasetError::UnknownFormat(s.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_and_rejects_others() {
        for name in Format::NAMES {
            let f: Format = name.parse().expect("valid");
            assert_eq!(f.as_str(), name);
        }
        assert_eq!("Parquet".parse::<Format>().expect("case"), Format::Parquet);
        let err = "xlsx".parse::<Format>().expect_err("invalid").to_string();
        assert!(err.contains("`xlsx`") && err.contains("both"), "{err}");
        assert_eq!(Format::Both.encodings(), ["csv", "parquet"]);
    }
}
