//! What a benchmark run is asked to do, validated before any work starts.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::wire::Scenario;
use crate::catalog::Selection;
use crate::os::cpus::CpuSet;
use crate::load::search::Slo;
/// Its old path, still used by the command layer.
use crate::launch::server::STOP_GRACE;

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
}

impl Tool {
    pub fn name(self) -> &'static str {
        match self {
            Tool::Builtin => "builtin",
            Tool::Wrk => "wrk",
            Tool::H2load => "h2load",
            Tool::Hey => "hey",
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
    pub stop: StopRule,
    pub tool: Tool,
    /// How the built-in load generator moves bytes (resolved: never `Auto`), and its name for the report.
    pub client_io: crate::load::IoBackend,
    pub client_io_name: String,
    /// How the built-in load generator waits for the kernel (resolved from `--client-poll`).
    pub client_poll: crate::load::Poll,
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
    pub command_line: Vec<String>,
    /// Said before the run starts (for example that server and client share CPUs).
    pub notes: Vec<String>,
    /// Where the load comes from and where the servers listen (`--client-host`, `--server-address`).
    pub remote: Remote,
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

/// The raw choices behind `BenchOptions` (the CLI fills them).
#[derive(Debug, Clone)]
pub struct BenchChoices {
    pub catalog_root: PathBuf,
    /// The checkout whose `tools/` pins the load tools the project builds (hey) and whose `target/` keeps
    /// them built.
    pub repo_root: PathBuf,
    pub selection: Selection,
    pub scenarios: Vec<String>,
    pub mode: ModeKind,
    pub think_time_ms: f64,
    pub rate_per_s: Option<f64>,
    /// `--rate auto`: run each server at shares of its own capacity instead of one rate for all.
    pub rate_auto: bool,
    /// `--load-fraction`: those shares (default `DEFAULT_LOAD_FRACTIONS`).
    pub load_fractions: Option<Vec<f64>>,
    /// `--search`: the latency objective under which each contestant's capacity is found.
    pub search: Option<String>,
    pub connections: Vec<usize>,
    pub pipeline: u32,
    pub connection_per_request: bool,
    pub mix: crate::load::mix::MixOptions,
    /// `--workers LIST`: the `{workers}` to sweep (empty: the run type's rule).
    pub workers: Vec<usize>,
    pub run_type: RunType,
    pub server_cpus: Option<String>,
    pub client_cpus: Option<String>,
    pub client_threads: Option<usize>,
    pub warmup: u32,
    pub rounds: Rounds,
    /// Default: `DEFAULT_MAX_ROUNDS` with auto, twice the count with a fixed count.
    pub max_rounds: Option<u32>,
    pub duration: Option<Duration>,
    pub requests: Option<u64>,
    pub tool: Tool,
    pub client_io: crate::load::IoBackend,
    pub client_poll: crate::load::Poll,
    pub out_dir: PathBuf,
    pub timeout: Duration,
    pub start_timeout: Duration,
    pub rebuild: bool,
    pub install: bool,
    pub check: bool,
    pub syscall_counts: SyscallCounting,
    pub command_line: Vec<String>,
    /// `--client-host` as given (`[USER@]HOST[:PORT]`).
    pub client_hosts: Vec<String>,
    pub ssh_options: Vec<String>,
    /// `--server-address`; loopback when not given.
    pub server_address: Option<std::net::IpAddr>,
    pub clock_tolerance: Duration,
    /// `--server-host` as given, and `--server-checkout`.
    pub server_host: Option<String>,
    pub server_checkout: Option<PathBuf>,
}

impl BenchChoices {
    /// The quick default run (as `serverbench bench` with no options) of the catalog at `catalog_root`, with
    /// the tools of the checkout this program was built from.
    pub fn new(catalog_root: PathBuf, out_dir: PathBuf) -> BenchChoices {
        BenchChoices {
            catalog_root,
            repo_root: Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap_or(Path::new(".")).to_path_buf(),
            selection: Selection::default(),
            scenarios: vec![Scenario::Hello.name().into()],
            mode: ModeKind::Throughput,
            think_time_ms: 1.0,
            rate_per_s: None,
            rate_auto: false,
            load_fractions: None,
            search: None,
            connections: vec![64],
            pipeline: 1,
            connection_per_request: false,
            mix: Default::default(),
            workers: Vec::new(),
            run_type: RunType::SingleCore,
            server_cpus: None,
            client_cpus: None,
            client_threads: None,
            warmup: 1,
            rounds: Rounds::Auto { target_ci_pct: DEFAULT_TARGET_CI_PCT },
            max_rounds: None,
            duration: None,
            requests: None,
            tool: Tool::Builtin,
            client_io: crate::load::IoBackend::Auto,
            client_poll: crate::load::Poll::Sleep,
            out_dir,
            timeout: Duration::from_secs(5),
            start_timeout: Duration::from_secs(30),
            rebuild: false,
            install: true,
            check: false,
            syscall_counts: SyscallCounting::Extra,
            command_line: Vec::new(),
            client_hosts: Vec::new(),
            ssh_options: Vec::new(),
            server_address: None,
            clock_tolerance: DEFAULT_CLOCK_TOLERANCE,
            server_host: None,
            server_checkout: None,
        }
    }
}

/// Default length of a round: short, so that a slow stretch of the machine (5 to 20 s on a shared VM)
/// spoils few rounds, and many rounds fit: on a 2-CPU VM 16 to 18 rounds of 0.5 s gave narrower intervals than
/// 10 of 1 s in less time (docs/methodology.md, "Round length").
pub const DEFAULT_ROUND: Duration = Duration::from_millis(500);
/// `--rate auto` without `--load-fraction`: half the capacity (a server with room to spare) and 90% (near
/// its knee), the two loads at which latency is usually compared.
pub const DEFAULT_LOAD_FRACTIONS: [f64; 2] = [0.5, 0.9];
/// `--target-ci`: the half-width of the median's 95% interval that ends a measurement's rounds, in percent.
pub const DEFAULT_TARGET_CI_PCT: f64 = 3.0;
/// `--max-rounds` with `--rounds auto`.
pub const DEFAULT_MAX_ROUNDS: u32 = 16;

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
    pub fn new(c: BenchChoices) -> anyhow::Result<BenchOptions> {
        let mut notes = Vec::new();
        for s in &c.scenarios {
            anyhow::ensure!(Scenario::parse(s).is_some(), "unknown scenario '{s}'; allowed: {}", Scenario::NAMES.join(", "));
        }
        anyhow::ensure!(!c.scenarios.is_empty(), "give at least one --scenario");
        anyhow::ensure!(!c.connections.is_empty() && c.connections.iter().all(|&n| n > 0), "-c takes connection counts above 0, such as 64 or 8,64,256");
        anyhow::ensure!(c.pipeline >= 1, "--pipeline must be at least 1");
        let scenarios: Vec<Scenario> = c.scenarios.iter().filter_map(|s| Scenario::parse(s)).collect();
        c.mix.check_against(&scenarios).map_err(anyhow::Error::msg)?;
        let max_rounds = match (c.rounds, c.max_rounds) {
            (Rounds::Fixed(n), None) => n.saturating_mul(2),
            (Rounds::Auto { .. }, None) => DEFAULT_MAX_ROUNDS,
            (_, Some(m)) => m,
        };
        match c.rounds {
            Rounds::Fixed(n) => {
                anyhow::ensure!(n >= 1, "--rounds must be at least 1");
                anyhow::ensure!(max_rounds >= n, "--max-rounds {max_rounds} is below --rounds {n}");
            }
            Rounds::Auto { target_ci_pct } => {
                anyhow::ensure!(target_ci_pct > 0.0, "--target-ci must be above 0%, such as 3%");
                anyhow::ensure!(
                    max_rounds as usize >= crate::stats::rounds::MIN_FOR_CI,
                    "--max-rounds must be at least {} with --rounds auto (the fewest rounds with a 95% interval)",
                    crate::stats::rounds::MIN_FOR_CI
                );
            }
        }
        anyhow::ensure!(
            !(c.connection_per_request && c.pipeline > 1),
            "--pipeline {} needs a connection that carries several requests; --connection-per-request sends one",
            c.pipeline
        );
        if c.pipeline > 1 && c.scenarios.iter().any(|s| s != Scenario::Plaintext.name()) {
            notes.push("--pipeline is meant for the plaintext scenario (servers that parse requests); other scenarios answer per read".into());
        }

        let allowed = CpuSet::allowed();
        let (default_server, default_client) = CpuSet::split(&allowed);
        let server_all = match &c.server_cpus {
            Some(s) => CpuSet::parse(s)?,
            None => default_server,
        };
        let client_cpus = match &c.client_cpus {
            Some(s) => CpuSet::parse(s)?,
            None => default_client,
        };
        // With a server host, the server CPUs are that host's: its agent checks them there.
        let here = c.server_host.is_none();
        for (what, set) in [("--server-cpus", &server_all), ("--client-cpus", &client_cpus)].into_iter().filter(|(w, _)| here || *w != "--server-cpus") {
            anyhow::ensure!(set.is_subset_of(&allowed), "{what} {set} is outside the CPUs this process may use ({allowed})");
        }
        let server_cpus = match c.run_type {
            RunType::SingleCore => server_all.first(),
            RunType::MultiCore => server_all,
        };
        // multiCore with one server CPU would quietly be singleCore under another name.
        anyhow::ensure!(
            c.run_type == RunType::SingleCore || server_cpus.len() >= 2,
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
        let workers_sweep = workers_sweep(&c.workers, server_cpus.len(), &mut notes)?;
        let client_threads = c.client_threads.unwrap_or(client_cpus.len()).max(1);

        let stop = match (c.duration, c.requests) {
            (Some(_), Some(_)) => anyhow::bail!("give -d/--duration or -n/--requests, not both"),
            (_, Some(0)) => anyhow::bail!("-n must be at least 1"),
            (_, Some(n)) => StopRule::Requests(n),
            (Some(d), None) => {
                anyhow::ensure!(!d.is_zero(), "-d must be above 0");
                StopRule::Duration(d)
            }
            (None, None) => StopRule::Duration(DEFAULT_ROUND),
        };
        anyhow::ensure!(!(c.rate_auto && c.rate_per_s.is_some()), "give --rate a number or auto, not both");
        let load_fractions = match (c.rate_auto, &c.load_fractions) {
            (false, Some(_)) => anyhow::bail!("--load-fraction applies to --rate auto only"),
            (false, None) => Vec::new(),
            (true, _) if c.mode != ModeKind::Rate => anyhow::bail!("--rate applies to --mode rate only"),
            (true, None) => DEFAULT_LOAD_FRACTIONS.to_vec(),
            (true, Some(f)) => {
                anyhow::ensure!(!f.is_empty(), "--load-fraction needs at least one share, such as 0.5");
                if let Some(bad) = f.iter().find(|f| !(**f > 0.0 && **f <= 1.0)) {
                    anyhow::bail!("--load-fraction {bad}: each share of the capacity must be above 0 and at most 1");
                }
                f.clone()
            }
        };
        let rate_per_s = match (c.mode, c.rate_per_s) {
            (ModeKind::Rate, None) if c.rate_auto => None,
            (ModeKind::Rate, None) => anyhow::bail!("--mode rate needs --rate REQUESTS_PER_S or --rate auto"),
            (ModeKind::Rate, Some(r)) if !(r > 0.0) => anyhow::bail!("--rate must be above 0"),
            (ModeKind::Rate, r) => r,
            (_, Some(_)) => anyhow::bail!("--rate applies to --mode rate only"),
            (_, None) => None,
        };
        anyhow::ensure!(c.think_time_ms >= 0.0, "--think-time cannot be negative");
        let search = match &c.search {
            None => None,
            Some(text) => {
                anyhow::ensure!(c.tool == Tool::Builtin, "--search runs rate rounds of the built-in load generator: use --tool builtin");
                anyhow::ensure!(matches!(stop, StopRule::Duration(_)), "--search runs rounds of -d/--duration, not -n");
                Some(Slo::parse(text)?)
            }
        };

        if c.tool != Tool::Builtin {
            let tool = c.tool.name();
            anyhow::ensure!(
                c.mode == ModeKind::Throughput,
                "--tool {tool} supports --mode throughput only; use --tool builtin for latency and rate"
            );
            anyhow::ensure!(
                !c.scenarios.iter().any(|s| s == Scenario::Echo.name()),
                "--tool {tool} speaks HTTP only; the echo scenario needs --tool builtin"
            );
            if c.tool == Tool::Hey {
                super::hey::ready(&c.repo_root)?;
                anyhow::ensure!(c.pipeline == 1, "hey sends one request at a time per connection: use --pipeline 1");
            } else {
                anyhow::ensure!(
                    crate::catalog::requires::find_command(tool).is_some(),
                    "--tool {tool}: `{tool}` is not installed (apt-get install -y {})",
                    if c.tool == Tool::Wrk { "wrk" } else { "nghttp2-client" }
                );
            }
            anyhow::ensure!(!c.connection_per_request, "--connection-per-request needs --tool builtin");
            anyhow::ensure!(
                !scenarios.contains(&Scenario::Counter) && !(scenarios.contains(&Scenario::Work) && c.mix.skewed()),
                "--tool {}: `counter` (whose answers are checked for lost updates) and `work` with heavy connections or requests need --tool builtin",
                c.tool.name()
            );
            anyhow::ensure!(c.client_poll == crate::load::Poll::Sleep, "--client-poll busy needs --tool builtin");
            if c.tool == Tool::Wrk {
                anyhow::ensure!(matches!(stop, StopRule::Duration(_)), "wrk runs for a duration only: use -d, not -n");
            }
        }

        let remote = remote(&c, &scenarios)?;
        let (client_io, client_io_name) = crate::load::resolve_io(c.client_io).map_err(|e| anyhow::anyhow!("--client-{e}"))?;
        let client_poll = client_poll(c.client_poll, &server_cpus_here, &client_cpus, client_threads)?;
        anyhow::ensure!(
            client_io != crate::load::IoBackend::IoUringSqpoll || !server_cpus_here.overlaps(&client_cpus),
            "--client-io io_uring-sqpoll pins a kernel thread to each client thread's CPU, which must not be a server's: \
             client on CPUs {client_cpus}, servers on {server_cpus}"
        );

        Ok(BenchOptions {
            catalog_root: c.catalog_root,
            repo_root: c.repo_root,
            selection: c.selection,
            scenarios: c.scenarios,
            mode: c.mode,
            think_time: Duration::from_secs_f64(c.think_time_ms / 1000.0),
            rate_per_s,
            load_fractions,
            search,
            connections: c.connections,
            pipeline: c.pipeline,
            connection_per_request: c.connection_per_request,
            mix: c.mix,
            run_type: c.run_type,
            server_cpus,
            client_cpus,
            workers,
            workers_sweep,
            client_threads,
            warmup: c.warmup,
            rounds: c.rounds,
            max_rounds,
            stop,
            tool: c.tool,
            client_io,
            client_io_name,
            client_poll,
            out_dir: c.out_dir,
            timeout: c.timeout,
            start_timeout: c.start_timeout,
            stop_grace: STOP_GRACE,
            rebuild: c.rebuild,
            install: c.install,
            check: c.check,
            syscall_counts: c.syscall_counts,
            command_line: c.command_line,
            notes,
            remote,
        })
    }
}

/// `--client-host`, `--server-address`, `--ssh-option`, `--clock-tolerance`, checked: hosts need the built-in
/// generator and an address of this machine they can reach.
fn remote(c: &BenchChoices, scenarios: &[Scenario]) -> anyhow::Result<Remote> {
    let client_hosts = c.client_hosts.iter().map(|h| crate::remote::HostSpec::parse(h)).collect::<Result<Vec<_>, _>>().map_err(anyhow::Error::msg)?;
    let server_address = c.server_address.unwrap_or(Remote::default().server_address);
    let server_host = c.server_host.as_deref().map(|h| crate::remote::HostSpec::parse_as("--server-host", h)).transpose().map_err(anyhow::Error::msg)?;
    if c.server_address.is_some() && server_host.is_none() {
        std::net::TcpListener::bind((server_address, 0)).map_err(|e| {
            anyhow::anyhow!("--server-address {server_address} is not an address of this machine ({e}); give one that `ip addr` lists")
        })?;
    }
    if !client_hosts.is_empty() {
        anyhow::ensure!(c.tool == Tool::Builtin, "--client-host runs the built-in load generator on each host: use --tool builtin");
        anyhow::ensure!(
            !server_address.is_loopback(),
            "--client-host needs --server-address: an address of this machine that the client hosts reach (the servers listen on it)"
        );
        anyhow::ensure!(
            !scenarios.contains(&Scenario::Counter),
            "--client-host: `counter` checks every answer for lost updates in one process, which hosts apart cannot do; run it without --client-host"
        );
    }
    anyhow::ensure!(!c.clock_tolerance.is_zero(), "--clock-tolerance must be above 0");
    let (server_checkout, server_catalog) = match &server_host {
        None => {
            anyhow::ensure!(c.server_checkout.is_none(), "--server-checkout applies to --server-host only");
            (None, None)
        }
        Some(_) => {
            super::server_there::check(c)?;
            let (checkout, catalog) = super::server_there::paths(c);
            (Some(checkout), Some(catalog))
        }
    };
    Ok(Remote { client_hosts, ssh_options: c.ssh_options.clone(), server_address, clock_tolerance: c.clock_tolerance, server_host, server_checkout, server_catalog })
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

#[cfg(test)]
mod tests {
    use super::*;

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

    fn choices() -> BenchChoices {
        BenchChoices::new("contestants".into(), "results".into())
    }

    #[test]
    fn defaults_give_one_server_cpu_and_one_worker() {
        let o = BenchOptions::new(choices()).unwrap();
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
        c.rate_auto = true;
        let o = BenchOptions::new(c.clone()).unwrap();
        assert_eq!((o.rate_per_s, o.load_fractions), (None, vec![0.5, 0.9]));
        c.load_fractions = Some(vec![0.3]);
        assert_eq!(BenchOptions::new(c).unwrap().load_fractions, vec![0.3]);
    }

    #[test]
    fn rejects_what_cannot_work() {
        let bad = |f: &dyn Fn(&mut BenchChoices)| {
            let mut c = choices();
            f(&mut c);
            BenchOptions::new(c).unwrap_err().to_string()
        };
        assert!(bad(&|c| c.scenarios = vec!["helo".into()]).contains("unknown scenario 'helo'"));
        assert!(bad(&|c| c.connections = vec![0]).contains("-c takes"));
        assert!(bad(&|c| c.mode = ModeKind::Rate).contains("--rate"));
        assert!(bad(&|c| c.rate_per_s = Some(5.0)).contains("--mode rate only"));
        assert!(bad(&|c| c.load_fractions = Some(vec![0.5])).contains("--load-fraction applies to --rate auto only"));
        assert!(bad(&|c| c.rate_auto = true).contains("--mode rate only"));
        let auto = |c: &mut BenchChoices| {
            c.mode = ModeKind::Rate;
            c.rate_auto = true;
        };
        assert!(bad(&|c| { auto(c); c.load_fractions = Some(vec![0.5, 1.5]) }).contains("--load-fraction 1.5"));
        assert!(bad(&|c| { auto(c); c.load_fractions = Some(vec![0.0]) }).contains("above 0 and at most 1"));
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
        use crate::load::Poll;
        assert_eq!(BenchOptions::new(choices()).unwrap().client_poll, Poll::Sleep);
        let all = CpuSet::allowed();
        if all.len() < 2 {
            return; // no CPU of the client's own
        }
        let mut busy = choices();
        busy.client_poll = Poll::Busy;
        assert_eq!(BenchOptions::new(busy.clone()).unwrap().client_poll, Poll::Busy);
        let mut two_threads_one_cpu = busy.clone();
        two_threads_one_cpu.client_threads = Some(2);
        two_threads_one_cpu.client_cpus = Some(all.cpus()[0].to_string());
        two_threads_one_cpu.server_cpus = Some(all.cpus()[1].to_string());
        let e = BenchOptions::new(two_threads_one_cpu).unwrap_err().to_string();
        assert!(e.contains("--client-poll busy needs a CPU of its own") && e.contains("2 client threads"), "{e}");
        let mut shared = busy;
        shared.run_type = RunType::MultiCore;
        shared.server_cpus = Some(all.to_string());
        shared.client_cpus = Some(all.to_string());
        assert!(BenchOptions::new(shared).unwrap_err().to_string().contains("none of them a server's"));
    }

    /// SQPOLL pins a kernel thread to each client CPU: refused where those are a server's too. (Where the
    /// kernel refuses SQPOLL the option is refused before that, by `resolve_io`, with the kernel's reason.)
    #[test]
    fn sqpoll_is_refused_on_a_servers_cpu() {
        let all = CpuSet::allowed();
        if all.len() < 2 || crate::load::resolve_io(crate::load::IoBackend::IoUringSqpoll).is_err() {
            return; // no CPU of the client's own, or no SQPOLL on this kernel
        }
        let mut shared = choices();
        shared.client_io = crate::load::IoBackend::IoUringSqpoll;
        assert_eq!(BenchOptions::new(shared.clone()).unwrap().client_io, crate::load::IoBackend::IoUringSqpoll);
        shared.run_type = RunType::MultiCore;
        shared.server_cpus = Some(all.to_string());
        shared.client_cpus = Some(all.to_string());
        let e = BenchOptions::new(shared).unwrap_err().to_string();
        assert!(e.contains("--client-io io_uring-sqpoll pins a kernel thread") && e.contains("must not be a server's"), "{e}");
    }

    #[test]
    fn multi_core_on_shared_cpus_is_allowed_when_asked_and_said() {
        let all = CpuSet::allowed();
        if all.len() < 2 {
            return; // nothing to share
        }
        let mut c = choices();
        c.run_type = RunType::MultiCore;
        c.server_cpus = Some(all.to_string());
        c.client_cpus = Some(all.to_string());
        let o = BenchOptions::new(c).unwrap();
        assert_eq!(o.workers, all.len());
        assert!(o.notes.iter().any(|n| n.contains("overlap")), "{:?}", o.notes);
    }
}
