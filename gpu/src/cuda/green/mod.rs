//! Green contexts (CUDA 12.4+ driver API): SM partitions inside one process.
//! `split` holds the arithmetic (which partition sizes the driver can give
//! on a device, and whether a requested split fits), testable anywhere;
//! `partition` the driver calls, wrapped in owning types that release what
//! they created in the right order.

mod partition;
mod probe;
mod split;

pub use partition::{create_partitions, device_sm_rule, GreenPartition};
pub use probe::{probe_kernel_spec, CopyProbe};
pub use split::{plan_split, SmRule};
