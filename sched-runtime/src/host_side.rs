//! A job's host side: how long its framework's CPU takes to issue one
//! kernel launch (`JobSpec::launch_interval_us`). Where the GPU runs a
//! kernel in less, the job is launch-bound: its latency is set by the
//! host, flat across batch sizes and SM shares, and a co-runner that
//! slows its kernels costs it only what exceeds the host's slack.
//!
//! - **Eager PyTorch** (`Framework::Eager`): every operator is a Python
//!   call that walks the interpreter, the pybind11 boundary, the autograd
//!   and ATen dispatchers, the library's algorithm choice and the driver's
//!   launch. A published breakdown of that path puts it at 5-25 us of CPU
//!   per operator (the lesson "From PyTorch op to kernel launch" of
//!   jiahuanglin.xyz's GPU-kernel-serving course: about 1 us each for the
//!   bytecode and the binding, 1-3 for autograd, 1-2 for the dispatcher,
//!   1-5 for the backend, 1-3 for `cudaLaunchKernel`), and calling it
//!   through an `nn.Module` adds the module's hook checks and attribute
//!   lookups, 158-218 CPython opcodes per layer as PyTorch's developers
//!   counted them (dev-discuss.pytorch.org, "Overhead in nn.Module causing
//!   massive slowdowns"). We take [`EAGER_LAUNCH_US`] = 20 us: the upper
//!   half of the first range, for a module call on an interpreter before
//!   CPython 3.11's faster dispatch. It is not fitted to any measurement
//!   this tool is checked against.
//! - **CUDA graphs** (`Framework::CudaGraphs`): the iteration is one graph
//!   launch; its kernels follow one another at the device's own launch gap
//!   (`GpuSpec::launch_overhead_us`), so no host time is added per kernel.
//! - **Host ahead** (`Framework::HostAhead`, the default): a runtime that
//!   keeps its launch queue ahead of the GPU (ONNX Runtime's C++ loop, a
//!   training step whose kernels outlast their launches); no host time.

use crate::error::RunError;

/// Host time of one eager PyTorch operator launch, microseconds (module
/// docs: the source and the reading).
pub const EAGER_LAUNCH_US: f64 = 20.0;

/// How a job's framework issues its kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Framework {
    #[default]
    HostAhead,
    Eager,
    CudaGraphs,
}

impl Framework {
    pub const NAMES: [&'static str; 3] = ["host-ahead", "eager", "cuda-graphs"];

    pub fn parse(name: &str) -> Result<Framework, RunError> {
        match name {
            "host-ahead" => Ok(Framework::HostAhead),
            "eager" => Ok(Framework::Eager),
            "cuda-graphs" => Ok(Framework::CudaGraphs),
            other => Err(RunError::Input {
                what: format!("framework `{other}`"),
                reason: format!("expected one of {}", Framework::NAMES.join(", ")),
            }),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Framework::HostAhead => "host-ahead",
            Framework::Eager => "eager",
            Framework::CudaGraphs => "cuda-graphs",
        }
    }

    /// Host time to issue one launch, microseconds.
    pub fn launch_interval_us(self) -> f64 {
        match self {
            Framework::Eager => EAGER_LAUNCH_US,
            Framework::HostAhead | Framework::CudaGraphs => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_a_bad_one_lists_the_choices() {
        for name in Framework::NAMES {
            assert_eq!(Framework::parse(name).unwrap().name(), name);
        }
        let e = Framework::parse("jit").unwrap_err().to_string();
        assert!(e.contains("host-ahead, eager, cuda-graphs"), "{e}");
        assert!(Framework::Eager.launch_interval_us() > 0.0);
        assert_eq!(Framework::default().launch_interval_us(), 0.0);
    }
}
