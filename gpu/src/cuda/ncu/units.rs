//! Units: ncu prints each metric's unit (`nsecond`, `byte`, `%`, or with
//! `--print-units auto`, `usecond`, `Kbyte`, ...). Times become
//! nanoseconds and sizes bytes, the units tally's counters are in; a unit
//! of the wrong kind for a counter is an error rather than a silent
//! misreading.

use crate::counters::Counter;

/// What a counter measures, as far as its unit is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quantity {
    Time,
    Bytes,
    Percent,
    /// Counts, cycles, ratios: taken as printed.
    Plain,
}

fn quantity(c: Counter) -> Quantity {
    let name = c.name();
    if c == Counter::DurationNs {
        Quantity::Time
    } else if name.ends_with(".pct") || name.contains(".pct_of_peak") {
        Quantity::Percent
    } else if c == Counter::L2Bytes || name.starts_with("dram__bytes") {
        Quantity::Bytes
    } else {
        Quantity::Plain
    }
}

/// Prefix factor of `unit` before `base`: SI prefixes (`K` = 1000), binary
/// ones (`Ki` = 1024) should a file carry them. `--print-units base`
/// avoids prefixes altogether.
fn prefixed(unit: &str, base: &str) -> Option<f64> {
    let prefix = unit.strip_suffix(base)?;
    Some(match prefix {
        "" => 1.0,
        "K" | "k" => 1e3,
        "Ki" => 1024.0,
        "Mi" => 1024.0 * 1024.0,
        "Gi" => 1024.0 * 1024.0 * 1024.0,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "m" => 1e-3,
        "u" => 1e-6,
        "n" => 1e-9,
        _ => return None,
    })
}

/// The factor that turns a value of `c` printed in `unit` into tally's unit,
/// or a description of the units that were expected.
pub(crate) fn factor(c: Counter, unit: &str) -> Result<f64, &'static str> {
    let unit = unit.trim();
    match quantity(c) {
        // An empty unit means the file had no units row: take it as base.
        _ if unit.is_empty() => Ok(1.0),
        Quantity::Time => prefixed(unit, "second")
            .map(|f| f * 1e9)
            .ok_or("a time unit (nsecond, usecond, msecond, second)"),
        Quantity::Bytes => prefixed(unit, "byte").ok_or("a size unit (byte, Kbyte, Mbyte, Gbyte)"),
        Quantity::Percent => {
            if unit == "%" {
                Ok(1.0)
            } else {
                Err("`%`")
            }
        }
        Quantity::Plain => {
            // Sizes per block (`byte/block`, `Kbyte/block`) scale like bytes.
            let head = unit.split('/').next().unwrap_or(unit);
            Ok(prefixed(head, "byte").unwrap_or(1.0))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_to_tally_units_and_rejects_the_wrong_kind() {
        assert_eq!(factor(Counter::DurationNs, "nsecond"), Ok(1.0));
        assert_eq!(factor(Counter::DurationNs, "usecond"), Ok(1000.0));
        assert_eq!(factor(Counter::DurationNs, "msecond"), Ok(1e6));
        assert_eq!(factor(Counter::DramBytesRead, "Mbyte"), Ok(1e6));
        assert_eq!(factor(Counter::L2Bytes, "byte"), Ok(1.0));
        assert_eq!(factor(Counter::L2Bytes, "Kibyte"), Ok(1024.0));
        assert_eq!(factor(Counter::L2HitRatePct, "%"), Ok(1.0));
        assert_eq!(factor(Counter::SharedMemDynamic, "Kbyte/block"), Ok(1e3));
        assert_eq!(factor(Counter::GridSize, ""), Ok(1.0));
        assert_eq!(factor(Counter::CyclesElapsed, "cycle"), Ok(1.0));
        assert!(factor(Counter::DurationNs, "byte").is_err());
        assert!(factor(Counter::DramBytesWrite, "cycle").is_err());
        assert!(factor(Counter::SmThroughputPct, "byte").is_err());
    }
}
