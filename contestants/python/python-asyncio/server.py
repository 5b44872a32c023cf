"""asyncio streams, one process per worker, each with its own SO_REUSEPORT listener.

usage: server.py [--uvloop] <scenario> <host> <port> <workers>
"""
import asyncio
import ctypes
import os
import signal
import socket
import sys
import traceback

HELLO = b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello world!"
READ_BYTES = 65536
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
        while data := await reader.read(READ_BYTES):
            writer.write(data)
            await writer.drain()
    except ConnectionError:
        pass
    finally:
        writer.close()


SCENARIOS = {"hello": hello, "hello-timeout": hello_timeout, "echo": echo}


def worker(run, handler, host, port, parent):
    """Runs in a forked child and never returns."""
    status = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        # Die with the parent even if it is killed without a chance to clean up.
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
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
    run = asyncio.run
    if args[:1] == ["--uvloop"]:
        import uvloop
        run, args = uvloop.run, args[1:]
    if len(args) != 4:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        sys.exit(2)
    scenario, host, port, workers = args[0], args[1], int(args[2]), max(1, int(args[3]))
    if scenario not in SCENARIOS:
        print(f"unsupported scenario: {scenario}", file=sys.stderr)
        sys.exit(2)

    parent = os.getpid()
    children = []
    for _ in range(workers):
        pid = os.fork()
        if pid == 0:
            worker(run, SCENARIOS[scenario], host, port, parent)
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
