//! Which of a set of counters each kernel of an export carries: what
//! `tally import-ncu FILE --print-metrics` lists, so a user sees what the
//! predictor will lack before importing, and what to add to the ncu run.

use super::NcuReport;
use crate::counters::Counter;

/// The counters of one kernel (by name) in an export.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelCoverage {
    pub kernel_name: String,
    pub launches: usize,
    /// Of the counters asked about, those every launch of the kernel has.
    pub present: Vec<Counter>,
    /// Of the counters asked about, those some launch of the kernel lacks.
    pub missing: Vec<Counter>,
}

impl NcuReport {
    /// For each kernel name (in launch order), which of `wanted` it has.
    pub fn coverage(&self, wanted: &[Counter]) -> Vec<KernelCoverage> {
        let mut out: Vec<KernelCoverage> = Vec::new();
        for l in &self.launches {
            let at = match out.iter().position(|k| k.kernel_name == l.kernel_name) {
                Some(at) => at,
                None => {
                    out.push(KernelCoverage {
                        kernel_name: l.kernel_name.clone(),
                        launches: 0,
                        present: wanted.to_vec(),
                        missing: Vec::new(),
                    });
                    out.len() - 1
                }
            };
            let k = &mut out[at];
            k.launches += 1;
            for &c in wanted {
                if l.counter(c).is_none() && !k.missing.contains(&c) {
                    k.missing.push(c);
                    k.present.retain(|p| *p != c);
                }
            }
        }
        for k in &mut out {
            // Keep the order of `wanted`.
            k.missing
                .sort_by_key(|c| wanted.iter().position(|w| w == c));
        }
        out
    }

    /// Of `wanted`, those some launch of the export lacks, in `wanted` order.
    pub fn missing_anywhere(&self, wanted: &[Counter]) -> Vec<Counter> {
        wanted
            .iter()
            .copied()
            .filter(|c| self.launches.iter().any(|l| l.counter(*c).is_none()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::ncu::parse_ncu_csv;
    use std::path::Path;

    #[test]
    fn per_kernel_presence() {
        let text = "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"dram__bytes_read.sum\"\n\
                    \"0\",\"a\",\"10\",\"5\"\n\"1\",\"b\",\"10\",\"n/a\"\n\"2\",\"a\",\"11\",\"\"\n";
        let r = parse_ncu_csv(text, Path::new("x.csv")).expect("parses");
        let wanted = [
            Counter::DurationNs,
            Counter::DramBytesRead,
            Counter::L2Bytes,
        ];
        let c = r.coverage(&wanted);
        assert_eq!(c.len(), 2);
        assert_eq!((c[0].kernel_name.as_str(), c[0].launches), ("a", 2));
        assert_eq!(c[0].present, [Counter::DurationNs]);
        assert_eq!(c[0].missing, [Counter::DramBytesRead, Counter::L2Bytes]);
        assert_eq!(
            r.missing_anywhere(&wanted),
            [Counter::DramBytesRead, Counter::L2Bytes]
        );
    }
}
