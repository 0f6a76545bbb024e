//! PTX modules: parsing with source positions, and the transforms that
//! make every entry sliceable and preemptible.
//!
//! - [`lexer`]: text to positioned tokens.
//! - [`ast`]: the module tree.
//! - [`parser`]: tokens to the tree, with [`PtxError`] on malformed input.
//! - [`print`]: the tree back to PTX text (`Display`).
//! - [`walk`]: traversals the analyses and transforms share.
//! - [`transform`]: sliced, persistent (PTB) and preemptive variants, the
//!   sync-aware pass, refusals, and the per-entry summary.

pub mod ast;
pub mod error;
pub mod lexer;
pub mod parser;
pub mod print;
pub mod transform;
pub mod walk;

pub use ast::Module;
pub use error::PtxError;
pub use parser::{parse_module, parse_statements};
pub use transform::{
    analyze_module, transform_module, transform_module_skipping, EntryInfo, ModuleInfo, ParamInfo,
    Variants,
};
