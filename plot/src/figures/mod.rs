//! One module per figure kind; each holds the data it draws (computed once
//! from the owning crate's reader) and implements `Figure`.

pub mod dataset_view;
pub mod eval_error_cdf;
pub mod eval_parity;
pub mod heatmap;
pub mod policy_bars;
pub mod real_parity;
pub mod run_latency_cdf;
pub mod scaling;
pub mod slowdown_classes;
pub mod sm_timeline;
pub mod table_parity;
