//! Green-context partitions through the raw driver API (cudarc has no safe
//! wrapper for them): the device's SM resource is split group by group
//! (`cuDevSmResourceSplitByCount`, one group of the wanted size each time,
//! the remainder feeding the next split), each group becomes a resource
//! descriptor, a green context and a non-blocking stream on it.
//!
//! Release order: a [`GreenPartition`] destroys its stream before its green
//! context (work queued on a stream belongs to that context). Resource
//! descriptors have no release call in the driver API: the driver owns them
//! for the life of the process. The primary context of the device stays
//! with whoever retained it (cudarc's `CudaContext`).
//!
//! Not run on a GPU in this repository's CI (no GPU there); the calls
//! follow the CUDA 12.4 / 13 driver API reference, and every entry checks
//! for a driver and its version first, so without one the result is the
//! NO_DRIVER error, never a panic inside cudarc.

use cudarc::driver::sys;

use super::split::{plan_split, SmRule};
use crate::cuda::driver::{check, driver_present, require_driver, GREEN_CONTEXT_DRIVER};
use crate::error::{GpuError, Result};

/// One SM partition: a green context and a stream that runs on its SMs.
#[derive(Debug)]
pub struct GreenPartition {
    green: sys::CUgreenCtx,
    context: sys::CUcontext,
    stream: sys::CUstream,
    sm_count: u32,
}

impl GreenPartition {
    pub fn sm_count(&self) -> u32 {
        self.sm_count
    }

    /// The green context as an ordinary context (for `cuCtxSetCurrent`,
    /// module loads, allocations).
    pub fn context(&self) -> sys::CUcontext {
        self.context
    }

    /// The stream whose kernels run on this partition's SMs.
    pub fn stream(&self) -> sys::CUstream {
        self.stream
    }

    /// The SM count the driver reports for this green context (what a
    /// check compares with `sm_count`).
    #[allow(unsafe_code)]
    pub fn reported_sm_count(&self) -> Result<u32> {
        // SAFETY: plain-data out-parameter, zero is a valid value.
        let mut res: sys::CUdevResource = unsafe { std::mem::zeroed() };
        // SAFETY: `green` is a live green context owned by `self`.
        unsafe {
            check(
                "cuGreenCtxGetDevResource",
                sys::cuGreenCtxGetDevResource(
                    self.green,
                    &mut res,
                    sys::CUdevResourceType::CU_DEV_RESOURCE_TYPE_SM,
                ),
            )?
        };
        Ok(sm_fields(&res).0)
    }
}

impl Drop for GreenPartition {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        // SAFETY: both handles were created by `create_partitions`, are
        // owned only by this value and destroyed once, stream first.
        // Errors cannot be reported from drop; a failing destroy leaks.
        unsafe {
            let _ = sys::cuStreamDestroy_v2(self.stream);
            let _ = sys::cuGreenCtxDestroy(self.green);
        }
    }
}

/// The device handle of `ordinal`, after the driver and version checks.
#[allow(unsafe_code)]
fn device(ordinal: usize) -> Result<sys::CUdevice> {
    if !driver_present() {
        return Err(GpuError::NoDriver);
    }
    require_driver("green contexts", GREEN_CONTEXT_DRIVER)?;
    let ordinal = std::ffi::c_int::try_from(ordinal)
        .map_err(|_| GpuError::Partition(format!("device ordinal {ordinal} is out of range")))?;
    let mut dev: sys::CUdevice = 0;
    // SAFETY: the driver is initialised by `require_driver`; writes `dev`.
    unsafe { check("cuDeviceGet", sys::cuDeviceGet(&mut dev, ordinal))? };
    Ok(dev)
}

/// The whole SM resource of `dev`.
#[allow(unsafe_code)]
fn sm_resource(dev: sys::CUdevice) -> Result<sys::CUdevResource> {
    // SAFETY: `CUdevResource` is plain data (integers, a union of integers
    // and a pointer) for which all-zero bytes are a valid value.
    let mut res: sys::CUdevResource = unsafe { std::mem::zeroed() };
    // SAFETY: the driver (>= 12.4, checked by `device`) fills `res`.
    unsafe {
        check(
            "cuDeviceGetDevResource",
            sys::cuDeviceGetDevResource(
                dev,
                &mut res,
                sys::CUdevResourceType::CU_DEV_RESOURCE_TYPE_SM,
            ),
        )?
    };
    Ok(res)
}

/// SM count of an SM resource and the granularity the driver reports
/// (zero on CUDA 12 drivers, which do not fill those fields).
#[allow(unsafe_code)]
fn sm_fields(res: &sys::CUdevResource) -> (u32, u32, u32) {
    // SAFETY: the resource is of type SM (requested so), so `sm` is the
    // union member the driver wrote; the rest of it is zero-initialised.
    let sm = unsafe { res.__bindgen_anon_1.sm };
    (sm.smCount, sm.minSmPartitionSize, sm.smCoscheduledAlignment)
}

/// SM count and partition rule of device `ordinal`.
pub fn device_sm_rule(ordinal: usize, cc_major: u32) -> Result<(u32, SmRule)> {
    let res = sm_resource(device(ordinal)?)?;
    let (total, min, align) = sm_fields(&res);
    Ok((total, SmRule::for_device(cc_major, min, align)))
}

/// Green-context partitions of `sizes` SMs (disjoint, in order) on device
/// `ordinal` of compute capability major `cc_major`. Dropping the returned
/// values releases them.
#[allow(unsafe_code)]
pub fn create_partitions(
    ordinal: usize,
    cc_major: u32,
    sizes: &[u32],
) -> Result<Vec<GreenPartition>> {
    let dev = device(ordinal)?;
    let mut input = sm_resource(dev)?;
    let (total, min, align) = sm_fields(&input);
    let sizes = plan_split(total, SmRule::for_device(cc_major, min, align), sizes)?;
    if sizes == [total] {
        return Err(GpuError::Partition(format!(
            "{total} SMs is the whole device: that is its primary context, not a green context"
        )));
    }
    let mut out = Vec::with_capacity(sizes.len());
    for sms in sizes {
        // SAFETY (all calls below): plain-data out-parameters, zero-initialised
        // as above; every handle is checked before use and handed to a
        // `GreenPartition` the moment it exists, so an error later in the
        // loop drops (releases) what was made.
        let mut group: sys::CUdevResource = unsafe { std::mem::zeroed() };
        let mut remaining: sys::CUdevResource = unsafe { std::mem::zeroed() };
        let mut groups: std::ffi::c_uint = 1;
        unsafe {
            check(
                "cuDevSmResourceSplitByCount",
                sys::cuDevSmResourceSplitByCount(
                    &mut group,
                    &mut groups,
                    &input,
                    &mut remaining,
                    0,
                    sms,
                ),
            )?;
        }
        let (given, _, _) = sm_fields(&group);
        if groups != 1 || given != sms {
            return Err(GpuError::Partition(format!(
                "the driver split off {groups} group(s) of {given} SMs for a request of {sms}"
            )));
        }
        let mut desc: sys::CUdevResourceDesc = std::ptr::null_mut();
        let mut green: sys::CUgreenCtx = std::ptr::null_mut();
        unsafe {
            check(
                "cuDevResourceGenerateDesc",
                sys::cuDevResourceGenerateDesc(&mut desc, &mut group, 1),
            )?;
            check(
                "cuGreenCtxCreate",
                sys::cuGreenCtxCreate(
                    &mut green,
                    desc,
                    dev,
                    sys::CUgreenCtxCreate_flags::CU_GREEN_CTX_DEFAULT_STREAM as u32,
                ),
            )?;
        }
        let mut part = GreenPartition {
            green,
            context: std::ptr::null_mut(),
            stream: std::ptr::null_mut(),
            sm_count: sms,
        };
        unsafe {
            check(
                "cuCtxFromGreenCtx",
                sys::cuCtxFromGreenCtx(&mut part.context, green),
            )?;
            check(
                "cuGreenCtxStreamCreate",
                sys::cuGreenCtxStreamCreate(
                    &mut part.stream,
                    green,
                    sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32,
                    0,
                ),
            )?;
        }
        out.push(part);
        input = remaining;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_driver_partitions_are_the_no_driver_error() {
        if driver_present() {
            return;
        }
        assert!(matches!(
            create_partitions(0, 9, &[64, 64]),
            Err(GpuError::NoDriver)
        ));
        assert!(matches!(device_sm_rule(0, 9), Err(GpuError::NoDriver)));
    }
}
