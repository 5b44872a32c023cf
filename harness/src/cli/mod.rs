//! The command line, defined in one place: every subcommand's arguments (`load` and `compare` in files of
//! their own) and the parsers of their values.

pub mod compare;
pub mod load;
pub mod mix;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::catalog::Selection;
use crate::run::options::{BenchChoices, ModeKind, Rounds, RunType, SyscallCounting, Tool};
use crate::wire::Scenario;

/// A command-line value that does not parse; clap prints it after the option's name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadValue(pub String);

/// Durations as wrk and hyperfine users write them: `2`, `1.5s`, `500ms`, `200us`, `1m`, `1m30s`;
/// a bare number is seconds. One parser for every command.
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

pub fn parse_duration(s: &str) -> Result<Duration, BadValue> {
    let t = s.trim();
    let bad = || BadValue(format!("'{s}' is not a duration; write 2, 1.5s, 500ms, 200us or 1m"));
    const UNITS: [(&str, f64); 7] = [("ns", 1e-9), ("us", 1e-6), ("µs", 1e-6), ("ms", 1e-3), ("s", 1.0), ("m", 60.0), ("h", 3600.0)];
    let (number, scale) = UNITS.iter().find_map(|(u, k)| t.strip_suffix(u).map(|n| (n, *k))).unwrap_or((t, 1.0));
    match number.trim().parse::<f64>() {
        Ok(v) if v >= 0.0 && v.is_finite() => Ok(Duration::from_secs_f64(v * scale)),
        Ok(_) => Err(bad()),
        Err(_) => humantime::parse_duration(t).map_err(|_| bad()),
    }
}

#[derive(Debug, Parser)]
#[command(name = "serverbench", version, about = "A benchmark of approaches to writing server applications")]
pub struct Cli {
    /// Print only results and warnings: no progress bar, no line per measurement.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Print every step: commands, builds, each round.
    #[arg(short, long, global = true)]
    pub verbose: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Drive one server with the built-in load generator (a wrk-class client).
    Load(load::LoadArgs),
    /// List the contestants: language, framework, category, model, io, scenarios, and whether each can run here.
    List(ListArgs),
    /// Build, start, verify and measure contestants; write results/<run-id>/ (run.json and the summaries).
    Bench(BenchArgs),
    /// Check contestants against their wire contract, timeouts, bad input, 20,000 connections and real clients.
    Check(CheckArgs),
    /// Check dependencies (installing Debian packages as root) and build contestants, without measuring.
    Build(BuildArgs),
    /// Show each contestant's response per scenario, with its size.
    Responses(ResponsesArgs),
    /// Print the toolchain and contestant versions as Markdown tables.
    Versions(ListArgs),
    /// Regenerate every summary of a run (summary.md, summary.csv, report.html) from its run.json alone.
    Report(ReportArgs),
    /// Compare two runs: B/A of req/s, p99 and CPU per request per configuration, with the Mann-Whitney U
    /// test over the rounds and the machine's own change taken out; Markdown to stdout, an HTML page to
    /// compare-<run A>.html in run B's folder (or -o FILE).
    Compare(compare::CompareArgs),
    /// The server host's side of `bench --server-host`, started there over ssh: JSON requests on stdin,
    /// replies on stdout; it ends every server it started when stdin closes.
    #[command(hide = true)]
    Agent(AgentArgs),
}

#[derive(Debug, Clone, Args)]
pub struct AgentArgs {
    /// The catalog root of the checkout here.
    #[arg(long, value_name = "DIR")]
    pub catalog: PathBuf,
    /// The agent's own folder: build logs and stamps, server logs.
    #[arg(long, value_name = "DIR")]
    pub work: PathBuf,
    /// Build even when sources are unchanged.
    #[arg(long)]
    pub rebuild: bool,
}

/// Which contestants a command works on.
#[derive(Debug, Clone, Args)]
pub struct SelectArgs {
    /// Names, or a language, framework, category, model or io: a contestant matching any of them is used (all when none).
    #[arg(value_name = "NAME_OR_FILTER")]
    pub terms: Vec<String>,
    /// The catalog root holding contestants/**/contestant.toml [default: <repo>/contestants]
    #[arg(long, value_name = "DIR")]
    pub contestants: Option<PathBuf>,
    /// Only these languages (c, cpp, rust, go, java, javascript, python, erlang, d, config).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub language: Vec<String>,
    /// Only this category (micro, platform).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub category: Vec<String>,
    /// Only these models (thread-per-connection, thread-pool, process-per-connection, process-pool, per-core,
    /// work-sharing, work-stealing, prefork, single-loop).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub model: Vec<String>,
    /// Only these I/O kinds (blocking, epoll, io_uring, runtime).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub io: Vec<String>,
    /// Only these frameworks.
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub framework: Vec<String>,
}

impl SelectArgs {
    pub fn selection(&self) -> Selection {
        Selection {
            terms: self.terms.clone(),
            language: self.language.clone(),
            category: self.category.clone(),
            model: self.model.clone(),
            io: self.io.clone(),
            framework: self.framework.clone(),
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub select: SelectArgs,
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
    /// Connections: one value or a list such as 8,64,256 (each is its own measurement).
    #[arg(short = 'c', long = "connections", value_delimiter = ',', default_value = "64", value_name = "N[,N...]")]
    pub connections: Vec<usize>,
    /// Requests in flight per connection (HTTP pipelining; for plaintext).
    #[arg(long, default_value_t = 1, value_name = "P")]
    pub pipeline: u32,
    /// Every request on a new connection (HTTP: with Connection: close; echo: one exchange each), instead
    /// of keep-alive; latency then runs from the start of the connect.
    #[arg(long = "connection-per-request")]
    pub connection_per_request: bool,
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
    /// With --rounds auto: the half-width of the median's 95% interval to reach, in percent.
    #[arg(long = "target-ci", value_parser = parse_percent, default_value = "3%", value_name = "PCT")]
    pub target_ci: f64,
    /// The most measured rounds per configuration, left-out ones included [default: 16 with auto, 2 x N]
    #[arg(long, value_name = "N")]
    pub max_rounds: Option<u32>,
    /// Length of a round: 1, 1s, 500ms, 1m [default: 500ms]
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
    /// The load generator: builtin, wrk / h2load where installed, or hey (built from tools/hey with Go).
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
}

impl BenchArgs {
    /// The choices behind the options, with paths resolved against the repository root.
    pub fn choices(&self, root: &std::path::Path, command_line: Vec<String>) -> anyhow::Result<BenchChoices> {
        Ok(BenchChoices {
            catalog_root: self.select.contestants.clone().unwrap_or_else(|| root.join("contestants")),
            repo_root: root.to_path_buf(),
            selection: self.select.selection(),
            scenarios: self.scenario.clone(),
            mode: self.mode,
            think_time_ms: self.think_time.as_secs_f64() * 1000.0,
            rate_per_s: match self.rate {
                Some(RateArg::PerS(r)) => Some(r),
                _ => None,
            },
            rate_auto: self.rate == Some(RateArg::Auto),
            load_fractions: self.load_fraction.clone(),
            search: self.search.clone(),
            connections: self.connections.clone(),
            pipeline: self.pipeline,
            connection_per_request: self.connection_per_request,
            mix: self.mix.options(),
            workers: self.workers.clone(),
            run_type: self.run_type,
            server_cpus: self.cpu_list(&self.server_cpus),
            client_cpus: self.cpu_list(&self.client_cpus),
            client_threads: self.threads,
            warmup: self.warmup,
            rounds: self.rounds_rule()?,
            max_rounds: self.max_rounds,
            duration: self.duration,
            requests: self.requests,
            tool: self.tool,
            client_io: self.client_io.into(),
            client_poll: self.client_poll.into(),
            out_dir: self.out.clone().unwrap_or_else(|| root.join("results")),
            timeout: self.timeout,
            start_timeout: self.start_timeout,
            rebuild: self.rebuild,
            install: !self.no_install,
            check: self.check,
            syscall_counts: self.syscall_counts,
            command_line,
            client_hosts: self.client_host.clone(),
            ssh_options: self.ssh_option.clone(),
            server_address: self.server_address,
            clock_tolerance: self.clock_tolerance,
            server_host: self.server_host.clone(),
            server_checkout: self.server_checkout.clone(),
        })
    }

    /// `--server-cpus` or `--client-cpus` as given; with `--cpus shared`, every CPU this process may use.
    fn cpu_list(&self, given: &Option<String>) -> Option<String> {
        match self.cpus {
            CpuSharing::Split => given.clone(),
            CpuSharing::Shared => Some(crate::os::cpus::CpuSet::allowed().to_string()),
        }
    }

    fn rounds_rule(&self) -> anyhow::Result<Rounds> {
        Rounds::parse(&self.rounds, self.target_ci)
    }
}

/// A percentage such as `3%` or `3`.
fn parse_percent(text: &str) -> Result<f64, BadValue> {
    text.trim().trim_end_matches('%').trim().parse().map_err(|_| BadValue(format!("'{text}' is not a percentage; write 3% or 1.5")))
}

#[derive(Debug, Clone, Args)]
pub struct BuildArgs {
    #[command(flatten)]
    pub select: SelectArgs,
    /// Where build logs (under .build-logs/) and build stamps go; use the same as for bench to share
    /// them [default: <repo>/results]
    #[arg(short, long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Build even when sources are unchanged since the last successful build.
    #[arg(long)]
    pub rebuild: bool,
    /// Never install missing Debian packages (by default they are installed when running as root).
    #[arg(long)]
    pub no_install: bool,
    /// Fail unless every selected contestant is built, except those whose manifest says (`unsupported`)
    /// they cannot be built on this kind of machine (what CI asks).
    #[arg(long)]
    pub require_all: bool,
}

#[derive(Debug, Clone, Args)]
pub struct ResponsesArgs {
    #[command(flatten)]
    pub select: SelectArgs,
    /// Only these scenarios [default: every scenario each contestant declares]
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub scenario: Vec<String>,
    /// Where build and server logs go [default: <repo>/results/.responses]
    #[arg(short, long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// A run folder, such as results/20260101-120000
    pub run_dir: PathBuf,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn bench_defaults_are_the_quick_run() {
        let cli = Cli::try_parse_from(["serverbench", "bench"]).unwrap();
        let Command::Bench(b) = cli.command else { panic!("bench") };
        assert_eq!(b.scenario, ["hello"]);
        assert_eq!(b.connections, [64]);
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
        assert!(help.contains(&format!("[default: {round}ms]")), "round length: {help}");
        assert!(help.contains(&format!("[default: {max} with auto")), "max rounds: {help}");
    }

    #[test]
    fn rate_takes_a_number_or_auto_with_its_shares() {
        let choices = |args: &[&str]| {
            let cli = Cli::try_parse_from(["serverbench", "bench", "--mode", "rate"].iter().chain(args)).unwrap();
            let Command::Bench(b) = cli.command else { panic!("bench") };
            let c = b.choices(std::path::Path::new("/repo"), vec![]).unwrap();
            (c.rate_per_s, c.rate_auto, c.load_fractions)
        };
        assert_eq!(choices(&["--rate", "2500"]), (Some(2500.0), false, None));
        assert_eq!(choices(&["--rate", "auto", "--load-fraction", "0.5,0.9"]), (None, true, Some(vec![0.5, 0.9])));
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
    fn bench_takes_lists_and_filters() {
        let cli = Cli::try_parse_from([
            "serverbench", "-q", "bench", "c-epoll", "go", "-c", "8,64,256", "--type", "multiCore", "--scenario",
            "hello,echo", "-d", "500ms", "--language", "c,go", "--tool", "wrk",
        ])
        .unwrap();
        assert!(cli.quiet);
        let Command::Bench(b) = cli.command else { panic!("bench") };
        assert_eq!(b.select.terms, ["c-epoll", "go"]);
        assert_eq!(b.connections, [8, 64, 256]);
        assert_eq!(b.run_type, RunType::MultiCore);
        assert_eq!(b.scenario, ["hello", "echo"]);
        assert_eq!(b.duration, Some(Duration::from_millis(500)));
        assert_eq!(b.select.language, ["c", "go"]);
        assert_eq!(b.tool, Tool::Wrk);
        assert!(Cli::try_parse_from(["serverbench", "bench", "-d", "1", "-n", "5"]).is_err());
    }
}

#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub select: SelectArgs,
    /// Only these checks, e.g. hello-response,bad-reset,scale (see docs/conformance.md) [default: all]
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub only: Vec<String>,
    /// Connections the scale check holds open at once (capped by the server's open-files limit).
    #[arg(long, default_value_t = 20_000, value_name = "N")]
    pub scale_connections: usize,
    /// Skip the scale check.
    #[arg(long)]
    pub no_scale: bool,
    /// The quick profile (CI's): the scale check holds 2,000 connections, except for the contestants of
    /// --full-scale; every other check is unchanged.
    #[arg(long)]
    pub quick: bool,
    /// With --quick, the contestants whose scale check still holds --scale-connections
    /// [default: c-epoll,c-threads,go-net,rust-tokio]
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub full_scale: Option<Vec<String>>,
    /// CPUs for the servers, as taskset -c takes them [default: the upper half]
    #[arg(long, value_name = "LIST")]
    pub server_cpus: Option<String>,
    /// The `{workers}` given to every server [default: the number of server CPUs]
    #[arg(long, value_name = "N")]
    pub workers: Option<usize>,
    /// Where the check folder is written: <DIR>/checks/<id>/ [default: <repo>/results]
    #[arg(short, long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// How long a server may take to accept its first connection.
    #[arg(long, value_parser = parse_duration, default_value = "30s", value_name = "TIME")]
    pub start_timeout: Duration,
    /// Never install missing Debian packages (contestants' and curl, wrk, h2load).
    #[arg(long)]
    pub no_install: bool,

    /// Client process of the scale check: hold connections to this address open until stdin closes.
    #[arg(long, hide = true, value_name = "ADDR")]
    pub hold: Option<SocketAddr>,
    #[arg(long, hide = true, default_value_t = 0)]
    pub hold_count: usize,
    #[arg(long, hide = true, default_value = Scenario::Hello.name())]
    pub hold_scenario: String,
    #[arg(long, hide = true)]
    pub hold_micro: bool,
    #[arg(long, hide = true, default_value_t = 10_000)]
    pub hold_timeout_ms: u64,
    #[arg(long, hide = true, default_value_t = 0)]
    pub hold_seed: u64,
}
