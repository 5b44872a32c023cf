//! The environment a run records: CPU, cores, kernel, OS, memory, load, tool and compiler versions, the
//! command line, the machine's facts (frequency, governor, SMT, kernel command line, mitigations, memory at
//! start and end); and the clock formats of run ids.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::os::cpus::CpuSet;
use crate::os::{machine, proc, process};
use crate::model::{CatalogRevision, CpuFrequency, Environment, MachineFacts, MemoryNow};

const VERSION_TIMEOUT: Duration = Duration::from_secs(10);

/// The command that prints a language's toolchain version.
pub fn toolchain_command(language: &str) -> Option<(&'static str, &'static str)> {
    Some(match language {
        "c" => ("cc", "cc --version"),
        "cpp" => ("c++", "c++ --version"),
        "rust" => ("rustc", "rustc --version"),
        "go" => ("go", "go version"),
        "java" => ("java", "java -version"),
        "javascript" => ("node", "node --version"),
        "python" => ("python3", "python3 --version"),
        "erlang" => ("erlang", r#"erl -noshell -eval 'io:format("OTP ~s~n", [erlang:system_info(otp_release)]), halt().'"#),
        "d" => ("ldc2", "ldc2 --version"),
        "config" => ("nginx", "nginx -v"),
        _ => return None,
    })
}

/// Versions of the toolchains of `languages` and of `extra` tools (name, command), by name; a tool that is
/// missing is left out.
pub fn tool_versions(languages: &[&str], extra: &[(&str, &str)]) -> crate::model::ToolVersions {
    let mut wanted: Vec<(&str, &str)> = languages.iter().filter_map(|l| toolchain_command(l)).collect();
    wanted.extend_from_slice(extra);
    wanted.sort();
    wanted.dedup();
    wanted
        .into_iter()
        .filter_map(|(name, cmd)| {
            process::first_line(cmd, Path::new("/"), VERSION_TIMEOUT).map(|v| (name.to_string(), v))
        })
        .collect()
}

pub fn capture(tools: crate::model::ToolVersions, command_line: Vec<String>, catalog_root: &Path) -> Environment {
    let cpu_model = proc::cpu_model().unwrap_or_else(|| "unknown".into());
    // SAFETY: sysconf takes a name and returns a number; no memory is shared.
    let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    let os = std::fs::read_to_string("/etc/os-release")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim_matches('"').to_string())
        .unwrap_or_else(|| std::env::consts::OS.to_string());
    let (catalog_revision, catalog_revision_absent) = match crate::os::git::revision(catalog_root) {
        Ok((commit, dirty)) => (Some(CatalogRevision { commit, dirty }), None),
        Err(e) => (None, Some(format!("{} is not in a git work tree that git can read ({e})", catalog_root.display()))),
    };
    Environment {
        cpu_model,
        cores: if online > 0 { online as usize } else { 1 },
        allowed_cpus: CpuSet::allowed().to_string(),
        kernel: proc::kernel().unwrap_or_else(|| "unknown".into()),
        os,
        memory_bytes: proc::memory_bytes().unwrap_or(0),
        load_average: proc::load_average(),
        load_average_end: None,
        tools,
        command_line,
        serverbench_version: env!("CARGO_PKG_VERSION").to_string(),
        client_hosts: Vec::new(),
        server_host: None,
        machine: Some(machine_facts(Path::new(machine::SYS_CPU), Path::new(machine::PROC))),
        catalog_revision,
        catalog_revision_absent,
    }
}

/// What the kernel says of the machine under `sys_cpu` (/sys/devices/system/cpu) and `proc` (/proc), the
/// memory as of now.
pub fn machine_facts(sys_cpu: &Path, proc: &Path) -> MachineFacts {
    let cpus = machine::online_cpus(sys_cpu).unwrap_or_default();
    let cpu_frequency: Vec<CpuFrequency> = machine::cpu_frequencies(sys_cpu, &cpus)
        .into_iter()
        .map(|f| CpuFrequency { cpu: f.cpu, current_khz: f.current_khz, max_khz: f.max_khz, governor: f.governor })
        .collect();
    let cpu_frequency_absent = cpu_frequency.is_empty().then(|| {
        format!("the kernel has no cpufreq here: {}/cpu*/cpufreq is missing, as in most virtual machines", sys_cpu.display())
    });
    let (smt_active, smt_control) = machine::smt(sys_cpu);
    MachineFacts {
        cpu_frequency,
        cpu_frequency_absent,
        smt_active,
        smt_control,
        kernel_command_line: machine::kernel_command_line(proc),
        mitigations: machine::vulnerabilities(sys_cpu),
        memory_start: memory_now(proc),
        memory_end: None,
    }
}

/// MemTotal and MemAvailable of `proc`/meminfo now; None when either is missing.
pub fn memory_now(proc: &Path) -> Option<MemoryNow> {
    match machine::memory(proc) {
        (Some(total_bytes), Some(available_bytes)) => Some(MemoryNow { total_bytes, available_bytes }),
        _ => None,
    }
}

/// Records the memory at the end of the run beside the facts taken at its start.
pub fn finish(env: &mut Environment) {
    env.load_average_end = proc::load_average();
    if let Some(m) = env.machine.as_mut() {
        m.memory_end = memory_now(Path::new(machine::PROC));
    }
}

/// UTC civil time of a moment, as (year, month, day, hour, minute, second).
fn civil(t: SystemTime) -> (i64, u32, u32, u32, u32, u32) {
    let secs = t.duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day, (rem / 3600) as u32, (rem % 3600 / 60) as u32, (rem % 60) as u32)
}

/// `2026-01-31T12:00:00Z`
pub fn utc_timestamp(t: SystemTime) -> String {
    let (y, mo, d, h, mi, s) = civil(t);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

/// `20260131-120000`: sorts by time, safe in a path.
pub fn run_id(t: SystemTime) -> String {
    let (y, mo, d, h, mi, s) = civil(t);
    format!("{y:04}{mo:02}{d:02}-{h:02}{mi:02}{s:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_utc() {
        let t = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(utc_timestamp(t), "2023-11-14T22:13:20Z");
        assert_eq!(run_id(t), "20231114-221320");
        assert_eq!(utc_timestamp(UNIX_EPOCH + Duration::from_secs(951_782_400)), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn captures_this_machine() {
        let env = capture(Default::default(), vec!["x".into()], Path::new(env!("CARGO_MANIFEST_DIR")));
        assert!(env.cores >= 1);
        assert!(env.kernel.starts_with("Linux"), "{}", env.kernel);
        assert!(env.memory_bytes > 0);
        let m = env.machine.expect("the machine's facts");
        assert!(m.memory_start.is_some_and(|n| n.available_bytes <= n.total_bytes), "{m:?}");
        assert_eq!(m.memory_end, None, "the end is recorded when the run finishes");
        // Either the frequencies or why there are none, never neither.
        assert!(m.cpu_frequency.is_empty() != m.cpu_frequency_absent.is_none(), "{m:?}");
        // The catalog's revision or why it is absent, never both or neither.
        assert!(env.catalog_revision.is_some() != env.catalog_revision_absent.is_some(), "{:?} {:?}", env.catalog_revision, env.catalog_revision_absent);
        let outside = tempfile::tempdir().unwrap();
        let env = capture(Default::default(), vec!["x".into()], outside.path());
        assert!(env.catalog_revision.is_none() && env.catalog_revision_absent.as_deref().is_some_and(|w| w.contains("not in a git work tree")), "{:?}", env.catalog_revision_absent);
    }

    #[test]
    fn a_kernel_without_cpufreq_says_so() {
        let dir = std::env::temp_dir().join(format!("serverbench-nofreq-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("cpu0")).unwrap();
        std::fs::write(dir.join("online"), "0\n").unwrap();
        let m = machine_facts(&dir, &dir);
        let _ = std::fs::remove_dir_all(&dir);
        assert!(m.cpu_frequency.is_empty());
        assert!(m.cpu_frequency_absent.as_deref().is_some_and(|w| w.contains("no cpufreq")), "{m:?}");
        assert_eq!((m.smt_active, m.memory_start), (None, None));
    }
}
