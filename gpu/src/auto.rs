//! `--gpu NAME`: a preset, a spec file, or `auto`, the spec derived from a
//! real CUDA device. This file sits above both the spec table and the CUDA
//! device layer, so `spec.rs` never reaches up into `cuda`.

use crate::cuda::{describe_device, spec_from_device};
use crate::error::Result;
use crate::spec::{GpuSpec, AUTO};

impl GpuSpec {
    /// A preset name, a path to a `.toml` spec file, or `auto`: the spec
    /// of CUDA device 0 (the NO_DRIVER error without a driver).
    pub fn resolve(name_or_path: &str) -> Result<GpuSpec> {
        GpuSpec::resolve_on(name_or_path, 0)
    }

    /// Like [`GpuSpec::resolve`], with `auto` meaning CUDA device `ordinal`.
    pub fn resolve_on(name_or_path: &str, ordinal: usize) -> Result<GpuSpec> {
        if name_or_path == AUTO {
            return describe_device(ordinal).and_then(|d| spec_from_device(&d));
        }
        GpuSpec::resolve_named(name_or_path)
    }
}
