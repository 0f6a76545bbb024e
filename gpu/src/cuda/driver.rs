//! Whether an NVIDIA driver is there. cudarc loads libcuda at run time and
//! panics when it is missing, so every path that touches the GPU asks here
//! first and returns [`NO_DRIVER`] as its error instead.

/// The error every GPU path gives on a machine without a driver.
pub const NO_DRIVER: &str = "no NVIDIA driver found: use --backend sim (the simulated GPU)";

/// Whether libcuda can be loaded.
#[allow(unsafe_code)]
pub fn driver_present() -> bool {
    // SAFETY: only tries to open the library; nothing is called in it.
    unsafe { cudarc::driver::sys::is_culib_present() }
}
