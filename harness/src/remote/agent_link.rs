//! The harness's end of the channel to the agent on the server host: the ssh client that runs
//! `serverbench agent` there, one request and its reply at a time (`agent_protocol`), and what ssh said
//! when the channel ends. Every error names the host.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;

use super::agent_protocol::{Reply, Request};

/// Lines of ssh's (and the agent's) stderr kept for an error message.
const KEPT_LINES: usize = 5;
/// How long a closed channel's ssh client is given to exit, for its status.
const EXIT_WAIT: Duration = Duration::from_secs(3);
/// How long the agent is given to end its servers and exit once its channel is closed.
const AGENT_END_WAIT: Duration = Duration::from_secs(10);

pub struct AgentLink {
    /// `server host [USER@]HOST`, the start of every error.
    name: String,
    io: Mutex<Option<(ChildStdin, BufReader<ChildStdout>)>>,
    child: Mutex<Child>,
    said: Arc<Mutex<Vec<String>>>,
}

impl AgentLink {
    /// Runs `ssh` (the agent's command line there) and waits for the agent's first line.
    pub fn open(name: String, mut ssh: Command) -> anyhow::Result<AgentLink> {
        let mut child = ssh.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().context("cannot run ssh")?;
        let input = child.stdin.take().expect("piped");
        let output = BufReader::new(child.stdout.take().expect("piped"));
        let errors = child.stderr.take().expect("piped");
        let said = Arc::new(Mutex::new(Vec::new()));
        let keep = said.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(errors).lines().map_while(Result::ok) {
                let mut kept = keep.lock().unwrap_or_else(|e| e.into_inner());
                kept.push(line);
                if kept.len() > KEPT_LINES {
                    kept.remove(0);
                }
            }
        });
        let link = AgentLink { name, io: Mutex::new(Some((input, output))), child: Mutex::new(child), said };
        match link.read()? {
            Reply::Ready { .. } => Ok(link),
            other => anyhow::bail!("{}: the agent did not start: {other:?}", link.name),
        }
    }

    /// Sends `request` and reads its reply; a `Failed` reply, or a channel that closed, is an error.
    pub fn call(&self, request: &Request) -> anyhow::Result<Reply> {
        {
            let mut io = self.io.lock().unwrap_or_else(|e| e.into_inner());
            let (input, _) = io.as_mut().ok_or_else(|| anyhow::anyhow!("{}: the channel to the agent is closed", self.name))?;
            if input.write_all(request.to_line().as_bytes()).and_then(|()| input.flush()).is_err() {
                drop(io);
                return Err(self.lost());
            }
        }
        self.read()
    }

    fn read(&self) -> anyhow::Result<Reply> {
        let mut line = String::new();
        let got = {
            let mut io = self.io.lock().unwrap_or_else(|e| e.into_inner());
            let (_, output) = io.as_mut().ok_or_else(|| anyhow::anyhow!("{}: the channel to the agent is closed", self.name))?;
            output.read_line(&mut line)
        };
        if !matches!(got, Ok(n) if n > 0) {
            return Err(self.lost());
        }
        match serde_json::from_str::<Reply>(line.trim()) {
            Ok(Reply::Failed { error }) => anyhow::bail!("{}: {error}", self.name),
            Ok(reply) => Ok(reply),
            Err(e) => anyhow::bail!("{}: the agent said {:?}, not a reply ({e})", self.name, line.trim()),
        }
    }

    /// The error of a channel that ended: ssh's status and last words.
    fn lost(&self) -> anyhow::Error {
        let mut child = self.child.lock().unwrap_or_else(|e| e.into_inner());
        let status = wait_for(&mut child, EXIT_WAIT);
        let said = self.said.lock().unwrap_or_else(|e| e.into_inner()).join(" / ");
        let how = match status {
            Some(s) if s.code() == Some(255) => format!("the ssh connection failed or was cut ({s})"),
            Some(s) => format!("the agent exited ({s})"),
            None => "its channel closed".to_string(),
        };
        anyhow::anyhow!("{}: {how}{}", self.name, if said.is_empty() { String::new() } else { format!(": {said}") })
    }

    /// Closes the channel: the agent ends its servers and exits; ssh is killed if it outlasts that.
    pub fn close(&self) {
        drop(self.io.lock().unwrap_or_else(|e| e.into_inner()).take());
        let mut child = self.child.lock().unwrap_or_else(|e| e.into_inner());
        if wait_for(&mut child, AGENT_END_WAIT).is_none() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for AgentLink {
    fn drop(&mut self) {
        self.close();
    }
}

fn wait_for(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let since = Instant::now();
    loop {
        if let Ok(Some(s)) = child.try_wait() {
            return Some(s);
        }
        if since.elapsed() >= limit {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
