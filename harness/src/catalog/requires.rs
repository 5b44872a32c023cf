//! Dependency checks: the commands a contestant requires and the Debian packages it needs. Missing
//! packages are installed when the process is root and apt is there; otherwise the contestant is
//! skipped with the exact command that would fix it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

use super::Contestant;

/// What this machine offers for installing packages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct System {
    pub is_root: bool,
    pub has_apt: bool,
    pub has_dpkg: bool,
}

impl System {
    pub fn detect() -> System {
        System {
            // SAFETY: geteuid takes nothing and cannot fail.
            is_root: unsafe { libc::geteuid() } == 0,
            has_apt: find_command("apt-get").is_some(),
            has_dpkg: find_command("dpkg-query").is_some(),
        }
    }
    /// Whether missing packages can be installed by this process.
    pub fn can_install(&self) -> bool {
        self.is_root && self.has_apt && self.has_dpkg
    }
}

/// Whether a contestant can run here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Readiness {
    Ready,
    /// These packages are missing and will be installed (root, apt present).
    Install(Vec<String>),
    /// It cannot run; `reason` says why and includes the command that fixes it.
    Missing { reason: String },
}

/// Checks without changing anything.
pub fn check(c: &Contestant, sys: System) -> Readiness {
    if let Some(reason) = c.unsupported_here() {
        return Readiness::Missing { reason };
    }
    let missing_pkgs: Vec<String> = if sys.has_dpkg {
        c.apt.iter().filter(|p| !package_installed(p)).cloned().collect()
    } else {
        Vec::new()
    };
    let missing_cmds: Vec<&String> = c.requires.iter().filter(|r| find_command(r).is_none()).collect();
    if missing_pkgs.is_empty() && missing_cmds.is_empty() {
        return Readiness::Ready;
    }
    if !missing_pkgs.is_empty() && sys.can_install() {
        // The commands may come with the packages; they are checked again after installing.
        return Readiness::Install(missing_pkgs);
    }
    Readiness::Missing { reason: missing_reason(c, &missing_pkgs, &missing_cmds, sys) }
}

fn missing_reason(c: &Contestant, pkgs: &[String], cmds: &[&String], sys: System) -> String {
    let sudo = if sys.is_root { "" } else { "sudo " };
    let mut parts = Vec::new();
    if !pkgs.is_empty() {
        parts.push(format!(
            "needs Debian packages {} (fix: `{sudo}apt-get install -y {}`)",
            pkgs.join(", "),
            pkgs.join(" ")
        ));
    }
    for cmd in cmds {
        let fix = match (c.apt.is_empty(), package_for_command(cmd)) {
            (false, _) if !pkgs.is_empty() => "it should come with the packages above".to_string(),
            (_, Some(pkg)) => format!("fix: `{sudo}apt-get install -y {pkg}`"),
            (_, None) => format!("install {}", hint_for_command(cmd)),
        };
        parts.push(format!("command `{cmd}` not found on PATH; {fix}"));
    }
    parts.join("; ")
}

/// Installs `packages` with apt-get, appending its output to `log`. `apt-get update` runs at most once per
/// process, before the first install.
pub fn install(packages: &[String], log: &Path) -> anyhow::Result<()> {
    static UPDATED: Mutex<bool> = Mutex::new(false);
    let mut updated = UPDATED.lock().unwrap_or_else(|e| e.into_inner());
    if !*updated {
        apt(&["update"], log)?;
        *updated = true;
    }
    let mut args = vec!["install", "-y", "--no-install-recommends"];
    args.extend(packages.iter().map(String::as_str));
    apt(&args, log)
}

fn apt(args: &[&str], log: &Path) -> anyhow::Result<()> {
    let out = std::fs::OpenOptions::new().create(true).append(true).open(log)?;
    let status = Command::new("apt-get")
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out)
        .status()?;
    anyhow::ensure!(status.success(), "`apt-get {}` failed ({status}); see {}", args.join(" "), log.display());
    Ok(())
}

/// The path of a command: itself when it holds a '/', else the first executable match on PATH.
pub fn find_command(cmd: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt as _;
    let executable =
        |p: &Path| std::fs::metadata(p).map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false);
    if cmd.contains('/') {
        let p = PathBuf::from(cmd);
        return executable(&p).then_some(p);
    }
    std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).map(|d| d.join(cmd)).find(|p| executable(p)))
        .unwrap_or(None)
}

/// Whether dpkg knows the package as installed.
pub fn package_installed(pkg: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${db:Status-Status}", pkg])
        .stderr(Stdio::null())
        .output()
        .map(|o| o.status.success() && o.stdout == b"installed")
        .unwrap_or(false)
}

/// The Debian package that provides a common command, where that is well known.
fn package_for_command(cmd: &str) -> Option<&'static str> {
    Some(match cmd {
        "cc" | "gcc" => "gcc",
        "c++" | "g++" => "g++",
        "make" => "make",
        "cmake" => "cmake",
        "pkg-config" => "pkg-config",
        "nginx" => "nginx",
        "erl" | "erlc" => "erlang-nox",
        "ldc2" => "ldc",
        "rebar3" => "rebar3",
        "mvn" => "maven",
        "python3" => "python3",
        "wrk" => "wrk",
        "h2load" => "nghttp2-client",
        _ => return None,
    })
}

fn hint_for_command(cmd: &str) -> &'static str {
    match cmd {
        "cargo" | "rustc" => "Rust (https://rustup.rs) and put it on PATH",
        "go" => "Go (https://go.dev/dl) and put it on PATH",
        "java" | "javac" => "a JDK 25 (the version the Java contestants pin) and put it on PATH or under /usr/lib/jvm",
        "node" | "npm" => "Node.js 20 or newer and put it on PATH",
        _ => "it and put it on PATH",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn contestant(requires: &[&str], apt: &[&str]) -> Contestant {
        Contestant {
            name: "x".into(),
            family: "x".into(),
            variant: None,
            display: "x".into(),
            language: "c".into(),
            framework: "x".into(),
            category: "micro".into(),
            model: "per-core".into(),
            io: "epoll".into(),
            style: None,
            scenarios: vec!["hello".into()],
            requires: requires.iter().map(|s| s.to_string()).collect(),
            apt: apt.iter().map(|s| s.to_string()).collect(),
            build: None,
            run: "x {port}".into(),
            version: None,
            env: BTreeMap::new(),
            unsupported: BTreeMap::new(),
            unsupported_scenarios: BTreeMap::new(),
            unsupported_checks: BTreeMap::new(),
            dir: "/".into(),
            manifest: "/contestant.toml".into(),
        }
    }

    const NO_APT: System = System { is_root: false, has_apt: false, has_dpkg: false };

    #[test]
    fn present_commands_are_ready() {
        assert_eq!(check(&contestant(&["sh"], &[]), NO_APT), Readiness::Ready);
    }

    #[test]
    fn a_missing_command_says_how_to_fix_it() {
        let Readiness::Missing { reason } = check(&contestant(&["sh", "no-such-cmd-x", "make-nope"], &[]), NO_APT)
        else {
            panic!("expected missing")
        };
        assert!(reason.contains("command `no-such-cmd-x` not found on PATH"), "{reason}");
        assert!(!reason.contains("`sh`"), "{reason}");
    }

    #[test]
    fn a_well_known_command_names_its_package() {
        let Readiness::Missing { reason } =
            check(&contestant(&["/nonexistent/bin/nginx"], &[]), NO_APT)
        else {
            panic!("expected missing")
        };
        assert!(reason.contains("not found"), "{reason}");
        assert_eq!(package_for_command("erl"), Some("erlang-nox"));
    }

    #[test]
    fn missing_packages_give_the_apt_command() {
        let sys = System { is_root: false, has_apt: true, has_dpkg: true };
        if find_command("dpkg-query").is_none() {
            return crate::testing::skip("catalog::requires::tests::missing_packages_give_the_apt_command", "dpkg-query is not installed (not a Debian system)");
        }
        let Readiness::Missing { reason } = check(&contestant(&[], &["serverbench-no-such-package"]), sys) else {
            panic!("expected missing")
        };
        assert!(reason.contains("`sudo apt-get install -y serverbench-no-such-package`"), "{reason}");
        let root = System { is_root: true, ..sys };
        assert_eq!(
            check(&contestant(&[], &["serverbench-no-such-package"]), root),
            Readiness::Install(vec!["serverbench-no-such-package".into()])
        );
    }
}
