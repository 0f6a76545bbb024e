//! The CUDA side of the device layer. What is here works without a GPU:
//! locating the compiler tools, compiling CUDA C to PTX with NVRTC, and
//! assembling PTX with ptxas to learn a kernel's real resource usage, and
//! the check for an NVIDIA driver that every GPU path makes first.

pub mod derive;
pub mod device;
pub mod driver;
pub mod green;
pub mod ncu;
pub mod nvrtc;
pub mod ptxas;
pub mod smi;
pub mod tools;

pub use derive::spec_from_device;
pub use device::{describe_device, list_devices, DeviceDescription};
pub use driver::{driver_present, driver_version, require_driver, NO_DRIVER};
pub use ncu::{
    ncu_metrics_arg, parse_ncu_csv, read_ncu_csv, NcuCsvError, NcuLaunch, NcuLayout, NcuReport,
};
pub use nvrtc::{compile_to_ptx, Arch};
pub use ptxas::{assemble, assemble_cubin, parse_ptxas_info, EntryResources};
pub use tools::{locate_nvrtc, locate_ptxas, ToolError};
