//! `serverbench bench`'s options: declared once here (clap) and checked into the `run::options::BenchOptions`
//! every part of a run reads. A check that needs the machine (CPUs, tools, addresses) is made here, before
//! any work starts.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;

use super::rounds::{parse_budget, rounds_asked, Budget, RoundsAsked};
use super::{ab, load, mix, parse_duration, parse_percent, BadValue, SelectArgs};
use crate::load::search::Slo;
use crate::launch::server::STOP_GRACE;
use crate::os::cpus::CpuSet;
use crate::run::options::{
    BenchOptions, ModeKind, Remote, Rounds, RunType, StopRule, SyscallCounting, Tool, DEFAULT_AB_ROUND, DEFAULT_LOAD_FRACTIONS, DEFAULT_ROUND,
    DEFAULT_TARGET_CI_PCT,
};
use crate::run::tools::hey;
use crate::wire::Scenario;

/// `--rate`: a number of requests per second, or `auto`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RateArg {
    PerS(f64),
    Auto,
}

fn parse_rate(s: &str) -> Result<RateArg, BadValue> {
    if s == "auto" {
        return Ok(RateArg::Auto);
    }
    s.parse::<f64>()
        .map(RateArg::PerS)
        .map_err(|_| BadValue(format!("`{s}` is neither a rate in requests per second nor `auto`")))
}

/// Whether server and client get CPUs of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CpuSharing {
    Split,
    Shared,
}

#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    #[command(flatten)]
    pub select: SelectArgs,
    /// Scenarios to run, one or a list (hello, hello-timeout, plaintext, json, echo, work, counter, file).
    #[arg(long, value_delimiter = ',', default_value = Scenario::Hello.name(), value_name = "LIST")]
    pub scenario: Vec<String>,
    /// How requests are paced.
    #[arg(long, value_enum, default_value_t = ModeKind::Throughput)]
    pub mode: ModeKind,
    /// Connections: one value or a list such as 8,64,256 (each is its own measurement) [default: 64; 4
    /// with --echo stream]
    #[arg(short = 'c', long = "connections", value_delimiter = ',', value_name = "N[,N...]")]
    pub connections: Option<Vec<usize>>,
    /// Requests in flight per connection (HTTP pipelining; for plaintext).
    #[arg(long, default_value_t = 1, value_name = "P")]
    pub pipeline: u32,
    /// Every request on a new connection (HTTP: with Connection: close; echo: one exchange each), instead
    /// of keep-alive; latency then runs from the start of the connect.
    #[arg(long = "connection-per-request")]
    pub connection_per_request: bool,
    /// How the `echo` scenario's client talks: pingpong (write 512 bytes, read them back, repeat; a latency
    /// per exchange) or stream (each connection writes and reads at once, as fast as both sides go;
    /// echoes of 512 bytes per second and bandwidth, no latency)
    #[arg(long, value_enum, default_value_t = load::EchoArg::Pingpong)]
    pub echo: load::EchoArg,
    /// Leave out the run's control: the minimal hello server of harness/control, otherwise measured in
    /// every run with `hello` (interleaved like the contestants, never ranked) so that `compare` can tell
    /// the machine's change from a server's
    #[arg(long = "no-control")]
    pub no_control: bool,
    #[command(flatten)]
    pub mix: mix::MixArgs,
    /// Sweep the servers' `{workers}` over this list (such as 1,2,4; capped at the server CPUs): each
    /// count is its own measurement, and the HTML report draws req/s and p99 against workers.
    #[arg(long, value_delimiter = ',', value_name = "N[,N...]")]
    pub workers: Vec<usize>,
    /// singleCore: the server gets one CPU and one worker; multiCore: all server CPUs, one worker each.
    #[arg(long = "type", value_enum, default_value_t = RunType::SingleCore)]
    pub run_type: RunType,
    /// CPUs for the servers, as taskset -c takes them [default: the upper half]
    #[arg(long, value_name = "LIST")]
    pub server_cpus: Option<String>,
    /// CPUs for the load generator [default: the CPUs the servers do not get]
    #[arg(long, value_name = "LIST")]
    pub client_cpus: Option<String>,
    /// split: server and client on CPUs of their own (see --server-cpus); shared: both on every CPU this
    /// process may use (for CPU-heavy `work` runs on a small machine; the run says so and reports the
    /// client's CPU share)
    #[arg(long, value_enum, default_value_t = CpuSharing::Split, conflicts_with_all = ["server_cpus", "client_cpus"])]
    pub cpus: CpuSharing,
    /// Load generator threads [default: one per client CPU]
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Warm-up rounds per configuration (run, then discarded).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub warmup: u32,
    /// Measured rounds per configuration: auto (until the median's 95% interval is within --target-ci, at
    /// least 6, at most --max-rounds) or a count. Rounds left out as disturbed are run again.
    #[arg(long, default_value = "auto", value_name = "auto|N")]
    pub rounds: String,
    /// With --rounds auto: the half-width of the median's 95% interval to reach, in percent [default: 3%] (an A/B run stops when decided instead)
    #[arg(long = "target-ci", value_parser = parse_percent, value_name = "PCT")]
    pub target_ci: Option<f64>,
    /// The most measured rounds per configuration, left-out ones included [default: 16 with auto, 2 x N; A/B pairs: 80 with auto]
    #[arg(long, value_name = "N")]
    pub max_rounds: Option<u32>,
    /// With --rounds auto: the wall time of the run's measuring (from the first server's start; installs and
    /// builds not counted), within which its measured passes stop (never below the fewest rounds with an
    /// interval): 330s, 10m, or off [default: 5m]
    #[arg(long, value_parser = parse_budget, value_name = "TIME|off")]
    pub budget: Option<Budget>,
    /// Length of a round: 1, 1s, 500ms, 1m [default: 250ms; 500ms in an A/B run]
    #[arg(short, long, value_parser = parse_duration, value_name = "TIME")]
    pub duration: Option<Duration>,
    /// Requests per connection in a round, instead of a duration.
    #[arg(short = 'n', long = "requests", value_name = "N", conflicts_with = "duration")]
    pub requests: Option<u64>,
    /// Think time between a response and the next request (--mode latency): 1ms, 200us, 0.5ms
    #[arg(long = "think-time", value_parser = parse_duration, default_value = "1ms", value_name = "TIME")]
    pub think_time: Duration,
    /// Total request rate for --mode rate, requests per second; or `auto`: each server at shares of its
    /// own capacity (--load-fraction), measured first by throughput rounds.
    #[arg(long, value_parser = parse_rate, value_name = "REQ_PER_S|auto")]
    pub rate: Option<RateArg>,
    /// With --rate auto: the shares of each server's capacity to run at, comma-separated [default: 0.5,0.9]
    #[arg(long = "load-fraction", value_delimiter = ',', value_name = "SHARE")]
    pub load_fraction: Option<Vec<f64>>,
    /// After its rounds, find each contestant's capacity under a latency objective such as p99<1ms:
    /// rate rounds, bracketed and bisected to 5% (as `load --search`); a column in every report.
    #[arg(long, value_name = "OBJECTIVE")]
    pub search: Option<String>,
    /// The load generator: builtin, wrk / h2load / ab (installed from Debian when missing, as root), or hey
    /// (built from tools/hey with Go).
    #[arg(long, value_enum, default_value_t = Tool::Builtin)]
    pub tool: Tool,
    /// How the built-in load generator moves bytes: io_uring, io_uring-sqpoll (a kernel thread on each client
    /// thread's CPU takes the submissions), epoll, or auto (io_uring when the kernel has it)
    #[arg(long = "client-io", value_enum, default_value = "auto")]
    pub client_io: load::IoArg,
    /// How the built-in load generator waits for the kernel: sleep, or busy (poll without sleeping, on
    /// client CPUs of its own: the server's CPU then pays no wake-ups of the client; see
    /// docs/load-generator.md)
    #[arg(long = "client-poll", value_enum, default_value = "sleep")]
    pub client_poll: load::PollArg,
    #[command(flatten)]
    pub interval: load::IntervalArgs,
    /// Where run folders are written [default: <repo>/results]
    #[arg(short, long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// A request unanswered this long counts as a timeout error.
    #[arg(long, value_parser = parse_duration, default_value = "5s", value_name = "TIME")]
    pub timeout: Duration,
    /// How long a server may take to accept its first connection.
    #[arg(long, value_parser = parse_duration, default_value = "30s", value_name = "TIME")]
    pub start_timeout: Duration,
    /// Build even when sources are unchanged since the last successful build.
    #[arg(long)]
    pub rebuild: bool,
    /// Never install missing Debian packages (by default they are installed when running as root).
    #[arg(long)]
    pub no_install: bool,
    /// Before measuring, run `serverbench check`'s suite (all but the scale check) on each contestant
    /// and record the outcome in run.json and summary.md.
    #[arg(long)]
    pub check: bool,
    /// When to count the servers' system calls per request, by name (kernel tracepoints on the server
    /// CPUs). While counting, every system call on the machine costs about 200 ns more (6% of c-epoll's CPU
    /// per request), so by default the counts come from one extra round after the measured ones, which no
    /// other figure reads; `rounds` counts in every measured round (the flag alone means that), `off` not at all.
    #[arg(long, value_enum, value_name = "WHEN", default_value = "extra", num_args = 0..=1, default_missing_value = "rounds")]
    pub syscall_counts: SyscallCounting,
    /// After each measurement's other rounds, one more while Linux perf samples the server's CPUs: stacks in
    /// profiles/, a flame graph in report.html (in an A/B run, two a version and B's against A's); the round
    /// is in no other figure (docs/profile.md)
    #[arg(long)]
    pub profile: bool,
    /// Generate the load on this host over ssh instead of here ([USER@]HOST[:PORT], repeatable): the
    /// connections are shared over the hosts and their reports merged (docs/distributed.md)
    #[arg(long = "client-host", value_name = "[USER@]HOST[:PORT]")]
    pub client_host: Vec<String>,
    /// The address the servers listen on and the load connects to: this machine's, or with --server-host
    /// the server host's [default: 127.0.0.1]
    #[arg(long = "server-address", value_name = "IP")]
    pub server_address: Option<std::net::IpAddr>,
    /// An ssh option for every ssh call to the client and server hosts, as `-o` takes it (repeatable):
    /// IdentityFile=~/.ssh/bench, UserKnownHostsFile=...
    #[arg(long = "ssh-option", value_name = "OPTION=VALUE")]
    pub ssh_option: Vec<String>,
    /// How far a client host's clock may be from this machine's (each worker's start is corrected by its
    /// measured offset; beyond this the host is refused)
    #[arg(long = "clock-tolerance", value_parser = parse_duration, default_value = "100ms", value_name = "TIME")]
    pub clock_tolerance: Duration,
    /// Build and run the servers on this host over ssh ([USER@]HOST[:PORT]): an agent there starts, pins
    /// and probes them; needs --server-address, that host's address (docs/distributed.md)
    #[arg(long = "server-host", value_name = "[USER@]HOST[:PORT]")]
    pub server_host: Option<String>,
    /// Where the project's checkout is on the server host; it is not copied [default: the same absolute
    /// path as here]
    #[arg(long = "server-checkout", value_name = "PATH")]
    pub server_checkout: Option<PathBuf>,
    #[command(flatten)]
    pub ab: ab::AbArgs,
}

impl BenchArgs {
    /// `--server-cpus` or `--client-cpus` as given; with `--cpus shared`, every CPU this process may use.
    fn cpu_list(&self, given: &Option<String>) -> Option<String> {
        match self.cpus {
            CpuSharing::Split => given.clone(),
            CpuSharing::Shared => Some(crate::os::cpus::CpuSet::allowed().to_string()),
        }
    }

    fn rounds_rule(&self) -> anyhow::Result<Rounds> {
        anyhow::ensure!(
            !(self.ab.is_ab() && self.target_ci.is_some()),
            "an A/B run stops when its verdict is decided, not at an interval's width: leave out --target-ci (--same-band, --change-band and --max-rounds set what it decides and how long it may try)"
        );
        Rounds::parse(&self.rounds, self.target_ci.unwrap_or(DEFAULT_TARGET_CI_PCT))
    }

    /// `-c` as given; otherwise 64, or 4 with `--echo stream` (a few connections fill both sides' buffers,
    /// as PhotonLibOS's streaming benchmark runs it).
    pub fn connections(&self) -> Vec<usize> {
        let default = if self.echo == load::EchoArg::Stream { ECHO_STREAM_CONNECTIONS } else { DEFAULT_CONNECTIONS };
        self.connections.clone().unwrap_or_else(|| vec![default])
    }
}

const DEFAULT_CONNECTIONS: usize = 64;
const ECHO_STREAM_CONNECTIONS: usize = 4;

/// `bench` alone, for callers that hold its arguments as a list (the tests).
#[derive(Debug, clap::Parser)]
#[command(name = "bench")]
struct BenchOnly {
    #[command(flatten)]
    args: BenchArgs,
}

impl BenchArgs {
    /// `serverbench bench ARGS...` parsed, as the command line would parse it.
    pub fn parse(args: &[&str]) -> Result<BenchArgs, clap::Error> {
        use clap::Parser;
        BenchOnly::try_parse_from(std::iter::once("bench").chain(args.iter().copied())).map(|b| b.args)
    }
}

impl BenchArgs {
    /// The options every part of a run reads, checked before any work starts; paths resolve against the
    /// repository root `root`.
    pub fn options(&self, root: &Path, command_line: Vec<String>) -> anyhow::Result<BenchOptions> {
        let catalog_root = self.select.contestants.clone().unwrap_or_else(|| root.join("contestants"));
        let out_dir = self.out.clone().unwrap_or_else(|| root.join("results"));
        let rounds = self.rounds_rule()?;
        let mix = self.mix.options();
        let rate_given = match self.rate {
            Some(RateArg::PerS(r)) => Some(r),
            _ => None,
        };
        let rate_auto = self.rate == Some(RateArg::Auto);
        let client_poll_wanted: crate::load::Poll = self.client_poll.into();
        let mut notes = Vec::new();
        for s in &self.scenario {
            anyhow::ensure!(Scenario::parse(s).is_some(), "unknown scenario '{s}'; allowed: {}", Scenario::NAMES.join(", "));
        }
        anyhow::ensure!(!self.scenario.is_empty(), "give at least one --scenario");
        let connections = self.connections();
        anyhow::ensure!(!connections.is_empty() && connections.iter().all(|&n| n > 0), "-c takes connection counts above 0, such as 64 or 8,64,256");
        if self.echo == load::EchoArg::Stream {
            anyhow::ensure!(
                self.scenario.iter().any(|s| s == Scenario::Echo.name()),
                "--echo stream shapes the echo scenario: add --scenario echo"
            );
            anyhow::ensure!(self.mode == ModeKind::Throughput, "--echo stream runs in throughput mode only (it has no requests to pace)");
            anyhow::ensure!(!self.connection_per_request, "--echo stream has no exchanges to put on a connection each; --connection-per-request takes pingpong");
        }
        anyhow::ensure!(self.pipeline >= 1, "--pipeline must be at least 1");
        let scenarios: Vec<Scenario> = self.scenario.iter().filter_map(|s| Scenario::parse(s)).collect();
        mix.check_against(&scenarios)?;
        let RoundsAsked { max_rounds, budget } = rounds_asked(rounds, self.max_rounds, self.budget, &self.ab)?;
        anyhow::ensure!(
            !(self.connection_per_request && self.pipeline > 1),
            "--pipeline {} needs a connection that carries several requests; --connection-per-request sends one",
            self.pipeline
        );
        if self.pipeline > 1 && self.scenario.iter().any(|s| s != Scenario::Plaintext.name()) {
            notes.push("--pipeline is meant for the plaintext scenario (servers that parse requests); other scenarios answer per read".into());
        }

        let allowed = CpuSet::allowed();
        let (default_server, default_client) = CpuSet::split(&allowed);
        let server_all = match &self.cpu_list(&self.server_cpus) {
            Some(s) => CpuSet::parse(s)?,
            None => default_server,
        };
        let client_cpus = match &self.cpu_list(&self.client_cpus) {
            Some(s) => CpuSet::parse(s)?,
            None => default_client,
        };
        // With a server host, the server CPUs are that host's: its agent checks them there.
        let here = self.server_host.is_none();
        for (what, set) in [("--server-cpus", &server_all), ("--client-cpus", &client_cpus)].into_iter().filter(|(w, _)| here || *w != "--server-cpus") {
            anyhow::ensure!(set.is_subset_of(&allowed), "{what} {set} is outside the CPUs this process may use ({allowed})");
        }
        let server_cpus = match self.run_type {
            RunType::SingleCore => server_all.first(),
            RunType::MultiCore => server_all,
        };
        // multiCore with one server CPU would quietly be singleCore under another name.
        anyhow::ensure!(
            self.run_type == RunType::SingleCore || server_cpus.len() >= 2,
            "--type multiCore needs at least two server CPUs, and the server gets only CPU {server_cpus} of the {} this \
             process may use ({allowed}); give the CPUs with --server-cpus LIST --client-cpus LIST (they may overlap, \
             e.g. both 0-1, and the run then says that server and client shared them), or use --type singleCore",
            allowed.len()
        );
        // The client competes with the servers only for CPUs of one machine.
        let server_cpus_here = if here { server_cpus.clone() } else { CpuSet::new(Vec::new()) };
        if server_cpus_here.overlaps(&client_cpus) {
            notes.push(format!(
                "server CPUs {server_cpus} and client CPUs {client_cpus} overlap: the two compete, and the figures measure both"
            ));
        }
        let workers = server_cpus.len();
        let workers_sweep = workers_sweep(&self.workers, server_cpus.len(), &mut notes)?;
        let client_threads = self.threads.unwrap_or(client_cpus.len()).max(1);

        let stop = match (self.duration, self.requests) {
            (Some(_), Some(_)) => anyhow::bail!("give -d/--duration or -n/--requests, not both"),
            (_, Some(0)) => anyhow::bail!("-n must be at least 1"),
            (_, Some(n)) => StopRule::Requests(n),
            (Some(d), None) => {
                anyhow::ensure!(!d.is_zero(), "-d must be above 0");
                StopRule::Duration(d)
            }
            (None, None) if self.ab.is_ab() => StopRule::Duration(DEFAULT_AB_ROUND),
            (None, None) => StopRule::Duration(DEFAULT_ROUND),
        };
        anyhow::ensure!(!(rate_auto && rate_given.is_some()), "give --rate a number or auto, not both");
        let load_fractions = match (rate_auto, &self.load_fraction) {
            (false, Some(_)) => anyhow::bail!("--load-fraction applies to --rate auto only"),
            (false, None) => Vec::new(),
            (true, _) if self.mode != ModeKind::Rate => anyhow::bail!("--rate applies to --mode rate only"),
            (true, None) => DEFAULT_LOAD_FRACTIONS.to_vec(),
            (true, Some(f)) => {
                anyhow::ensure!(!f.is_empty(), "--load-fraction needs at least one share, such as 0.5");
                if let Some(bad) = f.iter().find(|f| !(**f > 0.0 && **f <= 1.0)) {
                    anyhow::bail!("--load-fraction {bad}: each share of the capacity must be above 0 and at most 1");
                }
                f.clone()
            }
        };
        let rate_per_s = match (self.mode, rate_given) {
            (ModeKind::Rate, None) if rate_auto => None,
            (ModeKind::Rate, None) => anyhow::bail!("--mode rate needs --rate REQUESTS_PER_S or --rate auto"),
            (ModeKind::Rate, Some(r)) if r.is_nan() || r <= 0.0 => anyhow::bail!("--rate must be above 0"),
            (ModeKind::Rate, r) => r,
            (_, Some(_)) => anyhow::bail!("--rate applies to --mode rate only"),
            (_, None) => None,
        };
        let search = match &self.search {
            None => None,
            Some(text) => {
                anyhow::ensure!(self.tool == Tool::Builtin, "--search runs rate rounds of the built-in load generator: use --tool builtin");
                anyhow::ensure!(matches!(stop, StopRule::Duration(_)), "--search runs rounds of -d/--duration, not -n");
                Some(Slo::parse(text)?)
            }
        };

        self.check_tool(root, &scenarios, &mix, stop)?;

        let remote = self.remote(&scenarios, root, &catalog_root)?;
        let ab = self.ab.options(&catalog_root, self.scenario.len() == 1 && self.connections().len() == 1 && self.workers.len() <= 1 && !rate_auto && self.search.is_none(), self.server_host.is_some())?;
        let (client_io, client_io_name) = crate::load::resolve_io(self.client_io.into()).map_err(|e| anyhow::anyhow!("--client-{e}"))?;
        let client_poll = client_poll(client_poll_wanted, &server_cpus_here, &client_cpus, client_threads)?;
        anyhow::ensure!(
            client_io != crate::load::IoBackend::IoUringSqpoll || !server_cpus_here.overlaps(&client_cpus),
            "--client-io io_uring-sqpoll pins a kernel thread to each client thread's CPU, which must not be a server's: \
             client on CPUs {client_cpus}, servers on {server_cpus}"
        );

        Ok(BenchOptions {
            catalog_root,
            repo_root: root.to_path_buf(),
            selection: self.select.selection(),
            scenarios: self.scenario.clone(),
            mode: self.mode,
            think_time: self.think_time,
            rate_per_s,
            load_fractions,
            search,
            connections,
            pipeline: self.pipeline,
            connection_per_request: self.connection_per_request,
            echo: self.echo.into(),
            control: !self.no_control && ab.is_none(),
            mix,
            run_type: self.run_type,
            server_cpus,
            client_cpus,
            workers,
            workers_sweep,
            client_threads,
            warmup: self.warmup,
            rounds,
            max_rounds,
            budget,
            stop,
            tool: self.tool,
            client_io,
            client_io_name,
            client_poll,
            interval: self.interval.checked()?,
            out_dir,
            timeout: self.timeout,
            start_timeout: self.start_timeout,
            stop_grace: STOP_GRACE,
            rebuild: self.rebuild,
            install: !self.no_install,
            check: self.check,
            syscall_counts: self.syscall_counts,
            profile: self.profile,
            command_line,
            notes,
            remote,
            ab,
        })
    }

    /// `--client-host`, `--server-address`, `--ssh-option`, `--clock-tolerance`, checked: hosts need the built-in
    /// generator and an address of this machine they can reach.
    fn remote(&self, scenarios: &[Scenario], root: &Path, catalog_root: &Path) -> anyhow::Result<Remote> {
        let client_hosts = self.client_host.iter().map(|h| crate::remote::HostSpec::parse(h)).collect::<Result<Vec<_>, _>>().map_err(anyhow::Error::msg)?;
        let server_address = self.server_address.unwrap_or(Remote::default().server_address);
        let server_host = self.server_host.as_deref().map(|h| crate::remote::HostSpec::parse_as("--server-host", h)).transpose().map_err(anyhow::Error::msg)?;
        if self.server_address.is_some() && server_host.is_none() {
            std::net::TcpListener::bind((server_address, 0)).map_err(|e| {
                anyhow::anyhow!("--server-address {server_address} is not an address of this machine ({e}); give one that `ip addr` lists")
            })?;
        }
        if !client_hosts.is_empty() {
            anyhow::ensure!(self.tool == Tool::Builtin, "--client-host runs the built-in load generator on each host: use --tool builtin");
            anyhow::ensure!(
                !server_address.is_loopback(),
                "--client-host needs --server-address: an address of this machine that the client hosts reach (the servers listen on it)"
            );
            anyhow::ensure!(
                !scenarios.contains(&Scenario::Counter),
                "--client-host: `counter` checks every answer for lost updates in one process, which hosts apart cannot do; run it without --client-host"
            );
        }
        anyhow::ensure!(!self.clock_tolerance.is_zero(), "--clock-tolerance must be above 0");
        let (server_checkout, server_catalog) = match &server_host {
            None => {
                anyhow::ensure!(self.server_checkout.is_none(), "--server-checkout applies to --server-host only");
                (None, None)
            }
            Some(_) => {
                self.check_server_host()?;
                let (checkout, catalog) = server_paths(root, catalog_root, self.server_checkout.as_deref());
                (Some(checkout), Some(catalog))
            }
        };
        Ok(Remote { client_hosts, ssh_options: self.ssh_option.clone(), server_address, clock_tolerance: self.clock_tolerance, server_host, server_checkout, server_catalog })
    }

    /// What wrk, h2load, hey and ab cannot do (closed-loop HTTP rounds only, no check of each answer), and
    /// whether the one asked for is installed or can be built.
    fn check_tool(&self, root: &Path, scenarios: &[Scenario], mix: &crate::load::mix::MixOptions, stop: StopRule) -> anyhow::Result<()> {
        if self.tool == Tool::Builtin {
            return Ok(());
        }
        let tool = self.tool.name();
        anyhow::ensure!(
            self.mode == ModeKind::Throughput,
            "--tool {tool} supports --mode throughput only; use --tool builtin for latency and rate"
        );
        anyhow::ensure!(
            !self.scenario.iter().any(|s| s == Scenario::Echo.name()),
            "--tool {tool} speaks HTTP only; the echo scenario needs --tool builtin"
        );
        if self.tool == Tool::Hey {
            hey::ready(root)?;
            anyhow::ensure!(self.pipeline == 1, "hey sends one request at a time per connection: use --pipeline 1");
        }
        if let Some((command, package)) = self.tool.debian() {
            // Installed by the run when it can (root, apt, not --no-install).
            let installable = !self.no_install && crate::catalog::requires::System::detect().can_install();
            anyhow::ensure!(
                installable || crate::catalog::requires::find_command(command).is_some(),
                "--tool {tool}: `{command}` is not installed (apt-get install -y {package})"
            );
        }
        if self.tool == Tool::Ab {
            anyhow::ensure!(self.pipeline == 1, "ab sends one request at a time per connection: use --pipeline 1");
            // ab speaks HTTP/1.0 and keeps a connection only when the answer says `keep-alive`: `plaintext`
            // is the scenario whose servers are held to that (the `client-ab` check); a `hello` server
            // answers without it and would leave ab waiting for a close.
            let other: Vec<&String> = self.scenario.iter().filter(|s| *s != Scenario::Plaintext.name()).collect();
            anyhow::ensure!(
                other.is_empty(),
                "--tool ab measures `plaintext` only (HTTP/1.0, which its servers are checked to answer: client-ab); not {}",
                other.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
            );
        } else {
            anyhow::ensure!(!self.connection_per_request, "--connection-per-request needs --tool builtin or ab");
        }
        anyhow::ensure!(
            !(scenarios.contains(&Scenario::Counter) || (scenarios.contains(&Scenario::Work) && mix.skewed())),
            "--tool {}: `counter` (whose answers are checked for lost updates) and `work` with heavy connections or requests need --tool builtin",
            self.tool.name()
        );
        anyhow::ensure!(self.client_poll == load::PollArg::Sleep, "--client-poll busy needs --tool builtin");
        if self.tool == Tool::Wrk {
            anyhow::ensure!(matches!(stop, StopRule::Duration(_)), "wrk runs for a duration only: use -d, not -n");
        }
        Ok(())
    }

    /// What a server host rules out: the servers there are reached at its address, probed at the edges the
    /// built-in generator marks, and checked by `serverbench check` run there.
    fn check_server_host(&self) -> anyhow::Result<()> {
        anyhow::ensure!(
            self.server_address.is_some_and(|a| !a.is_loopback()),
            "--server-host needs --server-address: the server host's address that the load reaches (the servers listen on it there)"
        );
        anyhow::ensure!(
            self.tool == Tool::Builtin,
            "--server-host: a round's server figures are read there at the edges the built-in load generator marks: use --tool builtin"
        );
        anyhow::ensure!(!self.check, "--check runs its suite against servers on this machine: run `serverbench check` on the server host instead");
        if let Some(p) = &self.server_checkout {
            anyhow::ensure!(p.is_absolute(), "--server-checkout {} must be an absolute path on the server host", p.display());
        }
        Ok(())
    }
}

/// How the client waits: busy-polling (`--client-poll busy`) needs a CPU of its own for each client thread,
/// none of them a server's.
fn client_poll(
    wanted: crate::load::Poll,
    server_cpus: &CpuSet,
    client_cpus: &CpuSet,
    client_threads: usize,
) -> anyhow::Result<crate::load::Poll> {
    let own_cpus = !server_cpus.overlaps(client_cpus) && client_threads <= client_cpus.len();
    anyhow::ensure!(
        wanted == crate::load::Poll::Sleep || own_cpus,
        "--client-poll busy needs a CPU of its own for each client thread, none of them a server's: \
         {client_threads} client threads on CPUs {client_cpus}, servers on {server_cpus}"
    );
    Ok(wanted)
}

/// `--workers LIST`: the counts to sweep, in the order given, without repeats, each at most the server
/// CPUs (a larger one is dropped with a note: more workers than CPUs measures time-slicing, not scaling).
/// A single count is no sweep: empty.
fn workers_sweep(asked: &[usize], cpus: usize, notes: &mut Vec<String>) -> anyhow::Result<Vec<usize>> {
    anyhow::ensure!(asked.iter().all(|&w| w > 0), "--workers takes counts above 0, such as 1,2,4");
    let mut list: Vec<usize> = Vec::new();
    for &w in asked {
        if !list.contains(&w) {
            list.push(w);
        }
    }
    let dropped: Vec<String> = list.iter().filter(|&&w| w > cpus).map(usize::to_string).collect();
    if !dropped.is_empty() {
        notes.push(format!("--workers {} left out: more than the {cpus} server CPU(s)", dropped.join(",")));
    }
    list.retain(|&w| w <= cpus);
    anyhow::ensure!(asked.is_empty() || !list.is_empty(), "--workers {}: every count is above the {cpus} server CPU(s)", asked.iter().map(usize::to_string).collect::<Vec<_>>().join(","));
    Ok(if list.len() > 1 { list } else { Vec::new() })
}

/// The checkout there and the catalog's path in it.
/// The checkout is not copied: the same project must be at `--server-checkout` there (by default the same
/// absolute path as here), and the catalog at the same place inside it (a catalog outside the checkout at
/// the same absolute path).
fn server_paths(root: &Path, catalog_root: &Path, server_checkout: Option<&Path>) -> (PathBuf, PathBuf) {
    let here = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let root = here(root);
    let checkout = server_checkout.map_or_else(|| root.clone(), Path::to_path_buf);
    (checkout.clone(), catalog_there(&here(catalog_root), &root, &checkout))
}

fn catalog_there(catalog: &Path, root: &Path, checkout: &Path) -> PathBuf {
    match catalog.strip_prefix(root) {
        Ok(inside) => checkout.join(inside),
        Err(_) => catalog.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::{CommandFactory, Parser};

    #[test]
    fn bench_defaults_are_the_quick_run() {
        let cli = Cli::try_parse_from(["serverbench", "bench"]).unwrap();
        let Command::Bench(b) = cli.command else { panic!("bench") };
        assert_eq!(b.scenario, ["hello"]);
        assert_eq!(b.connections(), [64]);
        assert_eq!(b.warmup, 1);
        assert_eq!(b.rounds_rule().unwrap(), Rounds::Auto { target_ci_pct: 3.0 });
        assert_eq!(b.max_rounds, None);
        assert_eq!(b.run_type, RunType::SingleCore);
        assert_eq!(b.tool, Tool::Builtin);
        assert_eq!(b.mode, ModeKind::Throughput);
    }

    #[test]
    fn the_help_states_the_defaults_the_runner_uses() {
        let help = Cli::command().find_subcommand_mut("bench").expect("bench").render_long_help().to_string();
        let round = crate::run::options::DEFAULT_ROUND.as_millis();
        let max = crate::run::options::DEFAULT_MAX_ROUNDS;
        let ab_round = crate::run::options::DEFAULT_AB_ROUND.as_millis();
        assert!(help.contains(&format!("[default: {round}ms; {ab_round}ms in an A/B run]")), "round length: {help}");
        assert!(help.contains(&format!("[default: {max} with auto")), "max rounds: {help}");
        let said = help.split("--budget").nth(1).and_then(|h| h.split("[default: ").nth(1)).and_then(|d| d.split(']').next());
        assert_eq!(said.and_then(|d| parse_budget(d).ok()), Some(Budget::Within(crate::run::options::DEFAULT_BUDGET)), "budget {said:?}: {help}");
    }

    #[test]
    fn rate_takes_a_number_or_auto_with_its_shares() {
        let options = |args: &[&str]| {
            let o = options(BenchArgs::parse(&[&["--mode", "rate"], args].concat()).unwrap()).unwrap();
            (o.rate_per_s, o.load_fractions)
        };
        assert_eq!(options(&["--rate", "2500"]), (Some(2500.0), vec![]));
        assert_eq!(options(&["--rate", "auto", "--load-fraction", "0.5,0.3"]), (None, vec![0.5, 0.3]));
        let wrong = Cli::try_parse_from(["serverbench", "bench", "--rate", "fast"]).unwrap_err().to_string();
        assert!(wrong.contains("neither a rate in requests per second nor `auto`"), "{wrong}");
    }

    #[test]
    fn rounds_take_auto_or_a_count() {
        let parse = |args: &[&str]| {
            let cli = Cli::try_parse_from(["serverbench", "bench"].iter().chain(args)).unwrap();
            let Command::Bench(b) = cli.command else { panic!("bench") };
            (b.rounds_rule().map_err(|e| e.to_string()), b.max_rounds)
        };
        assert_eq!(parse(&["--rounds", "5", "--max-rounds", "8"]), (Ok(Rounds::Fixed(5)), Some(8)));
        assert_eq!(parse(&["--target-ci", "1.5%"]).0, Ok(Rounds::Auto { target_ci_pct: 1.5 }));
        let bad = parse(&["--rounds", "some"]).0.unwrap_err();
        assert!(bad.contains("--rounds takes auto or a count"), "{bad}");
        assert!(parse(&["--rounds", "0"]).0.is_err());
    }

    #[test]
    fn profile_is_off_by_default_and_taken_in_catalog_and_ab_runs() {
        let profile = |args: &[&str]| options(BenchArgs::parse(&[&["--no-install"], args].concat()).unwrap()).map(|o| o.profile).map_err(|e| e.to_string());
        assert_eq!(profile(&[]), Ok(false));
        assert_eq!(profile(&["--profile"]), Ok(true));
        assert_eq!(profile(&["--baseline", "HEAD", "--profile", "c-epoll"]), Ok(true));
    }

    #[test]
    fn a_catalog_run_takes_rounds_of_a_quarter_second_and_an_ab_run_of_half_a_second_by_default() {
        let stop = |args: &[&str]| options(BenchArgs::parse(&[&["--no-install"], args].concat()).unwrap()).map(|o| o.stop).map_err(|e| e.to_string());
        assert_eq!(stop(&[]), Ok(StopRule::Duration(Duration::from_millis(250))));
        assert_eq!(stop(&["--baseline", "HEAD", "c-epoll"]), Ok(StopRule::Duration(Duration::from_millis(500))));
        assert_eq!(stop(&["--baseline", "HEAD", "-d", "1s", "c-epoll"]), Ok(StopRule::Duration(Duration::from_secs(1))));
        assert_eq!(stop(&["-d", "2s"]), Ok(StopRule::Duration(Duration::from_secs(2))));
    }

    #[test]
    fn a_budget_bounds_auto_rounds_by_default_and_is_refused_where_nothing_ends_for_it() {
        let budget = |args: &[&str]| options(BenchArgs::parse(&[&["--no-install"], args].concat()).unwrap()).map(|o| o.budget).map_err(|e| e.to_string());
        assert_eq!(budget(&[]), Ok(Some(crate::run::options::DEFAULT_BUDGET)));
        assert_eq!(budget(&["--budget", "2m"]), Ok(Some(Duration::from_secs(120))));
        assert_eq!(budget(&["--budget", "off"]), Ok(None));
        assert_eq!(budget(&["--rounds", "4"]), Ok(None), "a fixed count has no budget unless asked");
        assert!(budget(&["--rounds", "4", "--budget", "2m"]).unwrap_err().contains("--budget ends the passes of --rounds auto"));
        assert!(budget(&["--baseline", "HEAD", "--budget", "2m", "c-epoll"]).unwrap_err().contains("leave out --budget"));
        let zero = Cli::try_parse_from(["serverbench", "bench", "--budget", "0s"]).unwrap_err().to_string();
        assert!(zero.contains("--budget takes a time above zero"), "{zero}");
    }

    #[test]
    fn bench_takes_lists_and_filters() {
        let cli = Cli::try_parse_from([
            "serverbench", "-q", "bench", "c-epoll", "go", "-c", "8,64,256", "--type", "multiCore", "--scenario",
            "hello,echo", "-d", "500ms", "--language", "c,go", "--tool", "wrk",
        ])
        .unwrap();
        assert!(cli.quiet);
        let Command::Bench(b) = cli.command else { panic!("bench") };
        assert_eq!(b.select.terms, ["c-epoll", "go"]);
        assert_eq!(b.connections(), [8, 64, 256]);
        assert_eq!(b.run_type, RunType::MultiCore);
        assert_eq!(b.scenario, ["hello", "echo"]);
        assert_eq!(b.duration, Some(Duration::from_millis(500)));
        assert_eq!(b.select.language, ["c", "go"]);
        assert_eq!(b.tool, Tool::Wrk);
        assert!(Cli::try_parse_from(["serverbench", "bench", "-d", "1", "-n", "5"]).is_err());
    }

    #[test]
    fn ab_measures_plaintext_one_request_at_a_time_and_maps_a_connection_per_request() {
        let refused = |args: &[&str]| options(BenchArgs::parse(&[&["--tool", "ab", "--no-install"], args].concat()).unwrap()).map(|_| ()).unwrap_err().to_string();
        if crate::catalog::requires::find_command("ab").is_none() {
            assert!(refused(&["--scenario", "plaintext"]).contains("apt-get install -y apache2-utils"));
            // What ab is allowed to measure is judged once it is there.
            return crate::testing::skip(
                "cli::bench::tests::ab_measures_plaintext_one_request_at_a_time_and_maps_a_connection_per_request",
                "ab is not installed (apt-get install apache2-utils)",
            );
        }
        let ok = |args: &[&str]| options(BenchArgs::parse(&[&["--tool", "ab"], args].concat()).unwrap()).unwrap();
        assert_eq!(ok(&["--scenario", "plaintext"]).tool, Tool::Ab);
        assert!(ok(&["--scenario", "plaintext", "--connection-per-request"]).connection_per_request);
        assert!(refused(&["--scenario", "hello,plaintext"]).contains("--tool ab measures `plaintext` only"));
        assert!(refused(&["--scenario", "plaintext", "--pipeline", "4"]).contains("use --pipeline 1"));
        let wrk = options(BenchArgs::parse(&["--tool", "wrk", "--connection-per-request"]).unwrap()).map(|_| ()).unwrap_err().to_string();
        assert!(wrk.contains("--connection-per-request needs --tool builtin or ab"), "{wrk}");
    }

    #[test]
    fn the_catalog_keeps_its_place_in_the_checkout() {
        let there = |catalog: &str| catalog_there(Path::new(catalog), Path::new("/home/me/serverbench"), Path::new("/srv/sb"));
        assert_eq!(there("/home/me/serverbench/contestants"), Path::new("/srv/sb/contestants"));
        assert_eq!(there("/tmp/catalog"), Path::new("/tmp/catalog"));
    }

    #[test]
    fn a_workers_sweep_keeps_the_counts_the_server_cpus_allow() {
        let mut notes = Vec::new();
        assert_eq!(workers_sweep(&[1, 2, 2, 4], 2, &mut notes).unwrap(), [1, 2]);
        assert_eq!(notes, ["--workers 4 left out: more than the 2 server CPU(s)"]);
        assert!(workers_sweep(&[2], 2, &mut Vec::new()).unwrap().is_empty(), "one count is no sweep");
        assert!(workers_sweep(&[], 2, &mut Vec::new()).unwrap().is_empty());
        assert!(workers_sweep(&[4, 8], 2, &mut Vec::new()).unwrap_err().to_string().contains("every count is above"));
        assert!(workers_sweep(&[0, 1], 2, &mut Vec::new()).is_err());
    }

    fn choices() -> BenchArgs {
        BenchArgs::parse(&[]).unwrap()
    }

    fn options(a: BenchArgs) -> anyhow::Result<BenchOptions> {
        a.options(Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap(), Vec::new())
    }

    #[test]
    fn the_interval_reaches_the_rounds_and_run_json() {
        let o = options(choices()).unwrap();
        assert_eq!(o.interval, crate::load::DEFAULT_INTERVAL);
        assert_eq!(o.record().interval_ms, Some(100.0));
        let o = options(BenchArgs::parse(&["--interval", "250ms"]).unwrap()).unwrap();
        assert_eq!(o.interval, Duration::from_millis(250));
        assert_eq!(o.record().interval_ms, Some(250.0));
        let e = options(BenchArgs::parse(&["--interval", "0"]).unwrap()).unwrap_err().to_string();
        assert!(e.contains("--interval must be at least"), "{e}");
    }

    #[test]
    fn defaults_give_one_server_cpu_and_one_worker() {
        let o = options(choices()).unwrap();
        assert_eq!(o.server_cpus.len(), 1);
        assert_eq!(o.workers, 1);
        assert_eq!(o.stop, StopRule::Duration(DEFAULT_ROUND));
        if CpuSet::allowed().len() == 2 {
            assert_eq!(o.server_cpus.to_string(), "1");
            assert_eq!(o.client_cpus.to_string(), "0");
        }
    }

    #[test]
    fn rate_auto_takes_half_and_nine_tenths_of_the_capacity_unless_told() {
        let mut c = choices();
        c.mode = ModeKind::Rate;
        c.rate = Some(RateArg::Auto);
        let o = options(c.clone()).unwrap();
        assert_eq!((o.rate_per_s, o.load_fractions), (None, vec![0.5, 0.9]));
        c.load_fraction = Some(vec![0.3]);
        assert_eq!(options(c).unwrap().load_fractions, vec![0.3]);
    }

    #[test]
    fn rejects_what_cannot_work() {
        let bad = |f: &dyn Fn(&mut BenchArgs)| {
            let mut c = choices();
            f(&mut c);
            options(c).unwrap_err().to_string()
        };
        assert!(bad(&|c| c.scenario = vec!["helo".into()]).contains("unknown scenario 'helo'"));
        assert!(bad(&|c| c.connections = Some(vec![0])).contains("-c takes"));
        assert!(bad(&|c| c.mode = ModeKind::Rate).contains("--rate"));
        assert!(bad(&|c| c.rate = Some(RateArg::PerS(5.0))).contains("--mode rate only"));
        assert!(bad(&|c| c.load_fraction = Some(vec![0.5])).contains("--load-fraction applies to --rate auto only"));
        assert!(bad(&|c| c.rate = Some(RateArg::Auto)).contains("--mode rate only"));
        let auto = |c: &mut BenchArgs| {
            c.mode = ModeKind::Rate;
            c.rate = Some(RateArg::Auto);
        };
        assert!(bad(&|c| { auto(c); c.load_fraction = Some(vec![0.5, 1.5]) }).contains("--load-fraction 1.5"));
        assert!(bad(&|c| { auto(c); c.load_fraction = Some(vec![0.0]) }).contains("above 0 and at most 1"));
        assert!(bad(&|c| {
            c.duration = Some(Duration::from_secs(1));
            c.requests = Some(5)
        })
        .contains("not both"));
        assert!(bad(&|c| c.server_cpus = Some("4096".into())).contains("outside the CPUs"));
        let first = CpuSet::allowed().cpus()[0].to_string();
        let one_cpu = bad(&|c| {
            c.run_type = RunType::MultiCore;
            c.server_cpus = Some(first.clone());
        });
        assert!(one_cpu.contains("multiCore needs at least two server CPUs") && one_cpu.contains("--server-cpus LIST --client-cpus LIST"), "{one_cpu}");
    }

    #[test]
    fn the_client_busy_polls_only_when_asked_and_on_cpus_of_its_own() {
        assert_eq!(options(choices()).unwrap().client_poll, crate::load::Poll::Sleep);
        let all = CpuSet::allowed();
        if all.len() < 2 {
            return crate::testing::skip("cli::bench::tests::the_client_busy_polls_only_when_asked_and_on_cpus_of_its_own", &format!("no CPU of the client's own: this process may use {all}"));
        }
        let mut busy = choices();
        busy.client_poll = load::PollArg::Busy;
        assert_eq!(options(busy.clone()).unwrap().client_poll, crate::load::Poll::Busy);
        let mut two_threads_one_cpu = busy.clone();
        two_threads_one_cpu.threads = Some(2);
        two_threads_one_cpu.client_cpus = Some(all.cpus()[0].to_string());
        two_threads_one_cpu.server_cpus = Some(all.cpus()[1].to_string());
        let e = options(two_threads_one_cpu).unwrap_err().to_string();
        assert!(e.contains("--client-poll busy needs a CPU of its own") && e.contains("2 client threads"), "{e}");
        let mut shared = busy;
        shared.run_type = RunType::MultiCore;
        shared.server_cpus = Some(all.to_string());
        shared.client_cpus = Some(all.to_string());
        assert!(options(shared).unwrap_err().to_string().contains("none of them a server's"));
    }

    /// SQPOLL pins a kernel thread to each client CPU: refused where those are a server's too. (Where the
    /// kernel refuses SQPOLL the option is refused before that, by `resolve_io`, with the kernel's reason.)
    #[test]
    fn sqpoll_is_refused_on_a_servers_cpu() {
        const TEST: &str = "cli::bench::tests::sqpoll_is_refused_on_a_servers_cpu";
        let all = CpuSet::allowed();
        if all.len() < 2 {
            return crate::testing::skip(TEST, &format!("no CPU of the client's own: this process may use {all}"));
        }
        if let Err(e) = crate::load::resolve_io(crate::load::IoBackend::IoUringSqpoll) {
            return crate::testing::skip(TEST, &format!("io_uring-sqpoll unavailable: {e}"));
        }
        let mut shared = choices();
        shared.client_io = load::IoArg::IoUringSqpoll;
        assert_eq!(options(shared.clone()).unwrap().client_io, crate::load::IoBackend::IoUringSqpoll);
        shared.run_type = RunType::MultiCore;
        shared.server_cpus = Some(all.to_string());
        shared.client_cpus = Some(all.to_string());
        let e = options(shared).unwrap_err().to_string();
        assert!(e.contains("--client-io io_uring-sqpoll pins a kernel thread") && e.contains("must not be a server's"), "{e}");
    }

    #[test]
    fn multi_core_on_shared_cpus_is_allowed_when_asked_and_said() {
        let all = CpuSet::allowed();
        if all.len() < 2 {
            return crate::testing::skip("cli::bench::tests::multi_core_on_shared_cpus_is_allowed_when_asked_and_said", &format!("one CPU, nothing to share: this process may use {all}"));
        }
        let mut c = choices();
        c.run_type = RunType::MultiCore;
        c.server_cpus = Some(all.to_string());
        c.client_cpus = Some(all.to_string());
        let o = options(c).unwrap();
        assert_eq!(o.workers, all.len());
        assert!(o.notes.iter().any(|n| n.contains("overlap")), "{:?}", o.notes);
    }
}
