//! The environment a run records: CPU, cores, kernel, OS, memory, load, tool and compiler versions, the
//! command line; and the clock formats of run ids.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::os::cpus::CpuSet;
use crate::os::{proc, process};
use crate::model::Environment;

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
pub fn tool_versions(languages: &[&str], extra: &[(&str, &str)]) -> BTreeMap<String, String> {
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

pub fn capture(tools: BTreeMap<String, String>, command_line: Vec<String>) -> Environment {
    let cpu_model = proc::cpu_model().unwrap_or_else(|| "unknown".into());
    // SAFETY: sysconf takes a name and returns a number; no memory is shared.
    let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    let os = std::fs::read_to_string("/etc/os-release")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim_matches('"').to_string())
        .unwrap_or_else(|| std::env::consts::OS.to_string());
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
        let env = capture(BTreeMap::new(), vec!["x".into()]);
        assert!(env.cores >= 1);
        assert!(env.kernel.starts_with("Linux"), "{}", env.kernel);
        assert!(env.memory_bytes > 0);
    }
}
