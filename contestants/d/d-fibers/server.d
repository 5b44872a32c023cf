/// d-fibers: one core.thread.Fiber per connection over an epoll loop per worker thread, each loop with
/// its own SO_REUSEPORT listener (the eventcore-fibers / Photon style). A fiber reads and writes as if
/// it blocked: when a call would block, it notes what it waits for and yields; its loop resumes it when
/// epoll (edge-triggered, registered once per socket) reports the socket ready, or when the
/// operation's deadline passes. A fiber whose connection ended is kept to serve the next one.
module server;

import core.stdc.errno : errno, EAGAIN;
import core.stdc.string : memmove;
import core.stdc.time : time;
import core.sys.linux.epoll;
import core.sys.posix.sys.types : off_t;
import core.sys.posix.sys.socket : send;
import core.sys.posix.unistd : close, read;
import core.thread : Fiber;
import std.algorithm : max;

import sb.args;
import sb.deadlines;
import sb.handlers;
import sb.http;

enum maxEvents = 256;

final class Conn {
    Loop loop;
    Fiber fiber;
    int fd;
    uint waitingFor;      /// the epoll events the fiber waits for; 0 while it runs
    bool timedOut;        /// the deadline of the operation under way passed
    Deadline deadline;    /// hello-timeout: the read or the write under way
    char[] input, output; /// HTTP scenarios: kept with the fiber for the connections it serves next

    this(Loop l)
    {
        loop = l;
        deadline.owner = cast(void*) this;
        fiber = new Fiber(&serve);
    }

    /// Yields until the loop reports `events` on the socket: false if the operation's deadline passed first.
    bool await(uint events)
    {
        waitingFor = events;
        Fiber.yield();
        waitingFor = 0;
        return !timedOut;
    }

    /// hello-timeout: a timer for the operation that starts now, cancelled when it completes.
    void timerArm()
    {
        timedOut = false;
        if (args.scenario == Scenario.helloTimeout) loop.deadlines.arm(&deadline, loop.nowMs, args.timeoutMs);
    }

    void timerCancel() { loop.deadlines.cancel(&deadline); }

    /// One read: the bytes read, 0 at the end of the stream, -1 on an error or when the deadline passed.
    ptrdiff_t receive(char[] buf)
    {
        timerArm();
        scope (exit) timerCancel();
        for (;;) {
            auto n = read(fd, buf.ptr, buf.length);
            if (n >= 0 || errno != EAGAIN) return n;
            if (!await(EPOLLIN | EPOLLRDHUP)) return -1;
        }
    }

    /// Writes all of `bytes` (with MSG_MORE when the file follows): false on an error or when the
    /// deadline passed.
    bool sendAll(const(char)[] bytes, bool more = false)
    {
        timerArm();
        scope (exit) timerCancel();
        while (bytes.length) {
            auto n = send(fd, bytes.ptr, bytes.length, more ? MSG_MORE : 0);
            if (n >= 0) bytes = bytes[n .. $];
            else if (errno != EAGAIN || !await(EPOLLOUT)) return false;
        }
        return true;
    }

    /// file: the 4,096 bytes from the page cache to the socket with sendfile(2).
    bool sendFile()
    {
        timerArm();
        scope (exit) timerCancel();
        off_t offset = 0;
        for (size_t left = fileBytes; left;) {
            auto n = sendfile(fd, fileFd, &offset, left);
            if (n > 0) left -= n;
            else if (n == 0 || errno != EAGAIN || !await(EPOLLOUT)) return false;
        }
        return true;
    }

    /// The fiber's body: one connection, from its first read to its close.
    void serve()
    {
        final switch (args.scenario) {
        case Scenario.hello, Scenario.helloTimeout:
            while (receive(loop.scratch[]) > 0 && sendAll(helloResponse)) {}
            break;
        case Scenario.echo:
            char[512] buf;
            for (ptrdiff_t n; (n = receive(buf[])) > 0 && sendAll(buf[0 .. n]);) {}
            break;
        case Scenario.plaintext, Scenario.work, Scenario.counter, Scenario.file:
            serveHttp();
            break;
        }
        timerCancel();
        loop.byFd[fd] = null;
        close(fd);
    }

    /// Answers the pipelined requests of each read in order, one write per full output buffer.
    void serveHttp()
    {
        if (!input) input = new char[bufBytes], output = new char[bufBytes];
        size_t inLen = 0;
        for (ptrdiff_t n; (n = receive(input[inLen .. $])) > 0;) {
            inLen += n;
            for (;;) {
                auto a = answer(args.scenario, loop.plain, input[0 .. inLen], output);
                memmove(input.ptr, input.ptr + a.used, inLen - a.used);
                inLen -= a.used;
                if (a.outBytes == 0) break;
                if (!sendAll(output[0 .. a.outBytes], a.file) || (a.file && !sendFile()) || a.close) return;
            }
        }
    }
}

final class Loop {
    int epfd, lfd;
    long nowMs;
    DeadlineList deadlines;
    PlaintextAnswers plain; /// plaintext: Date rebuilt once per second
    char[bufBytes] scratch; /// hello reads land here: nothing of them is kept
    Conn[] byFd;            /// the live connections by descriptor (what epoll reports)
    Conn[] idle;            /// connections whose fiber ended, to serve the next accepted sockets

    void clock()
    {
        nowMs = monoNowMs();
        if (args.scenario == Scenario.plaintext) plain.refresh(time(null));
    }

    void resume(Conn c)
    {
        c.fiber.call();
        if (c.fiber.state != Fiber.State.TERM) return;
        c.fiber.reset();
        idle ~= c;
    }

    void accept()
    {
        for (;;) {
            int fd = accept4(lfd, null, null, SOCK_NONBLOCK);
            if (fd < 0) return; // EAGAIN, or out of descriptors: the backlog waits
            noDelay(fd);
            Conn c;
            if (idle.length) {
                c = idle[$ - 1];
                idle = idle[0 .. $ - 1];
                idle.assumeSafeAppend();
            } else {
                c = new Conn(this);
            }
            c.fd = fd;
            if (fd >= byFd.length) byFd.length = max(fd + 1, 2 * byFd.length);
            byFd[fd] = c;
            epoll_event ev;
            ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
            ev.data.fd = fd;
            epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
            resume(c); // it runs until its first read would block
        }
    }

    void run()
    {
        lfd = listenSocket();
        epfd = epoll_create1(0);
        epoll_event ev;
        ev.events = EPOLLIN;
        ev.data.fd = lfd;
        epoll_ctl(epfd, EPOLL_CTL_ADD, lfd, &ev);
        epoll_event[maxEvents] events;
        clock();
        for (;;) {
            int n = epoll_wait(epfd, events.ptr, maxEvents, deadlines.waitMs(nowMs));
            clock();
            foreach (ref e; events[0 .. n > 0 ? n : 0]) {
                if (e.data.fd == lfd) { accept(); continue; }
                Conn c = byFd[e.data.fd];
                if (c && c.waitingFor && (e.events & (c.waitingFor | EPOLLERR | EPOLLHUP))) resume(c);
            }
            while (auto d = deadlines.popExpired(nowMs)) {
                auto c = cast(Conn) d;
                c.timedOut = true;
                resume(c);
            }
        }
    }
}

void workerRun() { (new Loop).run(); }

int main(string[] argv)
{
    parseArgs(argv, ["hello", "hello-timeout", "plaintext", "echo", "work", "counter", "file"]);
    return runWorkers(&workerRun);
}
