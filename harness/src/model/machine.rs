//! The machine as the source documents describe it, recorded beside the environment: each CPU's frequency
//! and governor, SMT, the kernel's command line and the mitigations it reports, memory at the start and
//! at the end of the run. A fact the kernel does not expose is absent, and where that matters says so.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MachineFacts {
    /// Each online CPU's cpufreq figures; empty when the kernel has none (`cpu_frequency_absent` says why).
    pub cpu_frequency: Vec<CpuFrequency>,
    /// Why `cpu_frequency` is empty, e.g. that the kernel has no cpufreq; absent when it is not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_frequency_absent: Option<String>,
    /// `smt/active`: whether SMT (hyper-threading) is on; absent when the kernel does not say.
    pub smt_active: Option<bool>,
    /// `smt/control`: on, off, forceoff, notsupported or notimplemented; absent when the kernel does not say.
    pub smt_control: Option<String>,
    /// /proc/cmdline as the kernel was booted (`mitigations=off` shows here).
    pub kernel_command_line: Option<String>,
    /// What the kernel reports for each CPU vulnerability (/sys/devices/system/cpu/vulnerabilities), by
    /// name: "Not affected", "Mitigation: ...", "Vulnerable ...". Empty when it reports none.
    pub mitigations: BTreeMap<String, String>,
    /// /proc/meminfo when the run started and when it finished.
    pub memory_start: Option<MemoryNow>,
    #[serde(default)]
    pub memory_end: Option<MemoryNow>,
}

/// One CPU as cpufreq shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuFrequency {
    pub cpu: usize,
    /// The kernel's view of the current frequency (scaling_cur_freq), in kHz.
    pub current_khz: Option<u64>,
    /// The highest the hardware allows (cpuinfo_max_freq), in kHz.
    pub max_khz: Option<u64>,
    /// scaling_governor: performance, powersave, schedutil, ondemand, ...
    pub governor: Option<String>,
}

/// MemTotal and MemAvailable at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryNow {
    pub total_bytes: u64,
    pub available_bytes: u64,
}

/// A vulnerability's state as the kernel words it, reduced to four kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exposure {
    NotAffected,
    Mitigated,
    Vulnerable,
    /// "Unknown: ..." (the kernel cannot tell, e.g. under a hypervisor) or any other wording.
    Unknown,
}

impl Exposure {
    pub fn of(report: &str) -> Exposure {
        if report.starts_with("Not affected") {
            Exposure::NotAffected
        } else if report.starts_with("Mitigation") {
            Exposure::Mitigated
        } else if report.starts_with("Vulnerable") {
            Exposure::Vulnerable
        } else {
            Exposure::Unknown
        }
    }

    pub fn words(self) -> &'static str {
        match self {
            Exposure::NotAffected => "not affected",
            Exposure::Mitigated => "mitigated",
            Exposure::Vulnerable => "vulnerable",
            Exposure::Unknown => "unknown",
        }
    }
}

impl MachineFacts {
    /// The `mitigations=` argument of the kernel's command line, e.g. `auto` or `off`.
    pub fn mitigations_argument(&self) -> Option<&str> {
        self.kernel_command_line.as_deref()?.split_whitespace().find_map(|w| w.strip_prefix("mitigations="))
    }

    /// The vulnerabilities by exposure, each with its names.
    pub fn exposures(&self) -> BTreeMap<Exposure, Vec<&str>> {
        let mut out: BTreeMap<Exposure, Vec<&str>> = BTreeMap::new();
        for (name, report) in &self.mitigations {
            out.entry(Exposure::of(report)).or_default().push(name);
        }
        out
    }

    /// The governors of the CPUs, without repeats.
    pub fn governors(&self) -> Vec<&str> {
        let mut g: Vec<&str> = self.cpu_frequency.iter().filter_map(|f| f.governor.as_deref()).collect();
        g.sort_unstable();
        g.dedup();
        g
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_kernel_s_words() {
        let mut m = MachineFacts { kernel_command_line: Some("ro quiet mitigations=off".into()), ..MachineFacts::default() };
        for (name, report) in [("meltdown", "Not affected"), ("spectre_v1", "Mitigation: usercopy/swapgs barriers"), ("mds", "Vulnerable: Clear CPU buffers attempted, no microcode"), ("srbds", "Unknown: Dependent on hypervisor status")] {
            m.mitigations.insert(name.into(), report.into());
        }
        assert_eq!(m.mitigations_argument(), Some("off"));
        let e = m.exposures();
        assert_eq!(e[&Exposure::NotAffected], vec!["meltdown"]);
        assert_eq!(e[&Exposure::Mitigated], vec!["spectre_v1"]);
        assert_eq!(e[&Exposure::Vulnerable], vec!["mds"]);
        assert_eq!(e[&Exposure::Unknown], vec!["srbds"]);
        assert_eq!(MachineFacts::default().mitigations_argument(), None);
    }
}
