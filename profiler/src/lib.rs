//! placeholder
pub mod campaign;
mod lower;
pub mod model;
pub mod model_file;
pub mod summary;
pub mod zoo;
