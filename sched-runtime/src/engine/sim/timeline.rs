//! SM occupancy by job over time (`tally run --timeline`): after every
//! event that changes the residency, how many SMs hold at least one block
//! of each job, for the first `until_us` of the run. Read off the engine's
//! own residency, so the figure shows what the engine did, not a policy's
//! intent. Recording stops at the window's end, which keeps a long run's
//! cost to the window.

use super::residency::Span;

/// One change of a job's SM count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OccupancyPoint {
    pub time_us: f64,
    pub job: usize,
    /// SMs holding at least one of the job's blocks from `time_us` on.
    pub sms: u32,
}

/// The recorded changes, in time order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Timeline {
    pub until_us: f64,
    pub points: Vec<OccupancyPoint>,
    /// Each job's current count, to record changes only.
    current: Vec<u32>,
    /// Scratch: jobs counted on the span being visited.
    seen: Vec<usize>,
}

impl Timeline {
    pub fn new(until_us: f64) -> Timeline {
        Timeline {
            until_us,
            ..Timeline::default()
        }
    }

    /// Whether `now` is still inside the window.
    pub fn recording(&self, now: f64) -> bool {
        now <= self.until_us
    }

    /// Record the residency `spans` at `now`; `job_of` maps a launch slot
    /// to its job. An SM shared by two launches of one job counts once.
    pub(super) fn sample(&mut self, now: f64, spans: &[Span], job_of: impl Fn(usize) -> usize) {
        let mut counts = vec![0u32; self.current.len()];
        for span in spans {
            self.seen.clear();
            for r in &span.sm.resident {
                let job = job_of(r.slot);
                if !self.seen.contains(&job) {
                    self.seen.push(job);
                    if job >= counts.len() {
                        counts.resize(job + 1, 0);
                    }
                    counts[job] += span.len;
                }
            }
        }
        if counts.len() > self.current.len() {
            self.current.resize(counts.len(), 0);
        }
        for (job, &n) in counts.iter().enumerate() {
            if n != self.current[job] {
                self.current[job] = n;
                self.points.push(OccupancyPoint {
                    time_us: now,
                    job,
                    sms: n,
                });
            }
        }
    }
}
