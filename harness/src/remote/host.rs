//! A host as the user names it (`[USER@]HOST[:PORT]`), and the OpenSSH command that reaches it:
//! `ssh` in batch mode (never a password prompt), with the user's own configuration read as
//! usual and the run's `--ssh-option`s added as `-o`.

use std::process::Command;

/// `[USER@]HOST[:PORT]`, as given to `--client-host` or `--server-host`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostSpec {
    pub user: Option<String>,
    pub host: String,
    pub port: Option<u16>,
}

/// A host that is not `[USER@]HOST[:PORT]`; the message names the option and shows how to write one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadHost(pub String);

impl HostSpec {
    pub fn parse(text: &str) -> Result<HostSpec, BadHost> {
        HostSpec::parse_as("--client-host", text)
    }

    /// `parse` of the value of `option`, which errors name.
    pub fn parse_as(option: &str, text: &str) -> Result<HostSpec, BadHost> {
        let bad = |why: &str| BadHost(format!("{option} '{text}': {why}; write [USER@]HOST[:PORT], such as root@192.0.2.7 or bench-client:2222"));
        let (user, rest) = match text.split_once('@') {
            Some(("", _)) => return Err(bad("the user before @ is empty")),
            Some((u, r)) => (Some(u.to_string()), r),
            None => (None, text),
        };
        // [v6]:port, v6 alone (more than one colon), or name:port.
        let (host, port) = if let Some(inner) = rest.strip_prefix('[') {
            let (h, after) = inner.split_once(']').ok_or_else(|| bad("a '[' without its ']'"))?;
            (h, after.strip_prefix(':'))
        } else if rest.matches(':').count() > 1 {
            (rest, None)
        } else {
            match rest.split_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (rest, None),
            }
        };
        if host.is_empty() || host.starts_with('-') || host.contains(char::is_whitespace) {
            return Err(bad("the host name is empty or not a name"));
        }
        let port = port.map(|p| p.parse::<u16>().ok().filter(|p| *p > 0).ok_or_else(|| bad("the port is not a number from 1 to 65535"))).transpose()?;
        Ok(HostSpec { user, host: host.to_string(), port })
    }

    /// `[user@]host` as ssh takes it.
    fn destination(&self) -> String {
        match &self.user {
            Some(u) => format!("{u}@{}", self.host),
            None => self.host.clone(),
        }
    }
}

impl std::fmt::Display for HostSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let host = if self.host.contains(':') { format!("[{}]", self.host) } else { self.host.clone() };
        match (&self.user, self.port) {
            (Some(u), Some(p)) => write!(f, "{u}@{host}:{p}"),
            (Some(u), None) => write!(f, "{u}@{host}"),
            (None, Some(p)) => write!(f, "{host}:{p}"),
            (None, None) => write!(f, "{host}"),
        }
    }
}

/// What every ssh call is given: batch mode, bounded connects, a dead peer noticed within
/// about 10 s, and the run's own options.
fn common_options(extra: &[String]) -> Vec<String> {
    let mut o: Vec<String> = ["BatchMode=yes", "ConnectTimeout=10", "ServerAliveInterval=5", "ServerAliveCountMax=2"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    o.extend(extra.iter().cloned());
    o.into_iter().flat_map(|v| ["-o".to_string(), v]).collect()
}

/// `ssh ... HOST -- COMMAND`: COMMAND is run by the remote user's shell. Its stdin is not given here. The
/// client ends with this process (`tie_to_parent`), and with it the remote side's channel.
pub fn ssh(spec: &HostSpec, options: &[String], command: &str) -> Command {
    let mut c = Command::new("ssh");
    c.args(common_options(options));
    if let Some(p) = spec.port {
        c.arg("-p").arg(p.to_string());
    }
    c.arg(spec.destination()).arg("--").arg(command);
    crate::os::process::tie_to_parent(&mut c);
    c
}

/// The command line as a person would type it, for errors and the record.
pub fn shown(c: &Command) -> String {
    std::iter::once(c.get_program()).chain(c.get_args()).map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_specs() {
        let s = HostSpec::parse("root@198.18.1.2:2222").unwrap();
        assert_eq!((s.user.as_deref(), s.host.as_str(), s.port), (Some("root"), "198.18.1.2", Some(2222)));
        assert_eq!(s.to_string(), "root@198.18.1.2:2222");
        let s = HostSpec::parse("client-a").unwrap();
        assert_eq!((s.user, s.host.as_str(), s.port), (None, "client-a", None));
        let s = HostSpec::parse("u@[2001:db8::1]:22").unwrap();
        assert_eq!((s.host.as_str(), s.port), ("2001:db8::1", Some(22)));
        assert_eq!(HostSpec::parse("2001:db8::1").unwrap().port, None);
        for bad in ["@h", "h:0", "h:x", "", "-oProxyCommand=x", "u@[::1"] {
            assert!(HostSpec::parse(bad).unwrap_err().0.contains("[USER@]HOST[:PORT]"), "{bad}");
        }
    }

    #[test]
    fn ssh_runs_in_batch_mode_with_the_runs_options() {
        let spec = HostSpec::parse("root@h:2200").unwrap();
        let line = shown(&ssh(&spec, &["IdentityFile=/k".into()], "uname -m"));
        assert_eq!(
            line,
            "ssh -o BatchMode=yes -o ConnectTimeout=10 -o ServerAliveInterval=5 -o ServerAliveCountMax=2 -o IdentityFile=/k -p 2200 root@h -- uname -m"
        );
    }
}
