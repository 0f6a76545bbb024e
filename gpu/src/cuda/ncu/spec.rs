//! The GPU an export was measured on, when the user names none: the compute
//! capability (the `CC` column or the `device__attribute_compute_capability_*`
//! metrics) and the SM count (`device__attribute_multiprocessor_count`, else
//! the largest `launch__sm_count` / `# SMs`) come from the file; everything
//! an export does not say (per-SM rates, L2 and DRAM figures, latencies,
//! partition rule) from the closest preset of that compute capability. What
//! cannot be derived is named, with the spec-file route to supply it.

use std::path::{Path, PathBuf};

use super::NcuReport;
use crate::counters::Counter;
use crate::spec::{GpuSpec, PRESET_NAMES};

/// A spec derived from an export, and where each part came from.
#[derive(Debug, Clone, PartialEq)]
pub struct DerivedSpec {
    pub spec: GpuSpec,
    /// Where the compute capability was read.
    pub compute_capability_from: String,
    /// Where the SM count was read.
    pub sm_count_from: String,
    /// The preset the rest was taken from.
    pub preset: String,
}

/// Why no spec could be derived: what is missing, and how to give it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "`{path}`: cannot derive the GPU spec from the export: {problem}; pass --gpu with a preset \
     (`tally gpus` lists them) or a spec file (`tally gpus --spec h100-sxm > my-gpu.toml`, edit \
     it, then --gpu my-gpu.toml)"
)]
pub struct SpecNotDerived {
    pub path: PathBuf,
    pub problem: String,
}

const CC_MAJOR: &str = "device__attribute_compute_capability_major";
const CC_MINOR: &str = "device__attribute_compute_capability_minor";
const SM_COUNT: &str = "device__attribute_multiprocessor_count";

/// The spec of the GPU `report` (read from `path`) was measured on.
pub fn spec_from_report(report: &NcuReport, path: &Path) -> Result<DerivedSpec, SpecNotDerived> {
    let fail = |problem: String| SpecNotDerived {
        path: path.to_path_buf(),
        problem,
    };
    let (cc, cc_from) = compute_capability(report).map_err(fail)?;
    let (sm_count, sm_from) = sm_count(report).ok_or_else(|| {
        fail(format!(
            "it gives compute capability {cc} but no SM count (no launch__sm_count, `# SMs` \
             or {SM_COUNT})"
        ))
    })?;
    let preset = PRESET_NAMES
        .iter()
        .filter_map(|n| GpuSpec::preset(n))
        .filter(|p| p.compute_capability == cc)
        // Closest SM count; ties go to the first preset listed.
        .min_by_key(|p| p.sm_count.abs_diff(sm_count))
        .ok_or_else(|| {
            fail(format!(
                "compute capability {cc} (from the {cc_from}) has no preset to take the per-SM \
                 rates, L2 and DRAM figures from (presets cover 7.0, 8.0, 8.9 and 9.0)"
            ))
        })?;
    let name = if preset.sm_count == sm_count {
        preset.name.clone()
    } else {
        format!("{}-{sm_count}sm", preset.name)
    };
    let spec = GpuSpec {
        name,
        sm_count,
        ..preset.clone()
    };
    spec.validate().map_err(|e| fail(e.to_string()))?;
    Ok(DerivedSpec {
        spec,
        compute_capability_from: cc_from,
        sm_count_from: sm_from,
        preset: preset.name,
    })
}

/// The one compute capability of the export's launches, and where it was read.
fn compute_capability(report: &NcuReport) -> Result<(String, String), String> {
    let mut found: Vec<String> = report
        .launches
        .iter()
        .filter_map(|l| {
            l.compute_capability.clone().or_else(|| {
                let major = l.device_attributes.get(CC_MAJOR)?;
                let minor = l.device_attributes.get(CC_MINOR)?;
                Some(format!("{major}.{minor}"))
            })
        })
        .collect();
    found.sort();
    found.dedup();
    let from = if report
        .launches
        .iter()
        .any(|l| l.compute_capability.is_some())
    {
        "`CC` column".to_string()
    } else {
        format!("{CC_MAJOR} / {CC_MINOR} metrics")
    };
    match found.as_slice() {
        [one] => Ok((one.clone(), from)),
        [] => Err(format!(
            "it names no compute capability (no `CC` column, no {CC_MAJOR} / {CC_MINOR} metrics)"
        )),
        many => Err(format!(
            "its launches ran on devices of compute capability {}",
            many.join(" and ")
        )),
    }
}

/// The device's SM count and where it was read: the device attribute, else
/// the largest launch's SM count (a partition's launches report fewer).
fn sm_count(report: &NcuReport) -> Option<(u32, String)> {
    let whole =
        |v: f64| (v >= 1.0 && v.fract() == 0.0 && v <= f64::from(u32::MAX)).then_some(v as u32);
    let attribute = report
        .launches
        .iter()
        .filter_map(|l| l.device_attributes.get(SM_COUNT).copied().and_then(whole))
        .max();
    if let Some(n) = attribute {
        return Some((n, SM_COUNT.to_string()));
    }
    let launches = report
        .launches
        .iter()
        .filter_map(|l| l.counter(Counter::SmCount).and_then(whole))
        .max()?;
    let names = report
        .mapped_from
        .iter()
        .find(|(c, _)| *c == Counter::SmCount)
        .map_or_else(
            || Counter::SmCount.name().to_string(),
            |(_, n)| n.join(", "),
        );
    Some((launches, format!("largest {names} of the launches")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::ncu::parse_ncu_csv;

    fn report(cc: &str, sms: &str) -> NcuReport {
        let text = format!(
            "\"ID\",\"Kernel Name\",\"Block Size\",\"Grid Size\",\"CC\",\"launch__sm_count\"\n\
             \"0\",\"k\",\"(32, 1, 1)\",\"(4, 1, 1)\",\"{cc}\",\"{sms}\"\n"
        );
        parse_ncu_csv(&text, Path::new("p.csv")).expect("parses")
    }

    #[test]
    fn closest_preset_of_the_compute_capability() {
        let d = spec_from_report(&report("9.0", "132"), Path::new("p.csv")).expect("derived");
        assert_eq!(d.spec, GpuSpec::preset("h100-sxm").expect("preset"));
        assert_eq!(d.preset, "h100-sxm");
        // An H100 PCIe: 114 SMs, the rest from the SXM preset.
        let d = spec_from_report(&report("9.0", "114"), Path::new("p.csv")).expect("derived");
        assert_eq!(
            (d.spec.sm_count, d.spec.name.as_str()),
            (114, "h100-sxm-114sm")
        );
        assert!(
            d.sm_count_from.contains("launch__sm_count"),
            "{}",
            d.sm_count_from
        );
        let d = spec_from_report(&report("8.0", "108"), Path::new("p.csv")).expect("derived");
        assert_eq!(d.preset, "a100-40gb");
    }

    #[test]
    fn what_cannot_be_derived_is_named() {
        let e = spec_from_report(&report("10.0", "148"), Path::new("p.csv"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("compute capability 10.0") && e.contains("--gpu my-gpu.toml"),
            "{e}"
        );
        let e = spec_from_report(&report("9.0", "n/a"), Path::new("p.csv"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("no SM count"), "{e}");
        let e = spec_from_report(&report("", "132"), Path::new("p.csv"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("no compute capability"), "{e}");
    }
}
