//! Units: every unit ncu prints, old and new (`nsecond` and `ns`, `Kbyte`
//! and `KB`, `cycle/second` and `Ghz`, ...), parsed into what it measures
//! and the factor to tally's unit of that quantity (nanoseconds, bytes,
//! percent, hertz, plain counts). A unit of the wrong kind for a counter is
//! an error rather than a silent misreading; a unit nobody knows is only an
//! error where a counter tally keeps is printed in it.

use crate::counters::Counter;

/// What a unit measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Quantity {
    /// A time; the factor gives nanoseconds.
    Time,
    /// A size; the factor gives bytes. `byte/block` too: a size per block.
    Bytes,
    /// A percentage (`%`).
    Percent,
    /// A frequency; the factor gives hertz (`Ghz`, `cycle/second`, ...).
    Frequency,
    /// Counts, cycles, instructions, ratios of them, or no unit at all.
    Count,
}

/// A parsed unit: what it measures and the factor to tally's unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Unit {
    pub(crate) quantity: Quantity,
    pub(crate) factor: f64,
}

/// Decimal and binary prefixes ncu puts before a base unit. ncu's sizes
/// are decimal (`Kbyte` = 1000 bytes), and so are its older `KB` / `MB`.
fn prefix_factor(prefix: &str) -> Option<f64> {
    Some(match prefix {
        "" => 1.0,
        "K" | "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "Ki" => 1024.0,
        "Mi" => 1024.0 * 1024.0,
        "Gi" => 1024.0 * 1024.0 * 1024.0,
        "m" => 1e-3,
        "u" => 1e-6,
        "n" => 1e-9,
        _ => return None,
    })
}

/// Bases of count units: they scale with a prefix (`Kinst`) but have no
/// unit tally converts to.
const COUNT_BASES: [&str; 12] = [
    "cycle",
    "inst",
    "warp",
    "block",
    "thread",
    "register",
    "SM",
    "sector",
    "request",
    "byte/cycle",
    "inst/cycle",
    "warp/cycle",
];

/// `prefix` + `base` (`Kbyte` = K + byte): the prefix's factor.
fn prefixed(unit: &str, base: &str) -> Option<f64> {
    unit.strip_suffix(base).and_then(prefix_factor)
}

/// A time unit: `nsecond`, `usecond`, `msecond`, `second` and the short
/// `ns`, `us`, `ms`, `s`.
fn time(unit: &str) -> Option<f64> {
    let short = match unit {
        "ns" => Some(1.0),
        "us" => Some(1e3),
        "ms" => Some(1e6),
        "s" => Some(1e9),
        _ => None,
    };
    short.or_else(|| prefixed(unit, "second").map(|f| f * 1e9))
}

/// A size: `byte`, `Kbyte`, ..., the short `B`, `KB`, `MB`, `GB`, and a
/// size per block (`byte/block`, `Kbyte/block`), which scales like one.
fn bytes(unit: &str) -> Option<f64> {
    let head = unit.strip_suffix("/block").unwrap_or(unit);
    prefixed(head, "byte").or_else(|| prefixed(head, "B"))
}

/// A frequency: `hz`, `Khz`, `Mhz`, `Ghz` (any case of `hz`), or cycles
/// per time unit (`cycle/second`, `cycle/nsecond`, `cycle/usecond`).
fn frequency(unit: &str) -> Option<f64> {
    if let Some(per) = unit.strip_prefix("cycle/") {
        // Cycles per nanosecond is 1e9 hertz.
        return time(per).map(|ns| 1e9 / ns);
    }
    let lower = unit.to_ascii_lowercase();
    let prefix = lower.strip_suffix("hz")?;
    match prefix {
        "" => Some(1.0),
        "k" => Some(1e3),
        "m" => Some(1e6),
        "g" => Some(1e9),
        _ => None,
    }
}

/// Parse a unit as ncu prints it; `None` for a unit this reader does not know.
pub(crate) fn parse_unit(unit: &str) -> Option<Unit> {
    let unit = unit.trim();
    let of = |quantity, factor| Some(Unit { quantity, factor });
    if unit.is_empty() {
        return of(Quantity::Count, 1.0);
    }
    if unit == "%" {
        return of(Quantity::Percent, 1.0);
    }
    if let Some(f) = time(unit) {
        return of(Quantity::Time, f);
    }
    if let Some(f) = frequency(unit) {
        return of(Quantity::Frequency, f);
    }
    if let Some(f) = bytes(unit) {
        return of(Quantity::Bytes, f);
    }
    // `register/thread`, `inst/cycle`, `Kinst`, `warp`, `SM`, ...
    let head = unit.split('/').next().unwrap_or(unit);
    COUNT_BASES
        .iter()
        .find_map(|base| prefixed(unit, base).or_else(|| prefixed(head, base)))
        .and_then(|f| of(Quantity::Count, f))
}

/// What a counter is printed in, as far as its unit is concerned.
fn expected(c: Counter) -> Quantity {
    let name = c.name();
    if c == Counter::DurationNs {
        Quantity::Time
    } else if name.ends_with(".pct") || name.contains(".pct_of_peak") {
        Quantity::Percent
    } else if c == Counter::L2Bytes
        || name.starts_with("dram__bytes")
        || name.starts_with("launch__shared_mem")
    {
        Quantity::Bytes
    } else {
        Quantity::Count
    }
}

/// What the expected quantity looks like, for messages.
fn describe(q: Quantity) -> &'static str {
    match q {
        Quantity::Time => "a time unit (ns, us, ms, nsecond, usecond, msecond, second)",
        Quantity::Bytes => "a size unit (byte, Kbyte, Mbyte, Gbyte, KB, MB, byte/block)",
        Quantity::Percent => "`%`",
        Quantity::Frequency => "a frequency unit (hz, Khz, Mhz, Ghz, cycle/second)",
        Quantity::Count => "a count unit (cycle, inst, warp, block, register/thread, or none)",
    }
}

/// The factor that turns a value of `c` printed in `unit` into tally's unit,
/// or a description of the units that were expected.
pub(crate) fn factor(c: Counter, unit: &str) -> Result<f64, &'static str> {
    let want = expected(c);
    match parse_unit(unit) {
        // An empty unit means the file had no units row: take it as base.
        _ if unit.trim().is_empty() => Ok(1.0),
        Some(u) if u.quantity == want => Ok(u.factor),
        _ => Err(describe(want)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every unit the exports in the wild carry, with what it means.
    #[test]
    fn every_listed_unit_parses_to_its_quantity_and_factor() {
        use Quantity::*;
        let cases: [(&str, Quantity, f64); 29] = [
            ("ns", Time, 1.0),
            ("nsecond", Time, 1.0),
            ("us", Time, 1e3),
            ("usecond", Time, 1e3),
            ("ms", Time, 1e6),
            ("msecond", Time, 1e6),
            ("second", Time, 1e9),
            ("byte", Bytes, 1.0),
            ("Kbyte", Bytes, 1e3),
            ("Mbyte", Bytes, 1e6),
            ("Gbyte", Bytes, 1e9),
            ("KB", Bytes, 1e3),
            ("MB", Bytes, 1e6),
            ("Kibyte", Bytes, 1024.0),
            ("byte/block", Bytes, 1.0),
            ("Kbyte/block", Bytes, 1e3),
            ("%", Percent, 1.0),
            ("hz", Frequency, 1.0),
            ("Khz", Frequency, 1e3),
            ("Mhz", Frequency, 1e6),
            ("Ghz", Frequency, 1e9),
            ("cycle/second", Frequency, 1.0),
            ("cycle/nsecond", Frequency, 1e9),
            ("cycle", Count, 1.0),
            ("inst", Count, 1.0),
            ("warp", Count, 1.0),
            ("block", Count, 1.0),
            ("register/thread", Count, 1.0),
            ("Kinst", Count, 1e3),
        ];
        for (unit, quantity, f) in cases {
            let u = parse_unit(unit).unwrap_or_else(|| panic!("`{unit}` is not understood"));
            assert_eq!(u.quantity, quantity, "{unit}");
            assert!((u.factor / f - 1.0).abs() < 1e-12, "{unit}: {}", u.factor);
        }
        assert_eq!(parse_unit("").map(|u| u.quantity), Some(Count));
        assert_eq!(parse_unit("furlong"), None);
    }

    #[test]
    fn converts_to_tally_units_and_rejects_the_wrong_kind() {
        assert_eq!(factor(Counter::DurationNs, "nsecond"), Ok(1.0));
        assert_eq!(factor(Counter::DurationNs, "us"), Ok(1000.0));
        assert_eq!(factor(Counter::DurationNs, "msecond"), Ok(1e6));
        assert_eq!(factor(Counter::DramBytesRead, "Mbyte"), Ok(1e6));
        assert_eq!(factor(Counter::DramBytesRead, "MB"), Ok(1e6));
        assert_eq!(factor(Counter::L2Bytes, "Kibyte"), Ok(1024.0));
        assert_eq!(factor(Counter::L2HitRatePct, "%"), Ok(1.0));
        assert_eq!(factor(Counter::SharedMemDynamic, "Kbyte/block"), Ok(1e3));
        assert_eq!(factor(Counter::GridSize, ""), Ok(1.0));
        assert_eq!(factor(Counter::CyclesElapsed, "cycle"), Ok(1.0));
        assert_eq!(
            factor(Counter::RegistersPerThread, "register/thread"),
            Ok(1.0)
        );
        assert_eq!(factor(Counter::OccLimitWarps, "block"), Ok(1.0));
        assert_eq!(factor(Counter::SmCount, "SM"), Ok(1.0));
        assert!(factor(Counter::DurationNs, "byte").is_err());
        assert!(factor(Counter::DurationNs, "Ghz").is_err());
        assert!(factor(Counter::DramBytesWrite, "cycle").is_err());
        assert!(factor(Counter::SmThroughputPct, "byte").is_err());
        assert!(factor(Counter::SmThroughputPct, "furlong").is_err());
    }
}
