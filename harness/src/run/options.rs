//! What a benchmark run is asked to do: the vocabulary of `bench`'s options, the options the runner reads
//! (checked by `cli::bench`), and what run.json records of them.

use std::path::PathBuf;
use std::time::Duration;

use crate::catalog::Selection;
use crate::load::search::Slo;
use crate::model::RunConfig;
use crate::os::cpus::CpuSet;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum RunType {
    /// The server gets one CPU and one worker.
    #[default]
    #[value(name = "singleCore")]
    SingleCore,
    /// The server gets all of its CPUs and as many workers.
    #[value(name = "multiCore")]
    MultiCore,
}

impl RunType {
    pub fn name(self) -> &'static str {
        match self {
            RunType::SingleCore => "singleCore",
            RunType::MultiCore => "multiCore",
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ModeKind {
    /// Closed loop: the next request leaves as soon as the response is in.
    #[default]
    Throughput,
    /// Closed loop with a think time between a response and the next request.
    Latency,
    /// Open loop at a fixed total rate (--rate); latency from the intended send time.
    Rate,
}

impl ModeKind {
    pub fn name(self) -> &'static str {
        match self {
            ModeKind::Throughput => "throughput",
            ModeKind::Latency => "latency",
            ModeKind::Rate => "rate",
        }
    }
}

/// When the server's system calls are counted (`os::syscalls`): counting makes every system call on the
/// machine dearer (about 200 ns each), so by default it runs in one extra round after the measured ones,
/// which no other figure reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum SyscallCounting {
    /// In one extra round per measurement after its measured rounds; the measured rounds run uncounted.
    #[default]
    Extra,
    /// In every measured round, which then carries counting's cost in its other figures.
    Rounds,
    /// Not at all.
    Off,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Tool {
    /// The built-in load generator (full latency histograms).
    #[default]
    Builtin,
    /// wrk, where installed (throughput mode, HTTP scenarios, a duration).
    Wrk,
    /// h2load from nghttp2, where installed (throughput mode, HTTP scenarios).
    H2load,
    /// hey, built from the version `tools/hey` pins (throughput mode, HTTP scenarios, no pipelining).
    Hey,
    /// ApacheBench from apache2-utils (throughput mode, plaintext, no pipelining; HTTP/1.0, keep-alive
    /// unless --connection-per-request).
    Ab,
}

impl Tool {
    pub fn name(self) -> &'static str {
        match self {
            Tool::Builtin => "builtin",
            Tool::Wrk => "wrk",
            Tool::H2load => "h2load",
            Tool::Hey => "hey",
            Tool::Ab => "ab",
        }
    }

    /// The command of a tool Debian packages and the package, which `bench` installs when it is missing
    /// (as root, unless --no-install).
    pub fn debian(self) -> Option<(&'static str, &'static str)> {
        match self {
            Tool::Wrk => Some(("wrk", "wrk")),
            Tool::H2load => Some(("h2load", "nghttp2-client")),
            Tool::Ab => Some(("ab", "apache2-utils")),
            Tool::Builtin | Tool::Hey => None,
        }
    }
}

/// When a round ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StopRule {
    Duration(Duration),
    /// Requests per connection (the first source document's R).
    Requests(u64),
}

#[derive(Debug, Clone, PartialEq)]
pub struct BenchOptions {
    pub catalog_root: PathBuf,
    /// The checkout whose `tools/` pins the load tools the project builds (hey) and whose `target/` keeps
    /// them built.
    pub repo_root: PathBuf,
    pub selection: Selection,
    pub scenarios: Vec<String>,
    pub mode: ModeKind,
    pub think_time: Duration,
    pub rate_per_s: Option<f64>,
    /// `--rate auto`: the shares of each server's own capacity its rate measurements run at (empty
    /// otherwise). The capacity is the median req/s of a throughput measurement taken first.
    pub load_fractions: Vec<f64>,
    /// `--search`: the latency objective under which each contestant's capacity is found.
    pub search: Option<Slo>,
    pub connections: Vec<usize>,
    pub pipeline: u32,
    /// Every request on a new connection (`LoadConfig::connection_per_request`).
    pub connection_per_request: bool,
    /// How the `echo` scenario's client talks (`--echo`).
    pub echo: crate::load::EchoKind,
    /// Measure the run's control (harness/control) beside the contestants.
    pub control: bool,
    /// What shapes `work` and `counter` requests.
    pub mix: crate::load::mix::MixOptions,
    pub run_type: RunType,
    pub server_cpus: CpuSet,
    pub client_cpus: CpuSet,
    /// `{workers}` for every server: 1 for singleCore, the server CPUs for multiCore.
    pub workers: usize,
    /// `--workers LIST`: each server is measured with each of these `{workers}` in turn (a sweep); empty:
    /// `workers` alone.
    pub workers_sweep: Vec<usize>,
    pub client_threads: usize,
    pub warmup: u32,
    pub rounds: Rounds,
    /// The most measured rounds one measurement runs, those left out as disturbed included.
    pub max_rounds: u32,
    /// `--budget`: with `--rounds auto`, the run's wall time within which its measured passes stop
    /// (`run::budget`); None: `max_rounds` alone bounds them.
    pub budget: Option<Duration>,
    pub stop: StopRule,
    pub tool: Tool,
    /// How the built-in load generator moves bytes (resolved: never `Auto`), and its name for the report.
    pub client_io: crate::load::IoBackend,
    pub client_io_name: String,
    /// How the built-in load generator waits for the kernel (resolved from `--client-poll`).
    pub client_poll: crate::load::Poll,
    /// The length of the intervals the built-in load generator cuts each round's window into.
    pub interval: Duration,
    pub out_dir: PathBuf,
    /// A request unanswered this long is a timeout error.
    pub timeout: Duration,
    /// How long a server may take to accept its first connection.
    pub start_timeout: Duration,
    /// How long a server may take to exit after SIGTERM before it is killed.
    pub stop_grace: Duration,
    pub rebuild: bool,
    /// Install missing apt packages when running as root.
    pub install: bool,
    /// Run the conformance suite (without the scale check) before measuring.
    pub check: bool,
    /// When the server's system calls are counted.
    pub syscall_counts: SyscallCounting,
    /// `--profile`: a profiled round after each measurement's other rounds (`run/profiling.rs`).
    pub profile: bool,
    pub command_line: Vec<String>,
    /// Said before the run starts (for example that server and client share CPUs).
    pub notes: Vec<String>,
    /// Where the load comes from and where the servers listen (`--client-host`, `--server-address`).
    pub remote: Remote,
    /// An A/B run (`--baseline REV`, `--ab DIR_A DIR_B`): two versions of one contestant in pairs of rounds;
    /// `rounds` and `max_rounds` then count pairs.
    pub ab: Option<AbOptions>,
}

/// What an A/B run compares, and how it judges.
#[derive(Debug, Clone, PartialEq)]
pub struct AbOptions {
    pub source: AbSource,
    /// What a change is and what no change is (`--change-band`, `--same-band`).
    pub bands: crate::model::ab::Bands,
    /// `--fail-on`: exit with `compare`'s status for a regression when B is worse by a selected figure.
    pub fail_on: Option<crate::compare::FailOn>,
}

/// A revision of the repository that holds the catalog, as `--baseline` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revision {
    /// As given (HEAD~1, main, a tag, a hash).
    pub rev: String,
    /// The commit it names, in full.
    pub commit: String,
    /// The repository's top folder.
    pub toplevel: PathBuf,
    /// The catalog's folder inside the repository ("contestants", or "" when it is the repository).
    pub catalog_in_repo: PathBuf,
}

/// Where the two versions of an A/B run come from.
#[derive(Debug, Clone, PartialEq)]
pub enum AbSource {
    /// `--baseline REV`: A is the contestant as the catalog was at the revision (checked out whole in a
    /// worktree of its own), B as it is in the working tree.
    Baseline(Revision),
    /// `--ab DIR_A DIR_B`: two contestant folders as they are.
    Folders(PathBuf, PathBuf),
}

/// Load from client hosts over ssh instead of this machine (docs/distributed.md). Empty `client_hosts`: the
/// default, everything on loopback.
#[derive(Debug, Clone, PartialEq)]
pub struct Remote {
    pub client_hosts: Vec<crate::remote::HostSpec>,
    /// Given to every ssh and scp call as `-o OPTION`.
    pub ssh_options: Vec<String>,
    /// The address every server listens on and every client connects to: loopback unless client hosts
    /// must reach it.
    pub server_address: std::net::IpAddr,
    /// How far a client or server host's clock may be from this machine's.
    pub clock_tolerance: Duration,
    /// With `--server-host`: the host the servers run on, the checkout there (`--server-checkout`) and the
    /// catalog's path in it.
    pub server_host: Option<crate::remote::HostSpec>,
    pub server_checkout: Option<PathBuf>,
    pub server_catalog: Option<PathBuf>,
}

impl Default for Remote {
    fn default() -> Remote {
        Remote {
            client_hosts: Vec::new(),
            ssh_options: Vec::new(),
            server_address: crate::launch::LOOPBACK,
            clock_tolerance: DEFAULT_CLOCK_TOLERANCE,
            server_host: None,
            server_checkout: None,
            server_catalog: None,
        }
    }
}

/// `--clock-tolerance`: a client host's clock may be this far from this machine's; each worker's start
/// instant is corrected by its measured offset, so this bounds a clock that is not kept (NTP), not the
/// alignment itself.
pub const DEFAULT_CLOCK_TOLERANCE: Duration = Duration::from_millis(100);

/// Default length of a round: short, so that a slow stretch of the machine (5 to 20 s on a shared VM)
/// spoils few rounds, and many rounds fit: on a 2-CPU VM 16 to 18 rounds of 0.5 s gave narrower intervals than
/// 10 of 1 s in less time, and rounds of 0.25 s narrower ones than 0.5 s, in less time again, in two pairs
/// of default runs taken in turn (docs/methodology.md, "Round length").
pub const DEFAULT_ROUND: Duration = Duration::from_millis(250);
/// Default length of a round in an A/B run (`--baseline`, `--ab`): the length its stop rule and verdicts
/// were checked with, ten runs of a change of 3% and ten of none (docs/ab.md, "Checking the method, and the
/// defaults"). In two A/B runs of each length taken in turn, rounds of 0.25 s gave no wider intervals, but
/// that is not the check the verdicts rest on.
pub const DEFAULT_AB_ROUND: Duration = Duration::from_millis(500);
/// `--rate auto` without `--load-fraction`: half the capacity (a server with room to spare) and 90% (near
/// its knee), the two loads at which latency is usually compared.
pub const DEFAULT_LOAD_FRACTIONS: [f64; 2] = [0.5, 0.9];
/// `--target-ci`: the half-width of the median's 95% interval that ends a measurement's rounds, in percent.
pub const DEFAULT_TARGET_CI_PCT: f64 = 3.0;
/// `--max-rounds` with `--rounds auto`.
pub const DEFAULT_MAX_ROUNDS: u32 = 16;
/// `--budget` with `--rounds auto`: the wall time of the run's measuring, the servers' starts included and
/// the installs, builds and `--check` before it not, within which its measured passes stop. With the default
/// catalog on a 2-CPU VM a warm run then ends within 6 minutes (rounds of 0.25 s: most servers take their 16
/// in about 4 min 30 s, and the budget acts on noisier days), and a fresh one measures as long: when the
/// budget counted the builds, a fresh run gave every server its fewest rounds and could tell none of 42 apart
/// (docs/methodology.md, "The time budget").
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(300);
/// `--max-rounds` with `--rounds auto` in an A/B run, in pairs: about two minutes of pairs of 0.5 s rounds
/// (`DEFAULT_AB_ROUND`) with their probes (1.2 s a pair on a 2-CPU VM; docs/ab.md, "Checking the method,
/// and the defaults").
pub const DEFAULT_MAX_PAIRS: u32 = 80;

/// How many measured rounds a measurement gets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rounds {
    /// Until the median's 95% interval is within ± target_ci_pct (at least 6 rounds, the fewest with an
    /// interval), or `max_rounds`.
    Auto { target_ci_pct: f64 },
    /// This many rounds that count; rounds left out are run again, up to `max_rounds`.
    Fixed(u32),
}

impl Rounds {
    /// `auto` or a count, as `--rounds` takes it.
    pub fn parse(text: &str, target_ci_pct: f64) -> anyhow::Result<Rounds> {
        if text == "auto" {
            return Ok(Rounds::Auto { target_ci_pct });
        }
        match text.parse::<u32>() {
            Ok(n) if n >= 1 => Ok(Rounds::Fixed(n)),
            _ => anyhow::bail!("--rounds takes auto or a count of at least 1, not '{text}'"),
        }
    }

    /// The fewest rounds that can end a measurement.
    pub fn minimum(&self) -> u32 {
        match *self {
            Rounds::Auto { .. } => crate::stats::rounds::MIN_FOR_CI as u32,
            Rounds::Fixed(n) => n,
        }
    }

    pub fn name(&self) -> String {
        match *self {
            Rounds::Auto { .. } => "auto".into(),
            Rounds::Fixed(n) => n.to_string(),
        }
    }
}

impl BenchOptions {
    /// Options for run/'s own tests, which sit below the command line (`cli/` uses this room, never the
    /// reverse): a throughput load of hello at 64 connections, rounds of `DEFAULT_ROUND`, servers on CPU 1
    /// and the client on CPU 0, one warm-up, `--rounds auto`, system calls counted in an extra round, the
    /// catalog of this checkout. A test sets the fields it is about.
    #[cfg(test)]
    pub(crate) fn for_tests() -> BenchOptions {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the harness is in a checkout");
        BenchOptions {
            catalog_root: root.join("contestants"),
            repo_root: root.to_path_buf(),
            selection: Selection::default(),
            scenarios: vec!["hello".into()],
            mode: ModeKind::Throughput,
            think_time: Duration::from_millis(1),
            rate_per_s: None,
            load_fractions: Vec::new(),
            search: None,
            connections: vec![64],
            pipeline: 1,
            connection_per_request: false,
            echo: crate::load::EchoKind::PingPong,
            control: true,
            mix: crate::load::mix::MixOptions::default(),
            run_type: RunType::SingleCore,
            server_cpus: CpuSet::parse("1").expect("a CPU list"),
            client_cpus: CpuSet::parse("0").expect("a CPU list"),
            workers: 1,
            workers_sweep: Vec::new(),
            client_threads: 1,
            warmup: 1,
            rounds: Rounds::Auto { target_ci_pct: DEFAULT_TARGET_CI_PCT },
            max_rounds: DEFAULT_MAX_ROUNDS,
            budget: Some(DEFAULT_BUDGET),
            stop: StopRule::Duration(DEFAULT_ROUND),
            tool: Tool::Builtin,
            client_io: crate::load::IoBackend::Epoll,
            client_io_name: "epoll".into(),
            client_poll: crate::load::Poll::Sleep,
            interval: crate::load::DEFAULT_INTERVAL,
            out_dir: root.join("results"),
            timeout: Duration::from_secs(5),
            start_timeout: Duration::from_secs(30),
            stop_grace: crate::launch::server::STOP_GRACE,
            rebuild: false,
            install: false,
            check: false,
            syscall_counts: SyscallCounting::Extra,
            profile: false,
            command_line: Vec::new(),
            notes: Vec::new(),
            remote: Remote::default(),
            ab: None,
        }
    }

    /// What run.json records of the options: the one place each option is given its key in the file.
    pub fn record(&self) -> RunConfig {
        let o = self;
        RunConfig {
            scenarios: o.scenarios.clone(),
            mode: o.mode.name().into(),
            think_time_ms: (o.mode == ModeKind::Latency).then_some(o.think_time.as_secs_f64() * 1000.0),
            rate_per_s: o.rate_per_s,
            load_fractions: o.load_fractions.clone(),
            connections: o.connections.clone(),
            pipeline: o.pipeline,
            connection_per_request: o.connection_per_request,
            echo: o.scenarios.iter().any(|s| s == crate::wire::Scenario::Echo.name()).then(|| echo_name(o.echo).to_string()),
            control: o.control,
            run_type: o.run_type.name().into(),
            server_cpus: o.server_cpus.to_string(),
            client_cpus: o.client_cpus.to_string(),
            workers: o.workers,
            client_threads: o.client_threads,
            warmup_rounds: o.warmup,
            measured_rounds: match o.rounds {
                Rounds::Fixed(n) => n,
                Rounds::Auto { .. } => o.max_rounds,
            },
            rounds: o.rounds.name(),
            target_ci_pct: match o.rounds {
                Rounds::Auto { target_ci_pct } => Some(target_ci_pct),
                Rounds::Fixed(_) => None,
            },
            max_rounds: Some(o.max_rounds),
            budget_s: o.budget.map(|b| b.as_secs_f64()),
            duration_s: match o.stop {
                StopRule::Duration(d) => Some(d.as_secs_f64()),
                StopRule::Requests(_) => None,
            },
            requests_per_connection: match o.stop {
                StopRule::Requests(n) => Some(n),
                StopRule::Duration(_) => None,
            },
            tool: o.tool.name().into(),
            client_io: if o.tool == Tool::Builtin { o.client_io_name.clone() } else { String::new() },
            client_poll: if o.tool == Tool::Builtin { o.client_poll.name().into() } else { String::new() },
            interval_ms: (o.tool == Tool::Builtin).then_some(o.interval.as_secs_f64() * 1e3),
            timeout_s: o.timeout.as_secs_f64(),
            notes: o.notes.clone(),
            server_address: (!o.remote.server_address.is_loopback()).then(|| o.remote.server_address.to_string()),
            client_hosts: o.remote.client_hosts.iter().map(ToString::to_string).collect(),
            server_host: o.remote.server_host.as_ref().map(ToString::to_string),
            server_checkout: o.remote.server_checkout.as_ref().map(|p| p.display().to_string()),
            workers_sweep: o.workers_sweep.clone(),
            workload: o.scenarios.iter().any(|s| s == "work" || s == "counter").then(|| (&o.mix).into()),
            ab: o.ab.as_ref().map(|ab| crate::model::ab::AbConfig {
                baseline: match &ab.source {
                    AbSource::Baseline(r) => Some(r.rev.clone()),
                    AbSource::Folders(..) => None,
                },
                folders: match &ab.source {
                    AbSource::Folders(a, b) => vec![a.display().to_string(), b.display().to_string()],
                    AbSource::Baseline(_) => Vec::new(),
                },
                noise_pct: ab.bands.change_pct,
                same_pct: Some(ab.bands.same_pct),
                fail_on: ab.fail_on.as_ref().map(crate::compare::FailOn::spec),
            }),
            shuffle_seed: Some(
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64),
            ),
        }
    }
}

/// `--echo`'s value as the command line spells it.
pub fn echo_name(kind: crate::load::EchoKind) -> &'static str {
    match kind {
        crate::load::EchoKind::PingPong => "pingpong",
        crate::load::EchoKind::Stream => "stream",
    }
}
