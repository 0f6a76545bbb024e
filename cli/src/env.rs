//! Environment variables the CLI reads, in one place.

/// Default GPU for commands that take `--gpu`.
pub const TALLY_GPU: &str = "TALLY_GPU";
/// Default backend (`sim` or `cuda`).
pub const TALLY_BACKEND: &str = "TALLY_BACKEND";
/// Disable progress bars when set to any value.
pub const TALLY_QUIET: &str = "TALLY_QUIET";
