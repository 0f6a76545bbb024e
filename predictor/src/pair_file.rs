//! The `--pairs` file of `tally predict`: a CSV of operator pairs to
//! predict, columns `op_a,op_b` and optionally `sm_a,sm_b` (one split
//! instead of every allowed one).

use std::path::Path;

use crate::error::{PredictorError, Result};

/// One requested pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairRequest {
    pub op_a: String,
    pub op_b: String,
    pub split: Option<(u32, u32)>,
}

/// Read a pairs file; errors name the file, line and field.
pub fn read_pair_requests(path: &Path) -> Result<Vec<PairRequest>> {
    let bad = |message: String| PredictorError::Input(format!("`{}`: {message}", path.display()));
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_path(path)
        .map_err(|e| bad(e.to_string()))?;
    let header = reader.headers().map_err(|e| bad(e.to_string()))?.clone();
    let column = |name: &str| header.iter().position(|h| h == name);
    let (Some(a), Some(b)) = (column("op_a"), column("op_b")) else {
        return Err(bad(format!(
            "header must name columns `op_a` and `op_b` (and optionally `sm_a`, `sm_b`), got `{}`",
            header.iter().collect::<Vec<_>>().join(",")
        )));
    };
    let sm = match (column("sm_a"), column("sm_b")) {
        (Some(x), Some(y)) => Some((x, y)),
        (None, None) => None,
        _ => return Err(bad("give both `sm_a` and `sm_b` or neither".to_string())),
    };
    let mut out = Vec::new();
    for (i, record) in reader.records().enumerate() {
        // Line numbers as an editor shows them: the header is line 1.
        let line = i + 2;
        let record = record.map_err(|e| bad(format!("line {line}: {e}")))?;
        let field = |j: usize, name: &str| -> Result<String> {
            match record.get(j) {
                Some(v) if !v.is_empty() => Ok(v.to_string()),
                _ => Err(bad(format!("line {line}: `{name}` is empty"))),
            }
        };
        let count = |j: usize, name: &str| -> Result<u32> {
            let v = field(j, name)?;
            v.parse().map_err(|_| {
                bad(format!(
                    "line {line}: `{name}` is `{v}`, expected a whole number of SMs"
                ))
            })
        };
        let split = match sm {
            Some((x, y)) => Some((count(x, "sm_a")?, count(y, "sm_b")?)),
            None => None,
        };
        out.push(PairRequest {
            op_a: field(a, "op_a")?,
            op_b: field(b, "op_b")?,
            split,
        });
    }
    if out.is_empty() {
        return Err(bad("no pairs (only a header)".to_string()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Vec<PairRequest>> {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("pairs.csv");
        std::fs::write(&path, text).expect("write");
        read_pair_requests(&path)
    }

    #[test]
    fn reads_pairs_with_and_without_splits() {
        let p = read("op_a,op_b\n0,3\n2, 5\n").expect("pairs");
        assert_eq!(p.len(), 2);
        assert_eq!(p[1].op_b, "5");
        assert_eq!(p[1].split, None);
        let p = read("op_b,op_a,sm_a,sm_b\n3,0,64,64\n").expect("pairs");
        assert_eq!(p[0].op_a, "0");
        assert_eq!(p[0].split, Some((64, 64)));
    }

    #[test]
    fn errors_name_the_line_and_field() {
        let e = read("op_a,op_b,sm_a,sm_b\n0,3,64,64\n0,3,x,64\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("line 3") && e.contains("sm_a") && e.contains("`x`"),
            "{e}"
        );
        let e = read("a,b\n0,1\n").unwrap_err().to_string();
        assert!(e.contains("op_a"), "{e}");
        let e = read("op_a,op_b\n").unwrap_err().to_string();
        assert!(e.contains("no pairs"), "{e}");
    }
}
