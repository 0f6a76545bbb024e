//! Whether an NVIDIA driver is there, and the few raw driver calls the
//! CUDA paths share. cudarc loads libcuda at run time and panics when it is
//! missing, so every path that touches the GPU asks [`driver_present`]
//! first and returns [`NO_DRIVER`] as its error instead.

use cudarc::driver::sys;

use crate::error::{GpuError, Result};

/// The error every GPU path gives on a machine without a driver.
pub use crate::error::NO_DRIVER;

/// Whether libcuda can be loaded.
#[allow(unsafe_code)]
pub fn driver_present() -> bool {
    // SAFETY: only tries to open the library; nothing is called in it.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

/// A driver result as a `Result`, naming the call that failed.
pub fn check(call: &'static str, r: sys::CUresult) -> Result<()> {
    if r == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(GpuError::Driver {
            call,
            code: format!("{r:?}"),
        })
    }
}

/// The CUDA version the driver supports, as the driver encodes it
/// (12040 = 12.4), after `cuInit`. The NO_DRIVER error without a driver.
#[allow(unsafe_code)]
pub fn driver_version() -> Result<u32> {
    if !driver_present() {
        return Err(GpuError::NoDriver);
    }
    let mut v: std::ffi::c_int = 0;
    // SAFETY: libcuda is present (checked above); cuInit and
    // cuDriverGetVersion exist in every driver and only write `v`.
    unsafe {
        check("cuInit", sys::cuInit(0))?;
        check("cuDriverGetVersion", sys::cuDriverGetVersion(&mut v))?;
    }
    Ok(u32::try_from(v).unwrap_or(0))
}

/// `12040` as `12.4`.
pub fn version_string(v: u32) -> String {
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

/// Fail unless the driver supports CUDA `needed` (encoded like
/// [`driver_version`]); `what` names the feature in the message. Calling a
/// symbol an older driver lacks would make cudarc panic, so this comes first.
pub fn require_driver(what: &'static str, needed: u32) -> Result<u32> {
    let v = driver_version()?;
    if v < needed {
        return Err(GpuError::DriverTooOld {
            what,
            needed: version_string(needed),
            found: version_string(v),
        });
    }
    Ok(v)
}

/// The first driver release with green contexts (CUDA 12.4).
pub const GREEN_CONTEXT_DRIVER: u32 = 12040;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_print_as_cuda_releases() {
        assert_eq!(version_string(12040), "12.4");
        assert_eq!(version_string(13020), "13.2");
    }

    #[test]
    fn without_a_driver_every_query_is_the_no_driver_error() {
        if driver_present() {
            return;
        }
        assert!(matches!(driver_version(), Err(GpuError::NoDriver)));
        let e = require_driver("green contexts", GREEN_CONTEXT_DRIVER).unwrap_err();
        assert_eq!(e.to_string(), NO_DRIVER);
    }
}
