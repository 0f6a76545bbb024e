//! Environment variables the CLI reads, in one place.

/// Default GPU for commands that take `--gpu`.
pub const TALLY_GPU: &str = "TALLY_GPU";
/// Default backend (`sim` or `cuda`).
pub const TALLY_BACKEND: &str = "TALLY_BACKEND";
/// Default of `tally run --duration` (the docs test sets it short).
pub const TALLY_DURATION: &str = "TALLY_DURATION";
/// Disable progress bars when set to `true` (`false` keeps them).
pub const TALLY_QUIET: &str = "TALLY_QUIET";
