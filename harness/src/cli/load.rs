//! `serverbench load`: its arguments and their validation into a `LoadConfig`.

use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

use anyhow::{bail, Context};
use clap::{Args, ValueEnum};

use super::parse_duration;
use crate::load::output::LatencyUnit;
use crate::load::{EchoKind, Expect, IoBackend, LoadConfig, Mode, Poll, Stop, Workload};
use crate::os::cpus::BadCpuList;
use crate::wire::{HttpRequest, Scenario};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    Throughput,
    Latency,
    Rate,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EchoArg {
    Pingpong,
    Stream,
}

impl From<EchoArg> for EchoKind {
    fn from(a: EchoArg) -> EchoKind {
        match a {
            EchoArg::Pingpong => EchoKind::PingPong,
            EchoArg::Stream => EchoKind::Stream,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum IoArg {
    Auto,
    Epoll,
    #[value(name = "io_uring")]
    IoUring,
    #[value(name = "io_uring-sqpoll")]
    IoUringSqpoll,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PollArg {
    /// Sleep in the wait call until the kernel reports or a timer is due
    Sleep,
    /// Never sleep while load is driven: ask the kernel again at once (each thread needs a CPU of its own)
    Busy,
}

impl From<PollArg> for Poll {
    fn from(a: PollArg) -> Poll {
        match a {
            PollArg::Sleep => Poll::Sleep,
            PollArg::Busy => Poll::Busy,
        }
    }
}

impl From<IoArg> for IoBackend {
    fn from(a: IoArg) -> IoBackend {
        match a {
            IoArg::Auto => IoBackend::Auto,
            IoArg::Epoll => IoBackend::Epoll,
            IoArg::IoUring => IoBackend::IoUring,
            IoArg::IoUringSqpoll => IoBackend::IoUringSqpoll,
        }
    }
}

/// `--interval`, of `load` and of `bench`.
#[derive(Debug, Clone, Args)]
pub struct IntervalArgs {
    /// Length of the intervals each measured window is cut into, each with its responses, errors and
    /// latency histogram (in --json and run.json; printed by load --timeline, drawn in report.html)
    #[arg(long, value_parser = parse_duration, default_value = "100ms", value_name = "TIME")]
    pub interval: Duration,
}

impl IntervalArgs {
    /// The interval, checked.
    pub fn checked(&self) -> anyhow::Result<Duration> {
        if self.interval < crate::load::MIN_INTERVAL {
            bail!("--interval must be at least {:?}", crate::load::MIN_INTERVAL);
        }
        Ok(self.interval)
    }
}

#[derive(Debug, Args)]
pub struct LoadArgs {
    /// Target: http://HOST:PORT/PATH or HOST:PORT (loopback unless --allow-remote)
    pub target: String,
    /// Worker threads, one per client CPU [default: the number of --cpus, or 1]
    #[arg(short = 't', long)]
    pub threads: Option<usize>,
    /// Connections in total, spread over the threads
    #[arg(short = 'c', long, default_value_t = 64)]
    pub connections: usize,
    /// Each connection sends exactly this many requests; the clock runs from the first send to the last response
    #[arg(short = 'n', long = "requests-per-connection", conflicts_with = "duration")]
    pub requests_per_connection: Option<u64>,
    /// How long to measure (10s, 500ms, 2m; a bare number is seconds)
    #[arg(short = 'd', long, value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// Load applied before measuring, excluded from every figure (with --duration)
    #[arg(long = "warmup-time", value_parser = parse_duration, default_value = "0s")]
    pub warmup_time: Duration,
    /// throughput: closed loop; latency: closed loop with --think-time; rate: open loop at --rate
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,
    /// Pause between a response and the next request on a connection [default: 1ms in latency mode]
    #[arg(long = "think-time", value_parser = parse_duration)]
    pub think_time: Option<Duration>,
    /// Requests per second in total (open loop; latency measured from each request's intended send time)
    #[arg(short = 'R', long)]
    pub rate: Option<f64>,
    /// Requests in flight per HTTP connection
    #[arg(long, default_value_t = 1)]
    pub pipeline: u32,
    /// The request preset of a serverbench contestant, whose answers are then held to the scenario's: hello
    /// (GET /, every byte), plaintext (GET /plaintext), json (POST /ping), echo (raw TCP), work (GET
    /// /work/<N>, see --work), counter (GET /counter/<k>, see --keys). Without it any server can be
    /// measured: a plain GET of the target's path, and a well-framed 2xx response is valid
    #[arg(long, value_enum)]
    pub scenario: Option<Scenario>,
    /// Raw TCP echo instead of HTTP: pingpong (write, read back, repeat) or stream (both sides busy)
    #[arg(long, value_enum)]
    pub echo: Option<EchoArg>,
    /// Echo message size in bytes
    #[arg(long = "size", default_value_t = 512)]
    pub size_bytes: usize,
    /// HTTP method of a custom request
    #[arg(long)]
    pub method: Option<String>,
    /// Extra request header "Name: value" (repeatable)
    #[arg(short = 'H', long = "header")]
    pub headers: Vec<String>,
    /// Request body
    #[arg(long)]
    pub body: Option<String>,
    /// Every response must be exactly these bytes (\r \n \t \\ escapes allowed); others count as mismatch errors
    #[arg(long = "expect-bytes")]
    pub expect_bytes: Option<String>,
    /// With --scenario hello: hold responses to their body, not to every byte (servers that add headers)
    #[arg(long = "no-expect", conflicts_with = "expect_bytes")]
    pub no_expect: bool,
    /// Pin the worker threads to these CPUs: 0, 0-3 or 0,2
    #[arg(long, value_parser = parse_cpus)]
    pub cpus: Option<CpuList>,
    /// Open the measured window only once every connection has been answered, waiting at most this long
    /// (with -d; the figures then leave out the ramp of a server still accepting)
    #[arg(long, value_parser = parse_duration)]
    pub ramp: Option<Duration>,
    /// Find the highest rate whose rounds keep a latency percentile under a bound, such as p99<1ms: open-loop
    /// rounds of --duration (default 2s), bracketed and bisected (starting at --rate, or at the req/s of a
    /// throughput round)
    #[arg(long)]
    pub search: Option<String>,
    /// Every request on a new connection (HTTP: with Connection: close; echo: one exchange each); latency
    /// then runs from the start of the connect
    #[arg(long = "connection-per-request")]
    pub connection_per_request: bool,
    /// A request unanswered this long is a timeout error and its connection is reopened
    #[arg(long, value_parser = parse_duration, default_value = "5s")]
    pub timeout: Duration,
    /// How the client moves bytes: io_uring (batched submissions), io_uring-sqpoll (a kernel thread on each
    /// client thread's CPU takes the submissions; needs --cpus), epoll, or auto (io_uring when the kernel has it)
    #[arg(long, value_enum, default_value = "auto")]
    pub io: IoArg,
    /// How a client thread waits for the kernel: sleep, or busy (poll without sleeping, on CPUs of its
    /// own: the server's CPU then pays no wake-ups of the client; polling time is reported apart)
    #[arg(long, value_enum, default_value = "sleep")]
    pub poll: PollArg,
    #[command(flatten)]
    pub interval: IntervalArgs,
    /// Print a line per interval before the summary: its start, responses, req/s, errors, p50, p99 and max
    #[arg(long)]
    pub timeline: bool,
    /// Also write the intervals to this file as an HdrHistogram interval log (HistogramLogWriter's format,
    /// latencies in ns), for HdrHistogram's log tools
    #[arg(long = "hdr-log", value_name = "FILE")]
    pub hdr_log: Option<std::path::PathBuf>,
    /// Unit of the latency figures printed
    #[arg(long = "latency-unit", value_enum, default_value = "us")]
    pub latency_unit: LatencyUnit,
    /// Print every figure as JSON (with the histogram, HdrHistogram V2 base64) instead of the summary
    #[arg(long)]
    pub json: bool,
    /// Allow a target outside the loopback range
    #[arg(long = "allow-remote")]
    pub allow_remote: bool,
    /// Run as a worker of `bench --client-host`: report the window's edges and the full report as JSON
    /// lines on stdout, and exit as soon as stdin closes (the ssh channel ended)
    #[arg(long, hide = true)]
    pub worker: bool,
    /// With --worker: start connecting at this wall-clock instant of this host (Unix seconds)
    #[arg(long = "start-at", hide = true, requires = "worker")]
    pub start_at: Option<f64>,
    #[command(flatten)]
    pub mix: super::mix::MixArgs,
}

/// A list of CPU numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuList(pub Vec<usize>);

/// CPU lists as taskset writes them (0, 0-3, 0,2,4-5), in the order written.
pub fn parse_cpus(s: &str) -> Result<CpuList, BadCpuList> {
    crate::os::cpus::parse_list(s).map(CpuList)
}

fn unescape(s: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            let mut b = [0; 4];
            out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
            continue;
        }
        match chars.next() {
            Some('r') => out.push(b'\r'),
            Some('n') => out.push(b'\n'),
            Some('t') => out.push(b'\t'),
            Some('\\') => out.push(b'\\'),
            Some(o) => out.extend_from_slice(format!("\\{o}").as_bytes()),
            None => out.push(b'\\'),
        }
    }
    out
}

/// The `host:port` part of a target as written, for the Host header of a plain request.
fn authority(target: &str) -> &str {
    let rest = target.strip_prefix("http://").unwrap_or(target);
    rest.split('/').next().unwrap_or(rest)
}

/// Splits `http://host:port/path` or `host:port` into an address and a path.
pub fn parse_target(target: &str, allow_remote: bool) -> anyhow::Result<(SocketAddr, Option<String>)> {
    let rest = target.strip_prefix("http://").unwrap_or(target);
    if rest.contains("://") {
        bail!("target '{target}': only http:// (or HOST:PORT) is supported");
    }
    let (hostport, path) = match rest.find('/') {
        Some(i) => (&rest[..i], Some(rest[i..].to_string())),
        None => (rest, None),
    };
    let hostport = if hostport.contains(':') && !hostport.ends_with(']') { hostport.to_string() } else { format!("{hostport}:80") };
    let addr = hostport
        .to_socket_addrs()
        .with_context(|| format!("target '{target}': cannot resolve '{hostport}' (expected HOST:PORT such as 127.0.0.1:8080)"))?
        .next()
        .with_context(|| format!("target '{target}': '{hostport}' resolves to no address"))?;
    if !addr.ip().is_loopback() && !allow_remote {
        bail!("target '{target}' ({}) is not on loopback; pass --allow-remote to load another host", addr.ip());
    }
    Ok((addr, path))
}

impl LoadArgs {
    /// Turns the options into a validated configuration.
    pub fn to_config(&self) -> anyhow::Result<LoadConfig> {
        let (target, path) = parse_target(&self.target, self.allow_remote)?;
        let mode_arg = self.mode.unwrap_or(if self.rate.is_some() {
            ModeArg::Rate
        } else if self.think_time.is_some() {
            ModeArg::Latency
        } else {
            ModeArg::Throughput
        });
        let mode = match mode_arg {
            ModeArg::Throughput => {
                if self.rate.is_some() || self.think_time.is_some() {
                    bail!("--mode throughput takes neither --rate nor --think-time");
                }
                Mode::Throughput
            }
            ModeArg::Latency => {
                if self.rate.is_some() {
                    bail!("--mode latency takes --think-time, not --rate");
                }
                Mode::Latency { think_time: self.think_time.unwrap_or(Duration::from_millis(1)) }
            }
            ModeArg::Rate => Mode::Rate {
                requests_per_s: self.rate.context("--mode rate needs --rate N (requests per second in total)")?,
            },
        };
        let stop = match (self.requests_per_connection, self.duration) {
            (Some(r), _) => {
                if !self.warmup_time.is_zero() {
                    bail!("--warmup-time goes with --duration, not with --requests-per-connection");
                }
                Stop::RequestsPerConnection(r)
            }
            (None, d) => Stop::Duration { warmup: self.warmup_time, measure: d.unwrap_or(Duration::from_secs(10)) },
        };
        let echo = match (self.echo, self.scenario) {
            (Some(kind), _) => Some(kind.into()),
            (None, Some(Scenario::Echo)) => Some(EchoKind::PingPong),
            _ => None,
        };
        let workload = if let Some(kind) = echo {
            Workload::Echo { kind, size_bytes: self.size_bytes }
        } else {
            let custom = self.method.is_some() || self.body.is_some() || !self.headers.is_empty();
            // Without --scenario the target is any server: a plain GET of the URL's path, as wrk sends it
            // (Host as written in the URL), and any well-framed 2xx response is valid.
            let scenario = match self.scenario {
                Some(Scenario::Echo) => unreachable!("handled above"),
                other => other,
            };
            let mut request = scenario.and_then(Scenario::request).unwrap_or_else(|| HttpRequest {
                host: authority(&self.target).to_string(),
                ..HttpRequest::get(path.as_deref().unwrap_or("/"))
            });
            if let Some(m) = &self.method {
                request.method = m.clone();
            }
            if let Some(b) = &self.body {
                request.body = b.as_bytes().to_vec();
                request.json_sequence = false;
            }
            for h in &self.headers {
                let (k, v) = h.split_once(':').with_context(|| format!("--header '{h}' is not of the form 'Name: value'"))?;
                request.headers.push((k.trim().to_string(), v.trim().to_string()));
            }
            let expect = match (&self.expect_bytes, scenario) {
                (Some(e), _) => Expect::Response(unescape(e)),
                (None, Some(s)) if !custom => Expect::for_scenario(s, !self.no_expect),
                _ => Expect::Status,
            };
            let mix_options = self.mix.options();
            mix_options.check_against(scenario.as_slice()).map_err(anyhow::Error::msg)?;
            let mix = scenario.map_or(crate::load::Mix::Fixed, |s| mix_options.for_scenario(s));
            Workload::Http { request, pipeline: self.pipeline, expect, mix }
        };
        let io = self.io.into();
        let cpus = self.cpus.clone().map(|c| c.0);
        let threads = self.threads.unwrap_or_else(|| cpus.as_ref().map_or(1, Vec::len));
        let config = LoadConfig {
            target,
            threads,
            connections: self.connections,
            cpus,
            mode,
            stop,
            workload,
            timeout: self.timeout,
            io,
            poll: self.poll.into(),
            ramp: self.ramp,
            ramp_served: None,
            connection_per_request: self.connection_per_request,
            seed: self.mix.seed,
            interval: self.interval.checked()?,
        };
        crate::load::validate(&config)?;
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_cpu_lists() {
        assert_eq!(parse_duration("10").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("100us").unwrap(), Duration::from_micros(100));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("1m30s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("2").unwrap(), Duration::from_secs(2));
        assert_eq!(parse_duration("1m").unwrap(), Duration::from_secs(60));
        assert!(parse_duration("ten").unwrap_err().to_string().contains("not a duration"));
        assert!(parse_duration("-1").is_err());
        assert_eq!(parse_cpus("0-2,5").unwrap().0, vec![0, 1, 2, 5]);
        assert!(parse_cpus("3-1").is_err());
        assert!(parse_cpus("x").unwrap_err().to_string().contains("CPU list"));
    }

    #[test]
    fn targets_stay_on_loopback_unless_allowed() {
        let (a, p) = parse_target("http://127.0.0.1:8080/plaintext", false).unwrap();
        assert_eq!(a.port(), 8080);
        assert_eq!(p.as_deref(), Some("/plaintext"));
        assert!(parse_target("[::1]:9000", false).is_ok());
        let e = parse_target("10.1.2.3:80", false).unwrap_err().to_string();
        assert!(e.contains("--allow-remote"), "{e}");
    }

    #[test]
    fn the_interval_defaults_to_the_load_generators_and_has_a_floor() {
        #[derive(Debug, clap::Parser)]
        struct Only {
            #[command(flatten)]
            i: IntervalArgs,
        }
        use clap::Parser;
        assert_eq!(Only::try_parse_from(["x"]).unwrap().i.checked().unwrap(), crate::load::DEFAULT_INTERVAL);
        assert_eq!(Only::try_parse_from(["x", "--interval", "250ms"]).unwrap().i.checked().unwrap(), Duration::from_millis(250));
        let e = Only::try_parse_from(["x", "--interval", "10us"]).unwrap().i.checked().unwrap_err().to_string();
        assert!(e.contains("--interval must be at least 1ms"), "{e}");
    }

    #[test]
    fn escapes_in_expected_bytes() {
        assert_eq!(unescape("a\\r\\nb\\\\"), b"a\r\nb\\");
    }
}

/// A client host's worker runs `serverbench load` with the arguments `remote::load_args` makes of a round's
/// config: parsed here, they give back that config exactly.
#[cfg(test)]
mod worker_arguments {
    use std::time::Duration;

    use clap::Parser;

    use crate::load::{IoBackend, LoadConfig, Mix, Mode, Poll, Stop, Workload};

    /// What `load` makes of the arguments, as the worker parses them.
    fn parsed(args: &[String]) -> LoadConfig {
        let cli = crate::cli::Cli::try_parse_from(["serverbench", "load"].iter().map(|s| s.to_string()).chain(args.iter().cloned())).unwrap();
        let crate::cli::Command::Load(l) = cli.command else { panic!("load") };
        l.to_config().unwrap()
    }

    #[test]
    fn a_worker_runs_exactly_the_rounds_config() {
        let target = "198.18.1.1:10001".parse().unwrap();
        let mut base = LoadConfig::new(target);
        base.threads = 2;
        base.connections = 33;
        base.cpus = Some(vec![0, 1]);
        base.ramp = Some(Duration::from_millis(1500));
        base.timeout = Duration::from_millis(2500);
        base.io = IoBackend::Epoll;
        base.seed = 7;
        base.interval = Duration::from_millis(25);
        let cases: Vec<(&str, bool, LoadConfig)> = vec![
            ("hello", true, base.clone()),
            ("hello", false, LoadConfig { workload: Workload::for_scenario("hello", 1, false).unwrap(), ..base.clone() }),
            (
                "plaintext",
                true,
                LoadConfig {
                    workload: Workload::for_scenario("plaintext", 8, true).unwrap(),
                    mode: Mode::Rate { requests_per_s: 1234.5 },
                    stop: Stop::Duration { warmup: Duration::from_millis(300), measure: Duration::from_micros(700_001) },
                    ..base.clone()
                },
            ),
            ("echo", true, LoadConfig { workload: Workload::for_scenario("echo", 1, true).unwrap(), stop: Stop::RequestsPerConnection(40), ..base.clone() }),
            (
                "work",
                true,
                LoadConfig {
                    workload: match Workload::for_scenario("work", 1, true).unwrap() {
                        Workload::Http { request, pipeline, expect, .. } => Workload::Http {
                            request,
                            pipeline,
                            expect,
                            mix: Mix::Work {
                                base_us: 250,
                                heavy_connections: Some(crate::load::Skew { fraction: 0.125, factor: 8 }),
                                heavy_requests: Some(crate::load::Skew { fraction: 0.3, factor: 3 }),
                            },
                        },
                        other => other,
                    },
                    mode: Mode::Latency { think_time: Duration::from_micros(1500) },
                    poll: Poll::Busy,
                    connection_per_request: true,
                    ..base.clone()
                },
            ),
        ];
        for (scenario, micro, config) in cases {
            let args = crate::remote::load_args(&config, scenario, micro);
            assert_eq!(parsed(&args), config, "{scenario}: {}", args.join(" "));
        }
    }
}
