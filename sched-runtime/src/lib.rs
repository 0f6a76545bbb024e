//! tally-sched: the scheduling runtime. An HP inference job and BE
//! training jobs share one GPU under a policy (time-slicing, MPS,
//! MPS with priorities, TGS, Orion, Tally, Tally with a contention
//! predictor).
//!
//! From the ground up: `kernel_config` (how a kernel is launched),
//! `engine` (the interface a policy drives, and the block-level simulated
//! GPU behind it), `config_choice` (Tally's choice of a configuration),
//! `policy` (the policy interface and one file per policy), `workload`
//! (jobs and arrivals) and `trace` (jobs from kernel traces), `runner`
//! (the run loop), `hp_alone` (the HP-alone reference), `metrics`,
//! `experiment` (a workload under several policies), `run_output`, the
//! files of `tally run`, and `published` with `side_by_side`: the
//! published A100 table and the simulated one beside it; `colocation`,
//! task latencies under co-location predicted on the same engine;
//! `host_side`, a framework's host time per launch; `real_sets`, the real
//! measurements of `data/real-contention/` beside the simulator. No CUDA
//! here: a real-GPU engine lives beside the CUDA code and implements
//! [`engine::Engine`].

pub mod arrival_file;
pub mod colocation;
pub mod config_choice;
pub mod csv_columns;
pub mod engine;
pub mod error;
pub mod experiment;
pub mod host_side;
pub mod hp_alone;
pub mod kernel_config;
pub mod metrics;
pub mod outcome;
pub mod policy;
pub mod published;
pub mod real_sets;
pub mod run_output;
pub mod runner;
pub mod side_by_side;
pub mod trace;
pub mod workload;
