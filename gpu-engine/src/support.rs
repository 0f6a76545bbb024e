//! Which policies run on a real GPU through this engine, how each differs
//! from the system it stands for when all jobs share one process, and the
//! engine settings `tally run --backend cuda` records in `run.json`.
//!
//! One process has one context per device here, so what the driver or a
//! daemon does *between* processes is not there: the time-slicing of
//! contexts of different processes, and MPS's separate clients (each with
//! its own address space and resource limits). The policies that decide
//! in the scheduler (priority streams, TGS's rate control, Orion's rule,
//! Tally's kernel configurations and preemption) are the same decisions on
//! the device as on the simulator.

/// Why `policy` cannot run on the real-GPU engine, if it cannot.
pub fn refusal(policy: &str) -> Option<&'static str> {
    match policy {
        "time-slicing" => Some(
            "time-slicing switches between processes' contexts in the driver, taking a \
             launch's blocks off the SMs mid-block; one process cannot do that to its own \
             streams (run each job as its own process to measure it)",
        ),
        "tally-predict" => Some(
            "tally-predict places BE kernels on the SMs an HP kernel does not need; on a real \
             GPU that needs both jobs in disjoint green contexts, which this engine does not \
             make yet (it launches on the whole GPU only)",
        ),
        _ => None,
    }
}

/// How `policy` runs in one process on the device (for `run.json`).
pub fn in_one_process(policy: &str) -> &'static str {
    match policy {
        "mps" => {
            "every job's stream in one context at equal priority, so kernels run concurrently \
             as under MPS; not MPS's separate clients (no per-client address space or \
             thread-percentage limit)"
        }
        "mps-priority" => {
            "the HP job's stream at the device's greatest priority, BE's at the least, in one \
             context: the block scheduler's priority as MPS clients' stream priorities use it"
        }
        "tgs" => {
            "TGS's rate control of BE launches in the scheduler, the HP stream at the \
             greatest priority; the real TGS runs in the container runtime between processes"
        }
        "orion" => "Orion's rule in the scheduler, as Orion itself runs: one process, streams at priorities",
        "tally" => {
            "Tally's policy over the transformed kernels (sliced, PTB, preemptive PTB with the \
             retreat flag), as Tally's server launches every client's kernels from one process"
        }
        _ => "not run on the device",
    }
}

/// `run.json`'s `engine_settings` of a run of `policies` on `device`: the
/// device and how it measures, and how each policy ran in one process.
pub fn engine_settings(
    device: &crate::CudaGpu,
    policies: &[String],
) -> std::collections::BTreeMap<String, String> {
    let mut out: std::collections::BTreeMap<String, String> = device
        .settings()
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    for p in policies {
        out.insert(format!("policy.{p}"), in_one_process(p).to_string());
    }
    out.insert(
        "hp_alone".into(),
        format!(
            "the HP job alone on the device on the same arrivals; --load scaled by the median \
             service of {} back-to-back requests",
            tally_sched::experiment::MEASURED_REQUESTS
        ),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policies_one_process_cannot_reproduce_are_refused_with_the_reason() {
        for p in ["time-slicing", "tally-predict"] {
            assert!(refusal(p).is_some(), "{p}");
            assert_eq!(in_one_process(p), "not run on the device");
        }
        for p in ["mps", "mps-priority", "tgs", "orion", "tally"] {
            assert_eq!(refusal(p), None, "{p}");
            assert_ne!(in_one_process(p), "not run on the device");
        }
    }
}
