//! `nvidia-smi -q -x`: the device facts the driver API does not give
//! (MIG mode, compute mode as a name, the maximum SM and memory clocks, the
//! driver release), read from its XML. nvidia-smi missing or failing is not
//! an error: device listing then shows what the driver API alone knows.

use std::process::Command;

use quick_xml::events::Event;
use quick_xml::Reader;

/// The whole `nvidia-smi -q -x` report (only the fields tally uses).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SmiLog {
    pub driver_version: Option<String>,
    pub cuda_version: Option<String>,
    pub gpus: Vec<SmiGpu>,
}

/// One `<gpu>` element.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SmiGpu {
    /// The `id` attribute, e.g. `00000000:19:00.0`.
    pub pci_bus_id: String,
    pub product_name: Option<String>,
    pub uuid: Option<String>,
    /// `mig_mode/current_mig`: `Enabled`, `Disabled` or `N/A`.
    pub mig_mode: Option<String>,
    /// `Default`, `Exclusive_Process`, `Prohibited`.
    pub compute_mode: Option<String>,
    pub memory_total_mib: Option<f64>,
    pub max_sm_clock_mhz: Option<f64>,
    pub max_mem_clock_mhz: Option<f64>,
}

impl SmiLog {
    /// The GPU at PCI bus id `bus_id` (the driver API's form `0000:19:00.0`
    /// and nvidia-smi's `00000000:19:00.0` compare equal).
    pub fn gpu(&self, bus_id: &str) -> Option<&SmiGpu> {
        let key = normalise_bus_id(bus_id);
        self.gpus
            .iter()
            .find(|g| normalise_bus_id(&g.pci_bus_id) == key)
    }
}

/// Bus id without leading zeros in the domain, upper case.
fn normalise_bus_id(id: &str) -> String {
    let id = id.trim().to_ascii_uppercase();
    match id.split_once(':') {
        Some((domain, rest)) => {
            let d = domain.trim_start_matches('0');
            format!("{}:{rest}", if d.is_empty() { "0" } else { d })
        }
        None => id,
    }
}

/// Run `nvidia-smi -q -x` and parse it; `None` when it is not installed,
/// fails, or prints something that is not its XML.
pub fn run_nvidia_smi() -> Option<SmiLog> {
    let out = Command::new("nvidia-smi")
        .args(["-q", "-x"])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    parse_smi_xml(&String::from_utf8_lossy(&out.stdout)).ok()
}

/// Parse `nvidia-smi -q -x` output. Errors say where the XML broke.
pub fn parse_smi_xml(xml: &str) -> Result<SmiLog, String> {
    let mut reader = Reader::from_str(xml);
    reader.config_mut().trim_text(true);
    let mut log = SmiLog::default();
    // Element names from the root down to the current one.
    let mut path: Vec<String> = Vec::new();
    let mut text = String::new();
    let mut saw_root = false;
    loop {
        let event = reader
            .read_event()
            .map_err(|e| format!("at byte {}: {e}", reader.error_position()))?;
        match event {
            Event::Start(e) => {
                let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
                if path.is_empty() {
                    if name != "nvidia_smi_log" {
                        return Err(format!("root element is <{name}>, not <nvidia_smi_log>"));
                    }
                    saw_root = true;
                }
                if path.len() == 1 && name == "gpu" {
                    let mut gpu = SmiGpu::default();
                    for a in e.attributes().flatten() {
                        if a.key.as_ref() == b"id" {
                            gpu.pci_bus_id = String::from_utf8_lossy(&a.value).into_owned();
                        }
                    }
                    log.gpus.push(gpu);
                }
                path.push(name);
                text.clear();
            }
            Event::Text(t) => {
                text.push_str(&t.decode().map_err(|e| e.to_string())?);
            }
            Event::GeneralRef(r) => {
                let name: &[u8] = &r;
                text.push_str(match name {
                    b"amp" => "&",
                    b"lt" => "<",
                    b"gt" => ">",
                    b"quot" => "\"",
                    b"apos" => "'",
                    _ => "",
                });
            }
            Event::End(_) => {
                let value = text.trim().to_string();
                text.clear();
                store(&mut log, &path, value);
                path.pop();
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if !saw_root {
        return Err("no <nvidia_smi_log> element".to_string());
    }
    Ok(log)
}

/// Keep `value` if `path` is one of the fields tally reads.
fn store(log: &mut SmiLog, path: &[String], value: String) {
    let p: Vec<&str> = path.iter().map(String::as_str).collect();
    let known = || (value != "N/A" && !value.is_empty()).then(|| value.clone());
    let number = || value.split_whitespace().next()?.parse::<f64>().ok();
    match p[..] {
        ["nvidia_smi_log", "driver_version"] => log.driver_version = known(),
        ["nvidia_smi_log", "cuda_version"] => log.cuda_version = known(),
        ["nvidia_smi_log", "gpu", ref rest @ ..] => {
            let Some(gpu) = log.gpus.last_mut() else {
                return;
            };
            match rest {
                ["product_name"] => gpu.product_name = known(),
                ["uuid"] => gpu.uuid = known(),
                ["mig_mode", "current_mig"] => gpu.mig_mode = known(),
                ["compute_mode"] => gpu.compute_mode = known(),
                ["fb_memory_usage", "total"] => gpu.memory_total_mib = number(),
                ["max_clocks", "sm_clock"] => gpu.max_sm_clock_mhz = number(),
                ["max_clocks", "mem_clock"] => gpu.max_mem_clock_mhz = number(),
                ["pci", "pci_bus_id"] if gpu.pci_bus_id.is_empty() => gpu.pci_bus_id = value,
                _ => {}
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_H200: &str = include_str!("../../tests/fixtures/nvidia-smi/h200-two-gpus.xml");

    #[test]
    fn reads_the_fields_of_every_gpu() {
        let log = parse_smi_xml(TWO_H200).expect("parses");
        assert_eq!(log.driver_version.as_deref(), Some("580.95.05"));
        assert_eq!(log.cuda_version.as_deref(), Some("13.0"));
        assert_eq!(log.gpus.len(), 2);
        let a = &log.gpus[0];
        assert_eq!(a.pci_bus_id, "00000000:19:00.0");
        assert_eq!(a.product_name.as_deref(), Some("NVIDIA H200"));
        assert_eq!(a.mig_mode.as_deref(), Some("Disabled"));
        assert_eq!(a.compute_mode.as_deref(), Some("Default"));
        assert_eq!(a.memory_total_mib, Some(143771.0));
        // max_clocks, not the idle clocks/sm_clock of 345 MHz.
        assert_eq!(a.max_sm_clock_mhz, Some(1980.0));
        assert_eq!(a.max_mem_clock_mhz, Some(3201.0));
        let b = &log.gpus[1];
        assert_eq!(b.mig_mode.as_deref(), Some("Enabled"));
        assert_eq!(b.compute_mode.as_deref(), Some("Exclusive_Process"));
        assert_eq!(b.max_sm_clock_mhz, None, "N/A is absent");
        // The driver API writes the domain with 4 digits.
        assert_eq!(log.gpu("0000:2a:00.0"), Some(b));
        assert_eq!(log.gpu("0000:3b:00.0"), None);
    }

    #[test]
    fn other_xml_is_an_error() {
        assert!(parse_smi_xml("<other><gpu/></other>").is_err());
        assert!(parse_smi_xml("not xml at all").is_err());
        assert!(parse_smi_xml("<nvidia_smi_log><gpu id=\"1\"></nvidia_smi_log>").is_err());
    }
}
