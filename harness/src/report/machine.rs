//! The machine's facts and the contestants' toolchains in words, for summary.md's header and report.html's
//! Environment: one list of (label, words) that both print.

use std::collections::BTreeMap;

use super::format::one;
use crate::model::{ContestantStatus, Environment, Exposure, MachineFacts, MemoryNow, RunResult};

fn ghz(khz: u64) -> String {
    format!("{:.2} GHz", khz as f64 / 1e6)
}

/// "2.10 GHz" or "1.80-2.40 GHz" over the CPUs; None when no CPU gave the figure.
fn ghz_range(values: impl Iterator<Item = Option<u64>>) -> Option<String> {
    let v: Vec<u64> = values.flatten().collect();
    let (lo, hi) = (v.iter().min()?, v.iter().max()?);
    Some(if lo == hi { ghz(*lo) } else { format!("{}-{}", ghz(*lo), ghz(*hi)) })
}

/// Current and highest frequency over the CPUs, or why the kernel gives none.
pub fn frequency(m: &MachineFacts) -> String {
    if m.cpu_frequency.is_empty() {
        return format!("not reported ({})", m.cpu_frequency_absent.as_deref().unwrap_or("no cpufreq"));
    }
    let f = &m.cpu_frequency;
    let now = ghz_range(f.iter().map(|c| c.current_khz)).unwrap_or_else(|| "not reported".into());
    let max = ghz_range(f.iter().map(|c| c.max_khz)).unwrap_or_else(|| "not reported".into());
    format!("{now} at the start (maximum {max}) over {} CPU{}", f.len(), if f.len() == 1 { "" } else { "s" })
}

pub fn governor(m: &MachineFacts) -> String {
    match m.governors().as_slice() {
        [] if m.cpu_frequency.is_empty() => "not reported (no cpufreq)".into(),
        [] => "not reported".into(),
        g => g.join(", "),
    }
}

pub fn smt(m: &MachineFacts) -> String {
    let control = m.smt_control.as_deref().map(|c| format!(" (control: {c})")).unwrap_or_default();
    match m.smt_active {
        Some(true) => format!("on{control}"),
        Some(false) => format!("off{control}"),
        None if control.is_empty() => "not reported".into(),
        None => format!("not reported{control}"),
    }
}

/// "mitigations=auto; 5 mitigated (a, b), 10 not affected, 1 vulnerable (c)": the kernel's argument and
/// its reports by kind, naming all but the unaffected.
pub fn mitigations(m: &MachineFacts) -> String {
    let argument = m.mitigations_argument().map(|a| format!("mitigations={a} on the command line")).unwrap_or_else(|| "no mitigations= on the command line".into());
    if m.mitigations.is_empty() {
        return format!("{argument}; the kernel reports no vulnerabilities");
    }
    let kinds: Vec<String> = m
        .exposures()
        .iter()
        .map(|(kind, names)| match kind {
            Exposure::NotAffected => format!("{} {}", names.len(), kind.words()),
            _ => format!("{} {} ({})", names.len(), kind.words(), names.join(", ")),
        })
        .collect();
    format!("{argument}; {}", kinds.join(", "))
}

fn gib(bytes: u64) -> String {
    format!("{} GiB", one(bytes as f64 / f64::from(1u32 << 30)))
}

pub fn memory(m: &MachineFacts) -> String {
    let available = |n: Option<MemoryNow>| n.map_or("not reported".to_string(), |n| gib(n.available_bytes));
    let total = m.memory_start.or(m.memory_end).map_or("not reported".to_string(), |n| gib(n.total_bytes));
    format!("{total} in total; available {} at the start, {} at the end", available(m.memory_start), available(m.memory_end))
}

/// The toolchains the contestants used, each with the contestants that name it: a version line's first
/// part, up to its first ", " (what follows names libraries), e.g. "java 25.0.1 (Eclipse Adoptium 25.0.1+8)".
pub fn toolchains(run: &RunResult) -> Vec<(String, Vec<String>)> {
    let mut by: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for c in run.contestants.iter().filter(|c| c.status == ContestantStatus::Built) {
        if let Some(v) = &c.version {
            let toolchain = v.split(", ").next().unwrap_or(v).trim().to_string();
            by.entry(toolchain).or_default().push(c.name.clone());
        }
    }
    by.into_iter().collect()
}

/// The revision the run's catalog was at, in words: "commit 0123456789ab", "... with changes not
/// committed", or why it is not known.
pub fn catalog_revision(e: &Environment) -> String {
    match (&e.catalog_revision, &e.catalog_revision_absent) {
        (Some(r), _) => {
            let short: String = r.commit.chars().take(12).collect();
            if r.dirty {
                format!("commit {short} with changes not committed (the figures are of the tree as it was, not of that commit)")
            } else {
                format!("commit {short}")
            }
        }
        (None, Some(why)) => format!("not recorded: {why}"),
        (None, None) => "not recorded (the run was stored before runs recorded it)".into(),
    }
}

/// Every fact as (label, words), in the order both reports print them; empty for runs stored before
/// the machine's facts were recorded.
pub fn facts(run: &RunResult) -> Vec<(&'static str, String)> {
    let Some(m) = &run.environment.machine else { return Vec::new() };
    vec![
        ("CPU frequency", frequency(m)),
        ("Governor", governor(m)),
        ("SMT", smt(m)),
        ("Mitigations", mitigations(m)),
        ("Kernel command line", m.kernel_command_line.clone().unwrap_or_else(|| "not reported".into())),
        ("Memory", memory(m)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CatalogRevision, CpuFrequency};

    fn cpu(cpu: usize, now: Option<u64>, max: Option<u64>, governor: &str) -> CpuFrequency {
        CpuFrequency { cpu, current_khz: now, max_khz: max, governor: Some(governor.into()) }
    }

    #[test]
    fn the_catalog_revision_in_words_or_why_it_is_not_known() {
        let e = |revision: Option<CatalogRevision>, absent: Option<&str>| Environment { catalog_revision: revision, catalog_revision_absent: absent.map(String::from), ..Environment::default() };
        let commit = "0123456789abcdef0123456789abcdef01234567".to_string();
        assert_eq!(catalog_revision(&e(Some(CatalogRevision { commit: commit.clone(), dirty: false }), None)), "commit 0123456789ab");
        assert!(catalog_revision(&e(Some(CatalogRevision { commit, dirty: true }), None)).starts_with("commit 0123456789ab with changes not committed"));
        assert_eq!(catalog_revision(&e(None, Some("/x is not in a git work tree"))), "not recorded: /x is not in a git work tree");
        assert_eq!(catalog_revision(&e(None, None)), "not recorded (the run was stored before runs recorded it)");
    }

    #[test]
    fn frequency_and_governor_over_the_cpus_or_why_not() {
        let m = MachineFacts { cpu_frequency: vec![cpu(0, Some(1_800_000), Some(3_500_000), "powersave"), cpu(1, Some(2_400_000), Some(3_500_000), "powersave")], ..MachineFacts::default() };
        assert_eq!(frequency(&m), "1.80 GHz-2.40 GHz at the start (maximum 3.50 GHz) over 2 CPUs");
        assert_eq!(governor(&m), "powersave");
        let one_cpu = MachineFacts { cpu_frequency: vec![cpu(0, Some(2_000_000), None, "performance")], ..MachineFacts::default() };
        assert_eq!(frequency(&one_cpu), "2.00 GHz at the start (maximum not reported) over 1 CPU");
        let none = MachineFacts { cpu_frequency_absent: Some("no cpufreq here".into()), ..MachineFacts::default() };
        assert_eq!(frequency(&none), "not reported (no cpufreq here)");
        assert_eq!(governor(&none), "not reported (no cpufreq)");
    }

    #[test]
    fn smt_mitigations_and_memory_in_words() {
        let mut m = MachineFacts { smt_active: Some(false), smt_control: Some("notsupported".into()), kernel_command_line: Some("quiet mitigations=off".into()), ..MachineFacts::default() };
        assert_eq!(smt(&m), "off (control: notsupported)");
        assert_eq!(mitigations(&m), "mitigations=off on the command line; the kernel reports no vulnerabilities");
        m.mitigations.insert("meltdown".into(), "Not affected".into());
        m.mitigations.insert("l1tf".into(), "Not affected".into());
        m.mitigations.insert("spectre_v2".into(), "Vulnerable".into());
        assert_eq!(mitigations(&m), "mitigations=off on the command line; 2 not affected, 1 vulnerable (spectre_v2)");
        assert_eq!(smt(&MachineFacts::default()), "not reported");
        m.memory_start = Some(MemoryNow { total_bytes: 8 << 30, available_bytes: 6 << 30 });
        assert_eq!(memory(&m), "8.0 GiB in total; available 6.0 GiB at the start, not reported at the end");
    }
}
