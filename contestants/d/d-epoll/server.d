/// d-epoll: per-core event loops on raw epoll (core.sys.linux.epoll). Each of `workers` threads
/// (processes with --prefork) owns a SO_REUSEPORT listener and an epoll set; the kernel spreads
/// connections over the listeners and a connection stays on its loop for life. Level-triggered by
/// default, --edge for EPOLLET. Connections live in malloc'd memory, out of the GC's sight; the loops
/// allocate nothing from the GC. plaintext, work, counter and file parse HTTP (sb.http); work
/// busy-waits in the loop's own thread, holding up every connection of that loop.
module server;

import core.stdc.errno : errno, EAGAIN;
import core.stdc.stdio : fprintf, stderr;
import core.stdc.stdlib : calloc, free;
import core.stdc.string : memmove;
import core.stdc.time : time;
import core.sys.linux.epoll;
import core.sys.linux.sched : cpu_set_t, CPU_ISSET, CPU_SET, sched_getaffinity, sched_setaffinity;
import core.sys.linux.sys.prctl : prctl, PR_SET_PDEATHSIG;
import core.sys.posix.signal : SIGTERM;
import core.sys.posix.sys.socket : send;
import core.sys.posix.sys.types : off_t;
import core.sys.posix.sys.wait : wait;
import core.sys.posix.unistd : close, fork, getpid, getppid, read, write, _exit;
import std.algorithm : startsWith;
import std.string : toStringz;

import sb.args;
import sb.deadlines;
import sb.handlers;
import sb.http;

enum maxEvents = 256;

struct Conn {
    Deadline deadline; /// hello-timeout: the read or the write under way
    int fd;
    bool closing;      /// close once the output is written (HTTP scenarios)
    bool queued;       /// --edge: on the loop's list of connections to read again
    Conn* again;       /// --edge: the next one on that list
    size_t inLen;      /// HTTP scenarios: request bytes not yet answered
    char* out_;        /// bytes out_[outOff .. outLen] still to be written,
    size_t outOff, outLen;
    off_t fileOff;     /// file: then the file from fileOff, fileLeft bytes
    size_t fileLeft;
    char* buf;         /// echo: in; HTTP scenarios: in + answers; hello: none
}

struct Loop {
    int epfd, lfd;
    long nowMs;
    DeadlineList deadlines;
    PlaintextAnswers plain;           /// plaintext: Date rebuilt once per second
    char[bufBytes] scratch;           /// hello reads land here: nothing of them is kept
    Conn* againHead, againTail;       /// --edge: connections that may hold more input, in turn
}

__gshared bool edge;

void loopClock(Loop* l)
{
    l.nowMs = monoNowMs();
    if (args.scenario == Scenario.plaintext) l.plain.refresh(time(null));
}

/// hello-timeout: a timer for the read or write that starts now; a completed one is cancelled.
void timerArm(Loop* l, Conn* c)
{
    if (args.scenario == Scenario.helloTimeout) l.deadlines.arm(&c.deadline, l.nowMs, args.timeoutMs);
}

void timerCancel(Loop* l, Conn* c) { l.deadlines.cancel(&c.deadline); }

void connClose(Loop* l, Conn* c)
{
    timerCancel(l, c);
    close(c.fd);
    if (c.queued) { c.fd = -1; return; } // freed when its turn on the list comes
    free(c);
}

/// --edge: epoll reports a connection once per arrival, so one that was served may still hold input.
/// Reading it again at once would serve it for as long as its client keeps sending and starve the
/// others; it goes to the back of this list instead and is read again after every connection that was
/// ready before it.
void againPush(Loop* l, Conn* c)
{
    if (c.queued) return;
    c.queued = true, c.again = null;
    if (l.againTail) l.againTail.again = c;
    else l.againHead = c;
    l.againTail = c;
}

Conn* againPop(Loop* l)
{
    Conn* c = l.againHead;
    l.againHead = c.again;
    if (!l.againHead) l.againTail = null;
    c.queued = false;
    return c;
}

void connWatch(Loop* l, Conn* c, uint events)
{
    epoll_event ev;
    ev.events = events | (edge ? EPOLLET : 0);
    ev.data.ptr = c;
    epoll_ctl(l.epfd, EPOLL_CTL_MOD, c.fd, &ev);
}

bool pending(const Conn* c) { return c.outLen != 0 || c.fileLeft != 0; }

/// Writes what is pending (a file's head with MSG_MORE), then the file's bytes with sendfile(2): 1 when all is written, 0 when the
/// socket is full, -1 on error.
int connFlush(Conn* c)
{
    while (c.outOff < c.outLen) {
        auto n = send(c.fd, c.out_ + c.outOff, c.outLen - c.outOff, c.fileLeft ? MSG_MORE : 0);
        if (n < 0) return errno == EAGAIN ? 0 : -1;
        c.outOff += n;
    }
    c.outOff = c.outLen = 0;
    while (c.fileLeft) {
        auto n = sendfile(c.fd, fileFd, &c.fileOff, c.fileLeft);
        if (n <= 0) return n < 0 && errno == EAGAIN ? 0 : -1;
        c.fileLeft -= n;
    }
    return 1;
}

/// Answers every complete request in the input, in order, with one write per full output buffer.
/// Returns -1 to close; otherwise pending(c) means output waits for EPOLLOUT.
int httpServe(Loop* l, Conn* c)
{
    size_t used = 0;
    for (;;) {
        if (!c.closing) {
            auto a = answer(args.scenario, l.plain, c.buf[used .. c.inLen], c.out_[c.outLen .. bufBytes]);
            used += a.used, c.outLen += a.outBytes, c.closing = a.close;
            if (a.file) c.fileOff = 0, c.fileLeft = fileBytes;
        }
        if (!pending(c)) break;
        int r = connFlush(c);
        if (r <= 0) { if (r < 0) return -1; break; }
        if (c.closing) return -1;
    }
    memmove(c.buf, c.buf + used, c.inLen - used);
    c.inLen -= used;
    return 0;
}

void connOnEvent(Loop* l, Conn* c)
{
    if (pending(c)) { // the socket has room again for what was left
        int r = connFlush(c);
        if (r < 0 || (r > 0 && c.closing)) return connClose(l, c);
        if (r > 0 && isHttp(args.scenario) && httpServe(l, c) < 0) return connClose(l, c);
        if (pending(c)) return; // the write still waits, under its timer
        connWatch(l, c, EPOLLIN);
        timerArm(l, c); // the next read starts
        return;
    }
    bool http = isHttp(args.scenario);
    char[] dst = args.scenario <= Scenario.helloTimeout ? l.scratch[]
               : args.scenario == Scenario.echo ? c.buf[0 .. 512] : c.buf[c.inLen .. bufBytes];
    auto n = read(c.fd, dst.ptr, dst.length);
    if (n == 0 || (n < 0 && errno != EAGAIN)) return connClose(l, c);
    if (n < 0) return; // nothing more (edge-triggered: epoll reports the next arrival)
    timerCancel(l, c); // the read is done
    int r = 1; // 1: all answered, 0: output waits for room, -1: close
    if (args.scenario == Scenario.echo) {
        c.outLen = n;
        r = connFlush(c);
    } else if (http) {
        c.inLen += n;
        r = httpServe(l, c) < 0 ? -1 : !pending(c);
    } else if (write(c.fd, helloResponse.ptr, helloResponse.length) != helloResponse.length) {
        r = -1; // hello writes its response in one call or gives up
    }
    if (r < 0) return connClose(l, c);
    timerArm(l, c); // the write that waits for room, or else the next read
    if (r == 0) return connWatch(l, c, EPOLLOUT);
    // Level-triggered, epoll reports what is left; edge-triggered, it is read in its turn.
    if (edge) againPush(l, c);
}

void loopAccept(Loop* l)
{
    size_t bytes = isHttp(args.scenario) ? 2 * bufBytes : args.scenario == Scenario.echo ? 512 : 0;
    for (;;) {
        int fd = accept4(l.lfd, null, null, SOCK_NONBLOCK);
        if (fd < 0) return; // EAGAIN, or out of descriptors: the backlog waits
        auto c = cast(Conn*) calloc(1, Conn.sizeof + bytes);
        c.fd = fd;
        c.deadline.owner = c;
        c.buf = cast(char*)(c + 1);
        c.out_ = isHttp(args.scenario) ? c.buf + bufBytes : c.buf;
        noDelay(fd);
        epoll_event ev;
        ev.events = EPOLLIN | (edge ? EPOLLET : 0);
        ev.data.ptr = c;
        epoll_ctl(l.epfd, EPOLL_CTL_ADD, fd, &ev);
        timerArm(l, c); // the first read starts
    }
}

void loopRun()
{
    auto l = cast(Loop*) calloc(1, Loop.sizeof);
    l.lfd = listenSocket();
    l.epfd = epoll_create1(0);
    epoll_event ev;
    ev.events = EPOLLIN | (edge ? EPOLLET : 0);
    ev.data.ptr = null;
    epoll_ctl(l.epfd, EPOLL_CTL_ADD, l.lfd, &ev);
    epoll_event[maxEvents] events;
    loopClock(l);
    for (;;) {
        int n = epoll_wait(l.epfd, events.ptr, maxEvents, l.againHead ? 0 : l.deadlines.waitMs(l.nowMs));
        loopClock(l);
        foreach (ref e; events[0 .. n > 0 ? n : 0]) {
            if (e.data.ptr) connOnEvent(l, cast(Conn*) e.data.ptr);
            else loopAccept(l);
        }
        // --edge: one more read for each connection that was on the list before this pass
        for (Conn* last = l.againTail; l.againHead;) {
            Conn* c = againPop(l);
            bool wasLast = c == last;
            if (c.fd < 0) free(c); // closed while it waited
            else connOnEvent(l, c);
            if (wasLast) break;
        }
        while (auto c = cast(Conn*) l.deadlines.popExpired(l.nowMs)) connClose(l, c);
    }
}

/// --prefork: one single-threaded process per worker, pinned round robin over the allowed CPUs.
int prefork()
{
    cpu_set_t allowed;
    sched_getaffinity(0, allowed.sizeof, &allowed);
    auto parent = getpid();
    size_t cpu = size_t.max;
    foreach (i; 0 .. args.workers) {
        do cpu = (cpu + 1) % (allowed.sizeof * 8); while (!CPU_ISSET(cpu, &allowed));
        auto pid = fork();
        if (pid < 0) { fprintf(stderr, "d-epoll: fork failed\n"); return 1; }
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0); // the children end with the parent
            if (getppid() != parent) _exit(1);
            cpu_set_t one;
            CPU_SET(cpu, &one);
            sched_setaffinity(0, one.sizeof, &one);
            loopRun();
        }
    }
    int status;
    auto pid = wait(&status); // a worker died: end, and the others with us
    fprintf(stderr, "d-epoll: worker %d ended (status %d)\n", pid, status);
    return 1;
}

int main(string[] argv)
{
    bool forking;
    while (argv.length > 1 && argv[1].startsWith("--")) {
        if (argv[1] == "--edge") edge = true;
        else if (argv[1] == "--prefork") forking = true;
        else { fprintf(stderr, "%s: unknown option %s\n", argv[0].toStringz, argv[1].toStringz); return 2; }
        argv = argv[0] ~ argv[2 .. $];
    }
    parseArgs(argv, ["hello", "hello-timeout", "plaintext", "echo", "work", "counter", "file"]);
    if (forking) return prefork();
    return runWorkers(&loopRun);
}
