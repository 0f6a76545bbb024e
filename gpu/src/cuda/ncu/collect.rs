//! What to run to collect counters: the `--metrics` list of tally's
//! counters, and the `ncu` command line that measures a given set of them
//! (for messages that name what is missing and how to get it).

use crate::counters::Counter;

/// The `--metrics` list to give `ncu` so that its CSV holds every counter
/// tally's datasets carry.
pub fn ncu_metrics_arg() -> String {
    metrics_list(Counter::ALL)
}

/// `counters` as one comma-separated `--metrics` value.
pub fn metrics_list(counters: &[Counter]) -> String {
    counters
        .iter()
        .map(Counter::name)
        .collect::<Vec<_>>()
        .join(",")
}

/// The ncu flags that collect `counters` on the raw page, in the units
/// tally reads: `--csv --page raw --print-units base --metrics a,b`.
pub fn ncu_flags_for(counters: &[Counter]) -> String {
    format!(
        "--csv --page raw --print-units base --metrics {}",
        metrics_list(counters)
    )
}

/// The whole command line that profiles `program` (a placeholder such as
/// `python train.py` when it is not known) for `counters`.
pub fn ncu_command_for(counters: &[Counter], program: &str) -> String {
    format!("ncu {} {program} > prof.csv", ncu_flags_for(counters))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_names_exactly_the_counters() {
        let cmd = ncu_command_for(
            &[Counter::DramBytesRead, Counter::L2Bytes],
            "python train.py",
        );
        assert_eq!(
            cmd,
            "ncu --csv --page raw --print-units base --metrics \
             dram__bytes_read.sum,lts__t_bytes.sum python train.py > prof.csv"
        );
        assert_eq!(ncu_metrics_arg().split(',').count(), Counter::ALL.len());
    }
}
