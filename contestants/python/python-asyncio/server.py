"""asyncio streams, one process per worker, each with its own SO_REUSEPORT listener.

usage: server.py [--uvloop] <scenario> <host> <port> <workers>
"""
import asyncio
import ctypes
import functools
import multiprocessing
import os
import signal
import socket
import sys
import time
import traceback

HELLO = b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello world!"
BAD_REQUEST = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"
NOT_FOUND = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
MAX_WORK_US = 1_000_000
COUNTERS = 65536
READ_BYTES = 65536
ECHO_READ_BYTES = 512
TIMEOUT_S = int(os.environ.get("SB_TIMEOUT_MS", "5000")) / 1000
PR_SET_PDEATHSIG = 1


async def hello(reader, writer):
    try:
        while await reader.read(READ_BYTES):
            writer.write(HELLO)
            await writer.drain()
    except ConnectionError:
        pass
    finally:
        writer.close()


async def hello_timeout(reader, writer):
    try:
        while True:
            async with asyncio.timeout(TIMEOUT_S):
                if not await reader.read(READ_BYTES):
                    break
            writer.write(HELLO)
            async with asyncio.timeout(TIMEOUT_S):
                await writer.drain()
    except TimeoutError:
        writer.transport.abort()  # close() would wait for a stuck peer to take the unsent bytes
    except ConnectionError:
        pass
    finally:
        writer.close()


async def echo(reader, writer):
    try:
        while data := await reader.read(ECHO_READ_BYTES):
            writer.write(data)
            await writer.drain()
    except ConnectionError:
        pass
    finally:
        writer.close()


def get_target(head):
    """The target of `GET <target> HTTP/1.1`; None if the head's request line is not that."""
    parts = head.split(b"\r\n", 1)[0].split(b" ")
    if len(parts) != 3 or parts[0] != b"GET" or parts[2] != b"HTTP/1.1":
        return None
    return parts[1]


def parse_get(head, prefix, limit):
    """N from `GET <prefix><N> HTTP/1.1`; None if the head is not that or N > limit."""
    target = get_target(head)
    if target is None or not target.startswith(prefix):
        return None
    digits = target[len(prefix):]
    if not digits.isdigit() or len(digits.lstrip(b"0")) > 7:
        return None
    n = int(digits)
    return n if n <= limit else None


async def serve_heads(reader, writer, respond):
    """Reads request heads one after another, so pipelined requests are answered in order, and
    awaits respond(writer, head) for each (head is b"" when too long); False from it closes."""
    try:
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError:
                break
            except asyncio.LimitOverrunError:
                head = b""
            if not await respond(writer, head):
                break
    except ConnectionError:
        pass
    finally:
        writer.close()


async def bad_request(writer):
    writer.write(BAD_REQUEST)
    await writer.drain()
    return False  # and close


async def serve_gets(reader, writer, prefix, limit, answer):
    """Answers each `GET <prefix><N>` with answer(N); anything else is a 400."""
    async def respond(writer, head):
        n = parse_get(head, prefix, limit)
        if n is None:
            return await bad_request(writer)
        body = answer(n)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        await writer.drain()
        return True

    await serve_heads(reader, writer, respond)


# A step of the spin longer than this means the process was not running (descheduled, preempted):
# that time was not spent on the request, so it is not counted.
WORK_GAP_NS = 50_000


def busy_wait(us):
    """Spins on the monotonic clock until `us` microseconds of RUNNING time have passed: CPU work
    that blocks this process's event loop. Each step's delta counts only when below WORK_GAP_NS."""
    goal = us * 1000
    total = 0
    last = time.monotonic_ns()
    while total < goal:
        now = time.monotonic_ns()
        d = now - last
        if d < WORK_GAP_NS:  # a longer step: the process was not running
            total += d
        last = now


def work_answer(n):
    busy_wait(n)
    return b"%d" % n


async def work(reader, writer):
    await serve_gets(reader, writer, b"/work/", MAX_WORK_US, work_answer)


def counter_answer(counters, k):
    # One lock for all keys: the Array's own (a multiprocessing RLock, a POSIX semaphore shared by
    # the forked workers); the counters themselves live in shared memory (get_obj: no second lock).
    with counters.get_lock():
        values = counters.get_obj()
        values[k] += 1
        return b"%d" % values[k]


async def counter(counters, reader, writer):
    await serve_gets(reader, writer, b"/counter/", COUNTERS - 1,
                     functools.partial(counter_answer, counters))


async def sendfile_native(writer, f):
    """asyncio's loop.sendfile: waits until the transport has sent what it buffered (the head), then
    sends the file with os.sendfile(2), reading of the socket paused meanwhile."""
    await asyncio.get_running_loop().sendfile(writer.transport, f)


async def sendfile_read(writer, f):
    """uvloop has no loop.sendfile (it keeps AbstractEventLoop's, which raises NotImplementedError):
    the file is read for this request, on the loop (4 KiB from the page cache), and written."""
    writer.write(f.read())
    await writer.drain()


async def file_answer(path, send_file, writer, head):
    """GET /file/4k: the file at `path`, opened for this request, behind its head; another target is
    a 404."""
    target = get_target(head)
    if target is None:
        return await bad_request(writer)
    if target != b"/file/4k":
        writer.write(NOT_FOUND)
        await writer.drain()
        return True
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % size)
        if writer.is_closing():  # the peer went away: loop.sendfile refuses a closing transport
            return False
        await send_file(writer, f)
    return True


async def file(path, send_file, reader, writer):
    await serve_heads(reader, writer, functools.partial(file_answer, path, send_file))


SCENARIOS = {"hello": hello, "hello-timeout": hello_timeout, "echo": echo, "work": work,
             "counter": counter, "file": file}


def worker(run, handler, host, port, parent, cpu):
    """Runs in a forked child, pinned to `cpu`, and never returns."""
    status = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        # Die with the parent even if it is killed without a chance to clean up.
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        os.sched_setaffinity(0, {cpu})  # the child has one thread, so this pins the whole process
        if os.getppid() == parent:
            run(serve_forever(handler, host, port))
            status = 0
    except Exception:
        traceback.print_exc()
    finally:
        sys.stderr.flush()
        os._exit(status)


async def serve_forever(handler, host, port):
    server = await asyncio.start_server(
        handler, host, port, reuse_port=True, backlog=socket.SOMAXCONN)
    await server.serve_forever()


def main():
    args = sys.argv[1:]
    run, send_file = asyncio.run, sendfile_native
    if args[:1] == ["--uvloop"]:
        import uvloop
        run, send_file, args = uvloop.run, sendfile_read, args[1:]
    if len(args) != 4:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        sys.exit(2)
    scenario, host, port, workers = args[0], args[1], int(args[2]), max(1, int(args[3]))
    if scenario not in SCENARIOS:
        print(f"unsupported scenario: {scenario}", file=sys.stderr)
        sys.exit(2)

    handler = SCENARIOS[scenario]
    if scenario == "counter":
        # Made before the fork, so every worker shares the memory and the lock.
        counters = multiprocessing.get_context("fork").Array("Q", COUNTERS)
        handler = functools.partial(counter, counters)
    elif scenario == "file":
        folder = os.environ.get("SB_FILES")
        if not folder:
            print("the file scenario needs SB_FILES (the folder of its files)", file=sys.stderr)
            sys.exit(2)
        handler = functools.partial(file, os.path.join(folder, "4k"), send_file)

    parent = os.getpid()
    cpus = sorted(os.sched_getaffinity(0))  # the server CPUs: worker i gets the i-th, in turn
    children = []
    for i in range(workers):
        pid = os.fork()
        if pid == 0:
            worker(run, handler, host, port, parent, cpus[i % len(cpus)])
        children.append(pid)

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        os.wait()  # returns only when a worker dies on its own: take the others down too
        sys.exit(1)
    finally:
        for pid in children:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for pid in children:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


if __name__ == "__main__":
    main()
