/// sb.handlers: the fixed answers and the handlers of `work`, `counter` and `file`, shared by every D
/// contestant.
module sb.handlers;

import core.atomic : atomicOp;
import core.stdc.stdio : fprintf, perror, stderr;
import core.stdc.stdlib : exit;
import core.sys.posix.fcntl : open, O_RDONLY, O_CLOEXEC;
import core.sys.posix.sys.mman;
import core.sys.posix.sys.types : off_t, ssize_t;
import core.time : MonoTime, ticksToNSecs;
import std.process : environment;
import std.string : toStringz;

import sb.args : Scenario;

immutable helloResponse = "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello world!";
immutable badRequest = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
enum fileBytes = 4096;
enum answerMaxBytes = 96; /// the longest answer of answerPath
enum workMaxUs = 1_000_000;
enum counterKeys = 65_536;

/// A step of the spin longer than this means the thread was not running (descheduled, preempted):
/// that time was not spent on the request, so it is not counted.
enum workGapNs = 50_000;

/// counter: 65,536 counters, incremented with atomicOp!"+=" (a lock-free fetch-add), no lock. Mapped
/// MAP_SHARED before any worker starts, so forked workers (prefork) share them too.
__gshared shared(ulong)* counters;

/// file: $SB_FILES/4k, opened once and sent with sendfile(2) from the page cache at every request.
__gshared int fileFd = -1;

/// Linux's, which druntime does not declare. MSG_MORE: a file's head waits to leave in the same packets
/// as the file.
extern (C) ssize_t sendfile(int outFd, int inFd, off_t* offset, size_t count) nothrow @nogc;
enum MSG_MORE = 0x8000;

/// What the scenario needs before the workers start: the counters, the file.
void openHandlers(Scenario s)
{
    if (s == Scenario.counter) { // zero-filled
        void* p = mmap(null, counterKeys * ulong.sizeof, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANON, -1, 0);
        if (p == MAP_FAILED) { perror("mmap counters"); exit(1); }
        counters = cast(shared(ulong)*) p;
    }
    if (s == Scenario.file) {
        string dir = environment.get("SB_FILES");
        if (dir is null) { fprintf(stderr, "file: SB_FILES is not set\n"); exit(2); }
        fileFd = open((dir ~ "/4k").toStringz, O_RDONLY | O_CLOEXEC);
        if (fileFd < 0) { perror((dir ~ "/4k").toStringz); exit(2); }
    }
}

/// work: spins on core.time.MonoTime (CLOCK_MONOTONIC) until `us` microseconds of RUNNING time have
/// passed, holding its thread as real CPU work in a handler would: no sleep, no yield. A step counts
/// only when it is below workGapNs, so a preempted thread still spends `us` µs of CPU on the request.
void busyWaitUs(long us)
{
    // Steps in ticks (ns here), not as a Duration: its 100 ns unit would round most steps down to 0.
    long goal = us * 1000, total = 0, last = MonoTime.currTime.ticks;
    while (total < goal) {
        long now = MonoTime.currTime.ticks, d = ticksToNSecs(now - last);
        if (d < workGapNs) total += d; // a longer step: the thread was not running
        last = now;
    }
}

/// The decimal after `prefix` that ends `path` (leading zeros allowed), or -1: none, a non-digit, > max.
long pathNumber(const(char)[] path, string prefix, long max)
{
    if (path.length <= prefix.length || path[0 .. prefix.length] != prefix) return -1;
    long v = 0;
    foreach (ch; path[prefix.length .. $]) {
        if (ch < '0' || ch > '9' || (v = v * 10 + (ch - '0')) > max) return -1;
    }
    return v;
}

/// Appends bytes and decimals to a buffer with room for them.
struct Writer {
    char[] buf;
    size_t len;

    void put(const(char)[] bytes) { buf[len .. len + bytes.length] = bytes; len += bytes.length; }

    void putDecimal(ulong v)
    {
        char[20] digits;
        size_t d = digits.length;
        do digits[--d] = cast(char)('0' + v % 10); while ((v /= 10) != 0);
        put(digits[d .. $]);
    }

    /// `HTTP/1.1 <status>\r\n[Connection: keep-alive\r\n]Content-Length: <n>\r\n\r\n`
    void putHead(string status, bool keepAliveHeader, ulong contentBytes)
    {
        put("HTTP/1.1 "), put(status), put("\r\n");
        if (keepAliveHeader) put(connectionKeepAlive);
        put("Content-Length: "), putDecimal(contentBytes), put("\r\n\r\n");
    }
}

/// An HTTP/1.0 client keeps its connection only when both sides say so: the answer carries this.
immutable connectionKeepAlive = "Connection: keep-alive\r\n";

/// Handles the request for `path` (work, counter or file) and writes its answer to `out_` (room for
/// answerMaxBytes): its length. A bad path answers 400 and sets `bad`: then close. file sets `sendFile`
/// when the answer is the head of the file, whose bytes must follow it; any other name is a 404.
size_t answerPath(Scenario s, const(char)[] path, bool keepAliveHeader, char[] out_, ref bool bad, ref bool sendFile)
{
    auto w = Writer(out_);
    if (s == Scenario.file) {
        sendFile = path == "/file/4k"; // only that name: never a path outside the folder
        w.putHead(sendFile ? "200 OK" : "404 Not Found", keepAliveHeader, sendFile ? fileBytes : 0);
        return w.len;
    }
    long n = s == Scenario.work ? pathNumber(path, "/work/", workMaxUs) : pathNumber(path, "/counter/", counterKeys - 1);
    if (n < 0) {
        bad = true;
        w.put(badRequest);
        return w.len;
    }
    ulong v;
    if (s == Scenario.work) busyWaitUs(n), v = n;
    else v = atomicOp!"+="(counters[n], 1);
    char[20] digits;
    auto body = Writer(digits[]); // the decimal first, for its length
    body.putDecimal(v);
    w.putHead("200 OK", keepAliveHeader, body.len);
    w.put(digits[0 .. body.len]);
    return w.len;
}
