//! The machine as the source documents describe it, read from /sys and /proc: each CPU's frequency and
//! governor (cpufreq), whether SMT is on, the kernel's command line, the mitigations the kernel reports,
//! and memory total and available. Every reader takes its root folder, so tests read a made-up tree; a
//! fact the kernel does not expose is None, never a zero.

use std::collections::BTreeMap;
use std::path::Path;

use super::cpus::parse_list;

/// Where the kernel keeps the CPUs' files and the machine's /proc.
pub const SYS_CPU: &str = "/sys/devices/system/cpu";
pub const PROC: &str = "/proc";

/// One CPU as cpufreq shows it; each figure None where its file is missing or unreadable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuFreq {
    pub cpu: usize,
    /// scaling_cur_freq (the kernel's view of the current frequency), in kHz.
    pub current_khz: Option<u64>,
    /// cpuinfo_max_freq (the highest the hardware allows), in kHz.
    pub max_khz: Option<u64>,
    pub governor: Option<String>,
}

fn read_trimmed(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

/// The online CPUs (`online`, such as `0-3`); None when the file cannot be read.
pub fn online_cpus(sys_cpu: &Path) -> Option<Vec<usize>> {
    parse_list(&read_trimmed(&sys_cpu.join("online"))?).ok()
}

/// cpufreq of each CPU in `cpus` that has a `cpufreq` folder; empty when the kernel has no cpufreq (a
/// virtual machine, a kernel built without it).
pub fn cpu_frequencies(sys_cpu: &Path, cpus: &[usize]) -> Vec<CpuFreq> {
    cpus.iter()
        .filter_map(|&cpu| {
            let dir = sys_cpu.join(format!("cpu{cpu}/cpufreq"));
            dir.is_dir().then(|| {
                let khz = |f: &str| read_trimmed(&dir.join(f)).and_then(|v| v.parse().ok());
                CpuFreq { cpu, current_khz: khz("scaling_cur_freq"), max_khz: khz("cpuinfo_max_freq"), governor: read_trimmed(&dir.join("scaling_governor")) }
            })
        })
        .collect()
}

/// SMT as `smt/active` (1 or 0) and `smt/control` (on, off, forceoff, notsupported, notimplemented) say:
/// (active, control), each None where its file is missing.
pub fn smt(sys_cpu: &Path) -> (Option<bool>, Option<String>) {
    let active = read_trimmed(&sys_cpu.join("smt/active")).and_then(|v| match v.as_str() {
        "1" => Some(true),
        "0" => Some(false),
        _ => None,
    });
    (active, read_trimmed(&sys_cpu.join("smt/control")))
}

/// What the kernel reports for each vulnerability (`vulnerabilities/<name>`: "Not affected",
/// "Mitigation: ...", "Vulnerable ..."), by name; empty when the folder is missing.
pub fn vulnerabilities(sys_cpu: &Path) -> BTreeMap<String, String> {
    let Ok(entries) = std::fs::read_dir(sys_cpu.join("vulnerabilities")) else { return BTreeMap::new() };
    entries
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.to_string(), read_trimmed(&e.path())?)))
        .collect()
}

/// The kernel's command line (`cmdline`).
pub fn kernel_command_line(proc: &Path) -> Option<String> {
    read_trimmed(&proc.join("cmdline"))
}

/// MemTotal and MemAvailable of `meminfo`, in bytes; each None where the kernel does not print it.
pub fn memory(proc: &Path) -> (Option<u64>, Option<u64>) {
    let Some(text) = std::fs::read_to_string(proc.join("meminfo")).ok() else { return (None, None) };
    let field = |name: &str| {
        text.lines().find_map(|l| {
            let rest = l.strip_prefix(name)?.strip_prefix(':')?;
            let mut words = rest.split_whitespace();
            let n: u64 = words.next()?.parse().ok()?;
            // The kernel prints kB (KiB) or, for the few counts, no unit.
            Some(if words.next() == Some("kB") { n * 1024 } else { n })
        })
    };
    (field("MemTotal"), field("MemAvailable"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, file: &str, text: &str) {
        let path = root.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn reads_a_made_up_machine() {
        let dir = tempfile::tempdir().unwrap();
        let (sys, proc) = (dir.path().join("cpu"), dir.path().join("proc"));
        write(&sys, "online", "0-1,3\n");
        write(&sys, "cpu0/cpufreq/scaling_cur_freq", "2100000\n");
        write(&sys, "cpu0/cpufreq/cpuinfo_max_freq", "3500000\n");
        write(&sys, "cpu0/cpufreq/scaling_governor", "performance\n");
        // cpu1 has cpufreq without a governor file; cpu3 none at all.
        write(&sys, "cpu1/cpufreq/scaling_cur_freq", "800000\n");
        write(&sys, "smt/active", "1\n");
        write(&sys, "smt/control", "on\n");
        write(&sys, "vulnerabilities/meltdown", "Not affected\n");
        write(&sys, "vulnerabilities/spectre_v2", "Mitigation: Retpolines; STIBP: disabled\n");
        write(&proc, "cmdline", "BOOT_IMAGE=/vmlinuz mitigations=off quiet\n");
        write(&proc, "meminfo", "MemTotal:        8000000 kB\nMemFree:  100 kB\nMemAvailable:    6000000 kB\nHugePages_Total:       0\n");

        let cpus = online_cpus(&sys).unwrap();
        assert_eq!(cpus, vec![0, 1, 3]);
        let freq = cpu_frequencies(&sys, &cpus);
        assert_eq!(freq.len(), 2, "cpu3 has no cpufreq: {freq:?}");
        assert_eq!(freq[0], CpuFreq { cpu: 0, current_khz: Some(2_100_000), max_khz: Some(3_500_000), governor: Some("performance".into()) });
        assert_eq!(freq[1], CpuFreq { cpu: 1, current_khz: Some(800_000), max_khz: None, governor: None });
        assert_eq!(smt(&sys), (Some(true), Some("on".into())));
        let v = vulnerabilities(&sys);
        assert_eq!(v.len(), 2);
        assert_eq!(v["spectre_v2"], "Mitigation: Retpolines; STIBP: disabled");
        assert_eq!(kernel_command_line(&proc).as_deref(), Some("BOOT_IMAGE=/vmlinuz mitigations=off quiet"));
        assert_eq!(memory(&proc), (Some(8_000_000 * 1024), Some(6_000_000 * 1024)));
    }

    #[test]
    fn a_machine_without_the_files_has_no_facts_rather_than_zeros() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(online_cpus(dir.path()), None);
        assert!(cpu_frequencies(dir.path(), &[0, 1]).is_empty());
        assert_eq!(smt(dir.path()), (None, None));
        assert!(vulnerabilities(dir.path()).is_empty());
        assert_eq!(kernel_command_line(dir.path()), None);
        assert_eq!(memory(dir.path()), (None, None));
    }

    #[test]
    fn reads_this_machine() {
        let (total, available) = memory(Path::new(PROC));
        assert!(total.is_some_and(|t| t > 0) && available.is_some_and(|a| a <= total.unwrap()), "{total:?} {available:?}");
        assert!(online_cpus(Path::new(SYS_CPU)).is_some_and(|c| !c.is_empty()));
        assert!(kernel_command_line(Path::new(PROC)).is_some());
    }
}
