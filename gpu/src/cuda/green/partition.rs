//! Green-context partitions through the raw driver API (cudarc has no safe
//! wrapper for them): the device's SM resource is split once into groups
//! of the sizes' common divisor (`cuDevSmResourceSplitByCount`; the driver
//! documentation discourages splitting a split's output again), each
//! partition's run of groups becomes one resource descriptor, a green
//! context and a non-blocking stream on it. Only sizes without a valid
//! common group fall back to splitting group by group, and say so.
//!
//! Work queues: on CUDA 13.1+ drivers green contexts share the device's
//! work queue unless asked otherwise, which can serialise the two sides of
//! a pair; the descriptor then also carries a work-queue configuration with
//! the balanced green-context scope. Which scope each partition got is in
//! [`GreenPartition::provenance`].
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

use super::split::SplitPlan;
use super::split::{plan_split, SmRule};
use crate::cuda::driver::{
    check, driver_present, driver_version, require_driver, GREEN_CONTEXT_DRIVER,
};
use crate::error::{GpuError, Result};

/// One SM partition: a green context and a stream that runs on its SMs.
#[derive(Debug)]
pub struct GreenPartition {
    green: sys::CUgreenCtx,
    context: sys::CUcontext,
    stream: sys::CUstream,
    sm_count: u32,
    provenance: String,
}

impl GreenPartition {
    /// How it was made: the split and the work-queue scope (for
    /// `run.json`).
    pub fn provenance(&self) -> &str {
        &self.provenance
    }

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
    let plan = SplitPlan::for_sizes(SmRule::for_device(cc_major, min, align), &sizes);
    let (workqueue, scope) = balanced_workqueue(dev);
    let provenance = format!("{}; work queue: {scope}", plan.describe());
    let mut out = Vec::with_capacity(sizes.len());
    match &plan {
        SplitPlan::OneSplit { group_sms, groups } => {
            let wanted: u32 = groups.iter().sum();
            // SAFETY: plain-data values, zero-initialised as above.
            let mut result: Vec<sys::CUdevResource> =
                (0..wanted).map(|_| unsafe { std::mem::zeroed() }).collect();
            let mut remaining: sys::CUdevResource = unsafe { std::mem::zeroed() };
            let mut got: std::ffi::c_uint = wanted;
            // SAFETY: `result` has room for `wanted` groups; the driver
            // writes at most `got` of them and the remainder.
            unsafe {
                check(
                    "cuDevSmResourceSplitByCount",
                    sys::cuDevSmResourceSplitByCount(
                        result.as_mut_ptr(),
                        &mut got,
                        &input,
                        &mut remaining,
                        0,
                        *group_sms,
                    ),
                )?;
            }
            let wrong = result[..(got as usize).min(result.len())]
                .iter()
                .any(|g| sm_fields(g).0 != *group_sms);
            if got != wanted || wrong {
                return Err(GpuError::Partition(format!(
                    "the driver split the device into {got} group(s) for a request of {wanted} \
                     groups of {group_sms} SMs"
                )));
            }
            let mut start = 0;
            for (&n, &sms) in groups.iter().zip(&sizes) {
                let end = start + n as usize;
                out.push(green_partition(
                    dev,
                    &result[start..end],
                    workqueue,
                    sms,
                    &provenance,
                )?);
                start = end;
            }
        }
        SplitPlan::GroupByGroup => {
            for &sms in &sizes {
                // SAFETY: plain-data out-parameters, zero-initialised.
                let mut group: sys::CUdevResource = unsafe { std::mem::zeroed() };
                let mut remaining: sys::CUdevResource = unsafe { std::mem::zeroed() };
                let mut groups: std::ffi::c_uint = 1;
                // SAFETY: one group and the remainder are written.
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
                out.push(green_partition(dev, &[group], workqueue, sms, &provenance)?);
                input = remaining;
            }
        }
    }
    Ok(out)
}

/// The first driver release with work-queue scopes (CUDA 13.1).
const WORKQUEUE_DRIVER: u32 = 13010;

/// The device's work-queue configuration set to the balanced green-context
/// scope, where the driver has scopes, and which scope partitions get.
#[allow(unsafe_code)]
fn balanced_workqueue(dev: sys::CUdevice) -> (Option<sys::CUdevResource>, String) {
    match driver_version() {
        Ok(v) if v >= WORKQUEUE_DRIVER => {}
        _ => {
            return (
                None,
                "the device's (driver before CUDA 13.1 has no scopes)".into(),
            )
        }
    }
    // SAFETY: plain data; the driver (>= 13.1) fills the configuration.
    let mut wq: sys::CUdevResource = unsafe { std::mem::zeroed() };
    let queried = unsafe {
        check(
            "cuDeviceGetDevResource(WORKQUEUE_CONFIG)",
            sys::cuDeviceGetDevResource(
                dev,
                &mut wq,
                sys::CUdevResourceType::CU_DEV_RESOURCE_TYPE_WORKQUEUE_CONFIG,
            ),
        )
    };
    match queried {
        Ok(()) => {
            // The resource is of the work-queue configuration type
            // (requested so), so `wqConfig` is the member the driver wrote;
            // writing a union field needs no `unsafe`.
            wq.__bindgen_anon_1.wqConfig.sharingScope =
                sys::CUdevWorkqueueConfigScope::CU_WORKQUEUE_SCOPE_GREEN_CTX_BALANCED;
            (Some(wq), "balanced green-context scope".into())
        }
        Err(e) => (None, format!("the device's (scope not settable: {e})")),
    }
}

/// A green context on `groups` (SM groups of one split, plus the
/// work-queue configuration when there is one) with a non-blocking stream.
#[allow(unsafe_code)]
fn green_partition(
    dev: sys::CUdevice,
    groups: &[sys::CUdevResource],
    workqueue: Option<sys::CUdevResource>,
    sms: u32,
    provenance: &str,
) -> Result<GreenPartition> {
    let mut resources: Vec<sys::CUdevResource> = groups.to_vec();
    resources.extend(workqueue);
    let mut desc: sys::CUdevResourceDesc = std::ptr::null_mut();
    let mut green: sys::CUgreenCtx = std::ptr::null_mut();
    // SAFETY: `resources` holds `len` initialised resources; out-parameters
    // are checked before use; the green context is handed to a
    // `GreenPartition` at once, so a later error releases it.
    unsafe {
        check(
            "cuDevResourceGenerateDesc",
            sys::cuDevResourceGenerateDesc(
                &mut desc,
                resources.as_mut_ptr(),
                resources.len() as std::ffi::c_uint,
            ),
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
        provenance: provenance.to_string(),
    };
    // SAFETY: `green` is live and owned by `part`.
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
    Ok(part)
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
