//! A measurement's profiled round (`bench --profile`, docs/profile.md): where the server's CPU time went,
//! as sampled stacks, in a round of its own after the measured ones, left out of every other figure.

use serde::{Deserialize, Serialize};

/// One function's change in an A/B run's profiles: declared where the stacks are read against each other.
pub use crate::profile::diff::FrameChange;

/// What the profiled round found, or why there is no profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// The folded stacks (a line per stack and its samples), relative to the run folder; absent where no
    /// profile was taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folded: Option<String>,
    /// Samples a second on each of the server's CPUs.
    pub frequency_hz: u32,
    /// Samples of the server (the idle task's left out).
    pub samples: u64,
    /// The responses of the profiled round, and its own req/s, beside the measured rounds' median: what
    /// sampling cost the server.
    pub requests: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_per_s: Option<f64>,
    /// The share of frames perf could not name (0 to 1): a runtime without its perf support (Python before
    /// 3.12 without `-X perf`, Erlang without `+JPperf`) shows its own frames as unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown_frames: Option<f64>,
    /// The functions with the most samples of their own (the innermost frame), per 1,000 requests, most
    /// first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub top_frames: Vec<FrameCost>,
    /// Why there is no profile: perf missing, the kernel refusing to sample, a server on another host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,    /// Where a server whose threads block (`io = "blocking"`) waited: its switches off a CPU, from a second
    /// profiled round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub off_cpu: Option<OffCpu>,
}

/// Where a server's tasks blocked in its off-CPU round: every switch off a CPU of a task that blocked (not
/// one that was preempted), with its call chain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OffCpu {
    /// The folded stacks of the switches, relative to the run folder; absent where none were recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folded: Option<String>,
    /// Switches of a task that blocked, and the responses of the round.
    pub switches: u64,
    pub requests: u64,
    /// Where they blocked (the system call, or the innermost frame outside the scheduler), switches per
    /// 1,000 requests, most first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocked_in: Vec<FrameCost>,
    /// Why there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
}

impl OffCpu {
    /// None, and why.
    pub fn unavailable(why: String) -> OffCpu {
        OffCpu { folded: None, switches: 0, requests: 0, blocked_in: Vec::new(), unavailable: Some(why) }
    }
}

/// A function and its samples per 1,000 requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameCost {
    pub frame: String,
    pub samples_per_1000_requests: f64,
}

impl Profile {
    /// No profile, and why.
    pub fn unavailable(frequency_hz: u32, why: String) -> Profile {
        Profile {
            folded: None,
            frequency_hz,
            samples: 0,
            requests: 0,
            requests_per_s: None,
            unknown_frames: None,
            top_frames: Vec::new(),
            unavailable: Some(why),
            off_cpu: None,
        }
    }
}

/// B's profile against A's in an A/B run (`bench --baseline REV --profile`): the samples of each side's
/// profiled rounds, and the functions whose samples of their own per 1,000 requests changed the most.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileChange {
    pub a_samples: u64,
    pub b_samples: u64,
    /// The functions whose change stands beyond the sampling noise, the largest first (at most a dozen).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frames: Vec<FrameChange>,
}

