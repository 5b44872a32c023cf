#!/usr/bin/env python3
"""wrk against `serverbench load`, side by side, on one minimal epoll hello server.

The server (benches/hello-epoll.c, one thread) is pinned to one CPU and each client to another, with
the same connections and duration, alternating A B A B. For each run it prints req/s, the server's CPU
utilisation (utime + stime from /proc, over the client process's whole life, divided by that same
wall time), the client's CPU microseconds per response
(user + system of the client process, from wait4), and the ratios to wrk. serverbench runs with its
default I/O (io_uring where the kernel has it) and, unless --no-epoll, once more with --io epoll.

    python3 benches/wrk-vs-serverbench.py [--pairs 3] [--duration 5] [--connections 64] [--no-epoll]
"""
import argparse, json, os, re, shutil, socket, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sh(*args, **kw):
    return subprocess.run(args, check=True, **kw)


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_client(cmd, server_pid):
    hz = os.sysconf("SC_CLK_TCK")
    t0, c0 = time.monotonic(), cpu_ticks(server_pid)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    out = proc.stdout.read()
    wall, server_cpu = time.monotonic() - t0, (cpu_ticks(server_pid) - c0) / hz
    if status != 0:
        sys.exit(f"{cmd[0]} failed: {proc.stderr.read()}")
    return out, wall, server_cpu, usage.ru_utime + usage.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--connections", type=int, default=64)
    ap.add_argument("--server-cpu", type=int, default=1)
    ap.add_argument("--client-cpu", type=int, default=0)
    ap.add_argument("--no-epoll", action="store_true", help="skip the serverbench --io epoll runs")
    a = ap.parse_args()

    if not shutil.which("wrk"):
        print("installing wrk from Debian's packages", flush=True)
        sh("apt-get", "update", "-qq")
        sh("apt-get", "install", "-y", "-qq", "wrk")
    build = os.path.join(ROOT, "target", "bench")
    os.makedirs(build, exist_ok=True)
    server_bin = os.path.join(build, "hello-epoll")
    sh("cc", "-O2", "-o", server_bin, os.path.join(ROOT, "benches", "hello-epoll.c"))
    sh("cargo", "build", "--release", "--quiet", "--locked", "-p", "serverbench", cwd=ROOT)
    sb = os.path.join(ROOT, "target", "release", "serverbench")

    port = free_port()
    server = subprocess.Popen(["taskset", "-c", str(a.server_cpu), server_bin, str(port)])
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.05)
        url = f"http://127.0.0.1:{port}/"
        clients = {
            "wrk": ["taskset", "-c", str(a.client_cpu), "wrk", "-t1", f"-c{a.connections}", f"-d{a.duration}s", url],
            "serverbench": [sb, "load", "-t1", f"-c{a.connections}", f"-d{a.duration}s", "--cpus", str(a.client_cpu), "--json", url],
        }
        if not a.no_epoll:
            clients["serverbench-epoll"] = clients["serverbench"] + ["--io", "epoll"]
        io = {}
        rows = []
        for pair in range(a.pairs):
            for name, cmd in clients.items():
                out, wall, server_cpu, client_cpu = run_client(cmd, server.pid)
                if name == "wrk":
                    reqs = int(re.search(r"(\d+) requests in ([\d.]+)(\w+)", out).group(1))
                    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
                    errors = sum(int(x) for x in re.findall(r"(?:connect|read|write|timeout) (\d+)", out))
                else:
                    j = json.loads(out)
                    reqs, rps, errors = j["requests"], j["requests_per_s"], j["errors_total"]
                    io[name] = j["io"]
                # The server's CPU was sampled over the client's whole life (start-up, connects and
                # teardown too, which run past -d): divide by that same interval, not the nominal -d.
                util = 100 * server_cpu / wall
                rows.append((pair + 1, name, rps, util, 1e6 * client_cpu / reqs, errors))
                print(f"pair {pair + 1} {name:17} {rps:12.0f} req/s  server CPU {util:5.1f}%  "
                      f"client {1e6 * client_cpu / reqs:6.2f} us/response  errors {errors}", flush=True)
    finally:
        server.terminate()
        server.wait()

    def mean(name, i):
        v = [r[i] for r in rows if r[1] == name]
        return sum(v) / len(v)

    print()
    print("| client | req/s | server CPU % | client CPU us/response |")
    print("|---|---:|---:|---:|")
    for name in clients:
        label = f"{name} ({io[name]})" if name in io else name
        print(f"| {label} | {mean(name, 2):,.0f} | {mean(name, 3):.1f} | {mean(name, 4):.2f} |")
    for name in clients:
        if name != "wrk":
            print(f"| {name} / wrk | {mean(name, 2) / mean('wrk', 2):.2f}x | "
                  f"{mean(name, 3) / mean('wrk', 3):.2f}x | {mean(name, 4) / mean('wrk', 4):.2f}x |")


if __name__ == "__main__":
    main()
