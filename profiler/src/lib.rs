//! tally-profiler: the model zoo and user model files, the lowering of
//! operators to the kernels real libraries launch, profiling campaigns
//! (standalone and pair sweeps), the `ncu` import, the Orion profile
//! export, the interference summary of datasets and the row-by-row
//! comparison of two datasets.

pub mod campaign;
pub mod compare;
mod lower;
pub mod model;
pub mod model_file;
pub mod ncu_import;
pub mod orion_export;
pub mod summary;
pub mod zoo;

pub use model::{
    Dtype, Model, ModelError, ModelParams, OpKind, Operator, OptimizerKind, ParamsOverride, Phase,
};
pub use model_file::{load_model_file, parse_model_file};
pub use zoo::resolve_model;
