//! Whether an NVIDIA driver is there, and the few raw driver calls the
//! CUDA paths share. cudarc loads libcuda at run time and panics when it is
//! missing, so every path that touches the GPU asks [`driver_present`]
//! first and returns [`NO_DRIVER`] as its error instead.

use cudarc::driver::sys;

use super::tools::TOOLKIT_MAJOR;
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
    supports(v, what, needed)?;
    Ok(v)
}

/// Whether a driver of CUDA version `found` has what `what` needs (CUDA
/// `needed`): the [`require_driver`] decision, without a driver.
pub fn supports(found: u32, what: &'static str, needed: u32) -> Result<()> {
    if found < needed {
        return Err(GpuError::DriverTooOld {
            what,
            needed: version_string(needed),
            found: version_string(found),
        });
    }
    Ok(())
}

/// The first driver release with everything the green-context paths call:
/// green contexts came in CUDA 12.4, but a stream inside one
/// (`cuGreenCtxStreamCreate`) only in 12.5.
pub const GREEN_CONTEXT_DRIVER: u32 = 12050;

/// Fail unless a driver of CUDA version `found` loads the cubins the
/// pinned compiler tools make: ptxas of CUDA major `TOOLKIT_MAJOR` emits
/// cubins for drivers of that major or newer (minor-version compatibility
/// holds within a major, not across), so a CUDA 12 driver cannot load
/// them. The error names both versions and the remedies.
pub fn supports_cubins(found: u32) -> Result<()> {
    let needed = TOOLKIT_MAJOR * 1000;
    if found < needed {
        return Err(GpuError::ToolkitNewerThanDriver {
            toolkit: format!("{TOOLKIT_MAJOR}.x"),
            driver: version_string(found),
        });
    }
    Ok(())
}

/// [`supports_cubins`] for the installed driver.
pub fn require_cubin_driver() -> Result<u32> {
    let v = driver_version()?;
    supports_cubins(v)?;
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_print_as_cuda_releases() {
        assert_eq!(version_string(12040), "12.4");
        assert_eq!(version_string(13020), "13.2");
    }

    /// What each driver release from 12.4 to 13.x may run: green
    /// contexts with streams from 12.5, event timing (`_v2`) from 12.8, the
    /// CUDA 13 tools' cubins from 13.0; every refusal names both versions.
    #[test]
    fn each_driver_release_gets_what_it_supports_and_a_named_refusal_otherwise() {
        use crate::cuda::timer::EVENT_TIMING_DRIVER;
        let cases = [
            (12040, false, false, false),
            (12050, true, false, false),
            (12080, true, true, false),
            (12090, true, true, false),
            (13000, true, true, true),
            (13020, true, true, true),
            (13050, true, true, true),
        ];
        for (v, green, events, cubins) in cases {
            assert_eq!(
                supports(v, "green contexts", GREEN_CONTEXT_DRIVER).is_ok(),
                green,
                "{v}"
            );
            assert_eq!(
                supports(v, "event timing", EVENT_TIMING_DRIVER).is_ok(),
                events,
                "{v}"
            );
            assert_eq!(supports_cubins(v).is_ok(), cubins, "{v}");
        }
        let e = supports(12040, "green contexts", GREEN_CONTEXT_DRIVER).unwrap_err();
        assert!(
            e.to_string().contains("12.5") && e.to_string().contains("12.4"),
            "{e}"
        );
        let e = supports_cubins(12080).unwrap_err().to_string();
        assert!(
            e.contains("CUDA 12.8") && e.contains("13.x") && e.contains("R580"),
            "{e}"
        );
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
