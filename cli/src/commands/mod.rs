//! One module per subcommand; each turns parsed arguments into library
//! calls and prints the result.

pub mod gpus;
pub mod models;
pub mod profile;
pub mod summary;

use tally_profiler::model::ParamsOverride;

use crate::args::ModelParamArgs;

/// Model parameter flags as the profiler's override.
pub fn params_override(p: &ModelParamArgs) -> ParamsOverride {
    ParamsOverride {
        batch: p.batch,
        seq_len: p.seq,
        kv_len: p.kv,
    }
}
