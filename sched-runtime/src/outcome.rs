//! What a run produces: every HP request's arrival, start and end, and the
//! work the BE jobs got done.

/// One HP request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Request {
    pub arrival_us: f64,
    pub start_us: f64,
    pub end_us: f64,
}

impl Request {
    /// From arrival to completion: what a client of the server sees.
    pub fn latency_us(&self) -> f64 {
        self.end_us - self.arrival_us
    }

    /// From the start of service to completion, queueing excluded: what
    /// the Tally artifact's server harness records (its `ServerInferMonitor`
    /// times each step from its begin, which is the arrival or, when behind,
    /// the previous request's end), so the published table compares with
    /// this one.
    pub fn service_us(&self) -> f64 {
        self.end_us - self.start_us
    }
}

/// What a run produced.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    pub policy: String,
    pub requests: Vec<Request>,
    /// Requests that arrived within the duration.
    pub arrived: usize,
    /// Requests served within the duration: those completed, plus the one
    /// in service at the end by the share of its standalone work done (so
    /// a run of few long requests, Llama-2 generations, does not lose a
    /// whole request to where the window happens to end).
    pub requests_served: f64,
    /// Per BE job: standalone-equivalent microseconds of work done.
    pub be_work_us: Vec<f64>,
    /// Per BE job: the work it does alone over the same window from the
    /// same start (all of it when it is GPU-bound; with host time after
    /// each iteration, the GPU phases that fit), what its throughput is
    /// normalised to.
    pub be_alone_work_us: Vec<f64>,
    pub be_iterations: Vec<u64>,
    pub duration_us: f64,
}
