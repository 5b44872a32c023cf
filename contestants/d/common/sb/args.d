/// sb.args: how every D contestant starts: the command line, SB_TIMEOUT_MS, SB_FILES, the listening
/// socket and the worker threads.
module sb.args;

import core.stdc.errno : errno;
import core.stdc.stdio : fprintf, stderr;
import core.stdc.stdlib : exit;
import core.stdc.string : strerror;
import core.sys.posix.fcntl : O_NONBLOCK;
import core.sys.posix.netdb;
import core.sys.posix.netinet.in_ : IPPROTO_TCP;
import core.sys.posix.netinet.tcp : TCP_NODELAY;
import core.sys.posix.signal : signal, SIGPIPE, SIG_IGN;
import core.sys.posix.sys.resource : getrlimit, setrlimit, rlimit, RLIMIT_NOFILE;
import core.sys.posix.sys.socket;
import core.thread : Thread;
import std.algorithm : canFind, countUntil;
import std.conv : to, ConvException;
import std.process : environment;
import std.string : toStringz;

import sb.handlers : openHandlers;

enum Scenario { hello, helloTimeout, plaintext, echo, work, counter, file }
immutable string[] scenarioNames = ["hello", "hello-timeout", "plaintext", "echo", "work", "counter", "file"];

/// Linux's, which druntime does not declare: SOCK_NONBLOCK is O_NONBLOCK.
enum SOCK_NONBLOCK = O_NONBLOCK;
extern (C) int accept4(int fd, sockaddr* addr, socklen_t* len, int flags) nothrow @nogc;

/// The scenarios whose requests are parsed as HTTP.
bool isHttp(Scenario s) { return s == Scenario.plaintext || s >= Scenario.work; }

struct Args {
    Scenario scenario;
    string host, port;
    int workers;
    int timeoutMs; /// SB_TIMEOUT_MS, used by hello-timeout
}

/// Set once by parseArgs before any worker starts, read by all of them.
__gshared Args args;

/// Parses `<scenario> <host> <port> <workers>` (argv[0] is the program) into `args`; `declared` are the
/// scenarios this server answers. Exits 2 on anything else.
void parseArgs(string[] argv, string[] declared)
{
    if (argv.length != 5) {
        fprintf(stderr, "usage: %s <scenario> <host> <port> <workers>\n", argv[0].toStringz);
        exit(2);
    }
    auto s = scenarioNames.countUntil(argv[1]);
    if (s < 0 || !declared.canFind(argv[1])) {
        fprintf(stderr, "%s: scenario '%s' is not declared\n", argv[0].toStringz, argv[1].toStringz);
        exit(2);
    }
    args.scenario = cast(Scenario) s;
    args.host = argv[2], args.port = argv[3];
    args.workers = 1;
    try args.workers = argv[4].to!int; catch (ConvException) {}
    if (args.workers < 1) args.workers = 1;
    args.timeoutMs = 5000;
    try args.timeoutMs = environment.get("SB_TIMEOUT_MS", "5000").to!int; catch (ConvException) {}
    if (args.timeoutMs <= 0) args.timeoutMs = 5000;
    openHandlers(args.scenario);

    // A peer that closes early must cost an EPIPE, not the process.
    signal(SIGPIPE, SIG_IGN);
    // Thousands of connections need more than the usual soft limit of 1024 descriptors.
    rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/// A non-blocking listening TCP socket on host:port with SO_REUSEADDR and SO_REUSEPORT (one per
/// worker: the kernel spreads connections over them); exits 1 on failure.
int listenSocket()
{
    addrinfo hints;
    hints.ai_family = AF_UNSPEC, hints.ai_socktype = SOCK_STREAM, hints.ai_flags = AI_PASSIVE;
    addrinfo* res;
    int err = getaddrinfo(args.host.toStringz, args.port.toStringz, &hints, &res);
    if (err) {
        fprintf(stderr, "getaddrinfo %s:%s: %s\n", args.host.toStringz, args.port.toStringz, gai_strerror(err));
        exit(1);
    }
    scope (exit) freeaddrinfo(res);
    int fd = socket(res.ai_family, SOCK_STREAM | SOCK_NONBLOCK, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, one.sizeof) < 0
        || setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, one.sizeof) < 0
        || bind(fd, res.ai_addr, res.ai_addrlen) < 0 || listen(fd, SOMAXCONN) < 0) {
        fprintf(stderr, "listen on %s:%s: %s\n", args.host.toStringz, args.port.toStringz, strerror(errno));
        exit(1);
    }
    return fd;
}

/// Responses are written whole, so waiting for more bytes (Nagle) only adds latency.
void noDelay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, one.sizeof);
}

/// Runs `run` on `args.workers` threads and waits on them; a server's loops never end, so neither does this.
int runWorkers(void function() run)
{
    Thread[] threads;
    foreach (i; 0 .. args.workers) threads ~= new Thread(run).start();
    threads[0].join();
    return 1;
}
