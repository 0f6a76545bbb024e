//! The CUDA side of the device layer. Works without a GPU: locating the
//! compiler tools, NVRTC (CUDA C to PTX), ptxas (a kernel's real resource
//! usage), reading Nsight Compute CSV (`ncu`) and `nvidia-smi -q -x`
//! output, deriving a `GpuSpec` from a device description, and the
//! green-context split arithmetic. Needs a driver (and answers NO_DRIVER
//! without one, checked before any call): listing devices, creating
//! green-context partitions, the retained primary context (`primary`) and
//! event timing of launches alone and beside a co-runner (`timer`). The
//! backend that measures kernels as library stand-ins is in tally-kernels.

pub mod derive;
pub mod device;
pub mod driver;
pub mod green;
pub mod ncu;
pub mod nvrtc;
pub mod primary;
pub mod ptxas;
pub mod smi;
pub mod timer;
pub mod timing;
pub mod tools;

pub use derive::spec_from_device;
pub use device::{describe_device, list_devices, DeviceDescription};
pub use driver::{driver_present, driver_version, require_driver, NO_DRIVER};
pub use ncu::{
    display_name, metrics_list, ncu_command_for, ncu_flags_for, ncu_metrics_arg, parse_ncu_csv,
    read_ncu_csv, spec_from_report, DerivedSpec, KernelCoverage, NcuCsvError, NcuLaunch, NcuLayout,
    NcuReport, SpecNotDerived,
};
pub use nvrtc::{compile_to_ptx, Arch};
pub use ptxas::{assemble, assemble_cubin, parse_ptxas_info, EntryResources};
pub use timing::TimingConfig;
pub use tools::{locate_nvrtc, locate_ptxas, ToolError};
