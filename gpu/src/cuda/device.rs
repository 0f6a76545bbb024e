//! Real devices: what the driver API says about each one (SMs, limits,
//! memory, clocks, PCI id, compute mode), enriched with what only
//! `nvidia-smi -q -x` tells (MIG mode, maximum clocks, driver release).
//! `DeviceDescription` is plain data, so deriving a `GpuSpec` from it
//! (`derive.rs`) is testable without a GPU.

use cudarc::driver::sys;
use cudarc::driver::sys::CUdevice_attribute as A;
use serde::Serialize;

use super::driver::{check, driver_version, version_string, GREEN_CONTEXT_DRIVER};
use super::green::{device_sm_rule, SmRule};
use super::smi::{run_nvidia_smi, SmiLog};
use crate::error::{GpuError, Result};

/// One device as tally sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeviceDescription {
    pub ordinal: usize,
    pub name: String,
    pub cc_major: u32,
    pub cc_minor: u32,
    pub sm_count: u32,
    pub memory_bytes: u64,
    /// Maximum SM clock (nvidia-smi's max_clocks, else the driver's rate).
    pub clock_mhz: f64,
    /// Maximum memory clock.
    pub memory_clock_mhz: f64,
    pub memory_bus_bits: u32,
    pub l2_bytes: u64,
    pub max_threads_per_sm: u32,
    pub max_blocks_per_sm: u32,
    pub max_threads_per_block: u32,
    pub registers_per_sm: u32,
    pub shared_mem_per_sm: u32,
    /// With the opt-in attribute (what a kernel can ask for).
    pub max_shared_mem_per_block: u32,
    pub reserved_shared_mem_per_block: u32,
    /// `0000:19:00.0`.
    pub pci_bus_id: String,
    /// `Default`, `Exclusive_Process`, `Prohibited` (nvidia-smi's name when
    /// it runs, else the driver's number as a name).
    pub compute_mode: String,
    /// `Enabled` / `Disabled`; `None` without nvidia-smi or on GPUs without MIG.
    pub mig_mode: Option<String>,
    /// The driver release (`580.95.05`), from nvidia-smi.
    pub driver_release: Option<String>,
    /// The CUDA version the driver supports (`13.0`).
    pub cuda_version: String,
    /// Green-context granularity: minimum SMs and step.
    pub partition_min_sms: u32,
    pub partition_step: u32,
    /// Where the partition rule came from: the driver's SM resource, or the
    /// per-architecture rule and why (an older driver, or a device whose SM
    /// resource cannot be queried: MIG instances, older parts).
    pub partition_rule: String,
}

impl DeviceDescription {
    pub fn compute_capability(&self) -> String {
        format!("{}.{}", self.cc_major, self.cc_minor)
    }

    /// Peak DRAM bandwidth, GB/s: memory clock x 2 (double data rate) x
    /// bus width in bytes.
    pub fn dram_gbps(&self) -> f64 {
        self.memory_clock_mhz * 1e6 * 2.0 * f64::from(self.memory_bus_bits) / 8.0 / 1e9
    }
}

/// Every device the driver sees; the NO_DRIVER error without a driver.
pub fn list_devices() -> Result<Vec<DeviceDescription>> {
    let version = driver_version()?;
    let smi = run_nvidia_smi();
    let count = device_count()?;
    (0..count)
        .map(|i| describe(i, version, smi.as_ref()))
        .collect()
}

/// Device `ordinal`; an error names the ordinals that exist.
pub fn describe_device(ordinal: usize) -> Result<DeviceDescription> {
    let version = driver_version()?;
    let count = device_count()?;
    if ordinal >= count {
        return Err(GpuError::Driver {
            call: "cuDeviceGet",
            code: format!("no device {ordinal}: the driver sees {count}"),
        });
    }
    describe(ordinal, version, run_nvidia_smi().as_ref())
}

#[allow(unsafe_code)]
fn device_count() -> Result<usize> {
    let mut n: std::ffi::c_int = 0;
    // SAFETY: called after `driver_version`, which loaded and initialised
    // the driver; writes `n` only.
    unsafe { check("cuDeviceGetCount", sys::cuDeviceGetCount(&mut n))? };
    Ok(usize::try_from(n).unwrap_or(0))
}

/// The driver-API facts of one device (raw calls: cudarc's safe API would
/// create a context, which listing devices should not).
#[allow(unsafe_code)]
fn describe(ordinal: usize, version: u32, smi: Option<&SmiLog>) -> Result<DeviceDescription> {
    let mut dev: sys::CUdevice = 0;
    let mut name = [0 as std::ffi::c_char; 256];
    let mut memory: usize = 0;
    // SAFETY: the driver is initialised (`driver_version` ran); each call
    // writes only its out-parameter, `name` has the length passed.
    unsafe {
        check(
            "cuDeviceGet",
            sys::cuDeviceGet(&mut dev, ordinal as std::ffi::c_int),
        )?;
        check(
            "cuDeviceGetName",
            sys::cuDeviceGetName(name.as_mut_ptr(), name.len() as std::ffi::c_int, dev),
        )?;
        check(
            "cuDeviceTotalMem",
            sys::cuDeviceTotalMem_v2(&mut memory, dev),
        )?;
    }
    // SAFETY: `cuDeviceGetName` writes a NUL-terminated string into `name`
    // (zero-initialised, so a NUL exists even if it wrote nothing).
    let name = unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) }
        .to_string_lossy()
        .into_owned();
    let attr = |a: A| -> Result<u32> {
        let mut v: std::ffi::c_int = 0;
        // SAFETY: as above; writes `v` only.
        unsafe {
            check(
                "cuDeviceGetAttribute",
                sys::cuDeviceGetAttribute(&mut v, a, dev),
            )?
        };
        Ok(u32::try_from(v).unwrap_or(0))
    };
    let cc_major = attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
    let pci_bus_id = format!(
        "{:04x}:{:02x}:{:02x}.0",
        attr(A::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID)?,
        attr(A::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID)?,
        attr(A::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID)?
    );
    let from_smi = smi.and_then(|s| s.gpu(&pci_bus_id));
    let (rule, partition_rule) =
        partition_rule(version, cc_major, || device_sm_rule(ordinal, cc_major));
    let compute_mode = match from_smi.and_then(|g| g.compute_mode.clone()) {
        Some(m) => m,
        None => match attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_MODE)? {
            0 => "Default".to_string(),
            2 => "Prohibited".to_string(),
            3 => "Exclusive_Process".to_string(),
            other => format!("mode {other}"),
        },
    };
    Ok(DeviceDescription {
        ordinal,
        name,
        cc_major,
        cc_minor: attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        sm_count: attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        memory_bytes: memory as u64,
        clock_mhz: from_smi
            .and_then(|g| g.max_sm_clock_mhz)
            .unwrap_or(f64::from(attr(A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)?) / 1000.0),
        memory_clock_mhz: from_smi
            .and_then(|g| g.max_mem_clock_mhz)
            .unwrap_or(f64::from(attr(A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)?) / 1000.0),
        memory_bus_bits: attr(A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)?,
        l2_bytes: u64::from(attr(A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?),
        max_threads_per_sm: attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?,
        max_blocks_per_sm: attr(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR)?,
        max_threads_per_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
        registers_per_sm: attr(A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR)?,
        shared_mem_per_sm: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)?,
        max_shared_mem_per_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?,
        reserved_shared_mem_per_block: attr(
            A::CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK,
        )?,
        pci_bus_id,
        compute_mode,
        mig_mode: from_smi.and_then(|g| g.mig_mode.clone()),
        driver_release: smi.and_then(|s| s.driver_version.clone()),
        cuda_version: version_string(version),
        partition_min_sms: rule.min_sms,
        partition_step: rule.align,
        partition_rule,
    })
}

/// The partition rule of a device: the driver's SM resource where it can
/// be queried (`query`), else the per-architecture rule, with where it came
/// from. A device whose resource query fails (MIG instances and older parts
/// answer `CUDA_ERROR_NOT_SUPPORTED`) is still listed and usable.
pub fn partition_rule(
    version: u32,
    cc_major: u32,
    query: impl FnOnce() -> Result<(u32, SmRule)>,
) -> (SmRule, String) {
    let fallback = SmRule::for_device(cc_major, 0, 0);
    if version < GREEN_CONTEXT_DRIVER {
        return (
            fallback,
            format!(
                "architecture rule (driver CUDA {} has no green contexts)",
                version_string(version)
            ),
        );
    }
    match query() {
        Ok((_, rule)) => (rule, "driver SM resource".to_string()),
        Err(e) => (fallback, format!("architecture rule ({e})")),
    }
}

#[cfg(test)]
mod partition_rule_tests {
    use super::*;

    #[test]
    fn an_unsupported_resource_query_falls_back_to_the_architecture_rule() {
        let not_supported = || {
            Err(GpuError::Driver {
                call: "cuDeviceGetDevResource",
                code: "CUDA_ERROR_NOT_SUPPORTED".into(),
            })
        };
        let (rule, from) = partition_rule(13000, 9, not_supported);
        assert_eq!(rule, SmRule::for_device(9, 0, 0));
        assert!(from.contains("CUDA_ERROR_NOT_SUPPORTED"), "{from}");
        let (rule, from) = partition_rule(12040, 8, || unreachable!("not asked below 12.5"));
        assert_eq!(rule, SmRule::for_device(8, 0, 0));
        assert!(from.contains("12.4"), "{from}");
        let driver = SmRule::for_device(9, 8, 8);
        let (rule, from) = partition_rule(13000, 9, || Ok((132, driver)));
        assert_eq!((rule, from.as_str()), (driver, "driver SM resource"));
    }
}
