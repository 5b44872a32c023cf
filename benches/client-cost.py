#!/usr/bin/env python3
"""What each load generator costs per response, and what the server spends under it, side by side.

Servers, each pinned to one CPU with one worker:
  reference  harness/control/control.c (the run's control): one thread, one level-triggered epoll loop, no parsing
  nginx      Debian's nginx, 1 worker, `return 200 "Hello world!"` (installed when missing)
Clients, each pinned to another CPU with one thread: wrk, h2load (HTTP/1.1), and `serverbench load`
with each I/O backend (io_uring, epoll), sleeping in its waits and busy-polling, and io_uring with an
SQPOLL thread on the client's CPU (sleeping). `--baseline NAME=PATH` adds the io_uring clients of another
build of serverbench (an earlier commit, say), so that a change is measured side by side with what it
changed.

Every client runs against every server at every connection count, in turn, for --runs rounds (the
order of the clients rotates from round to round); the table gives medians. Per run:
  req/s              responses / the client's own measured time
  server busy %      the server's CPU (utime + stime from /proc) over the client process's whole life,
                     divided by that same wall time
  server us/req      that CPU divided by the responses the client reported
  client us/resp     the client's CPU (user + system, from wait4: every thread of the process, the
                     SQPOLL kernel thread included) divided by its responses; the polls that found
                     nothing (client_poll_s: a busy-polling client's, an SQPOLL thread's) are left out
  client cs          the client's voluntary context switches per 1,000 responses (each one is a sleep the
                     server's CPU pays to wake up on loopback)
Then the client's peak RSS with 20,000 connections to the reference server (--rss-connections), for
wrk and each serverbench backend.

    python3 benches/client-cost.py [--runs 5] [--duration 3] [--connections 64,1024] [--servers reference,nginx]
                                   [--baseline NAME=PATH ...]
"""
import argparse, json, os, re, resource, shutil, socket, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HZ = os.sysconf("SC_CLK_TCK")

NGINX_CONF = """worker_processes 1;
worker_cpu_affinity {mask};
daemon off;
pid {dir}/nginx.pid;
error_log {dir}/error.log;
events {{ worker_connections 30000; }}
http {{
    access_log off;
    keepalive_requests 100000000;
    client_body_temp_path {dir}; proxy_temp_path {dir}; fastcgi_temp_path {dir};
    uwsgi_temp_path {dir}; scgi_temp_path {dir};
    server {{
        listen 127.0.0.1:{port} backlog=4096;
        location / {{ default_type text/plain; return 200 "Hello world!"; }}
    }}
}}
"""


def sh(*args, **kw):
    return subprocess.run(args, check=True, **kw)


def install(command, package):
    if not shutil.which(command):
        print(f"installing {package} from Debian's packages", flush=True)
        sh("apt-get", "update", "-qq")
        sh("apt-get", "install", "-y", "-qq", package)


def tree_cpu_ticks(pid):
    """utime + stime of a process and its children that are alive (nginx: master and worker)."""
    total = 0
    for p in [pid] + children(pid):
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except FileNotFoundError:
            pass
    return total


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except FileNotFoundError:
        return []


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port):
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"no server listening on port {port}")


def raise_nofile():
    """Raises the open-file limit as far as allowed; returns the soft limit reached."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 65536
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, want), max(hard, want)))
    except (ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def start_server(kind, port, cpu, workdir):
    if kind == "reference":
        binary = os.path.join(workdir, "control")
        if not os.path.exists(binary):
            sh("cc", "-O2", "-o", binary, os.path.join(ROOT, "harness", "control", "control.c"))
        return subprocess.Popen(["taskset", "-c", str(cpu), binary, str(port)])
    conf_dir = tempfile.mkdtemp(dir=workdir)
    conf = os.path.join(conf_dir, "nginx.conf")
    with open(conf, "w") as f:
        f.write(NGINX_CONF.format(mask=format(1 << cpu, "b"), dir=conf_dir, port=port))
    return subprocess.Popen(["taskset", "-c", str(cpu), "nginx", "-c", conf, "-p", conf_dir])


def run_client(cmd, server_pid):
    t0, c0 = time.monotonic(), tree_cpu_ticks(server_pid)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    out, err = proc.stdout.read(), proc.stderr.read()
    wall, server_cpu = time.monotonic() - t0, (tree_cpu_ticks(server_pid) - c0) / HZ
    if status != 0:
        sys.exit(f"{' '.join(cmd)} failed: {err}{out}")
    return out, wall, server_cpu, usage


def parse(name, out):
    """requests, req/s, errors and busy-polling seconds from a client's output."""
    if name == "wrk":
        reqs = int(re.search(r"(\d+) requests in", out).group(1))
        rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
        errors = sum(int(x) for x in re.findall(r"(?:connect|read|write|timeout) (\d+)", out))
        m = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
        return reqs, rps, errors + (int(m.group(1)) if m else 0), 0.0
    if name == "h2load":
        m = re.search(r"requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed, (\d+) errored", out)
        rps = float(re.search(r"finished in [\d.]+\w+, ([\d.]+) req/s", out).group(1))
        return int(m.group(1)), rps, int(m.group(2)) + int(m.group(3)), 0.0
    j = json.loads(out)
    return j["requests"], j["requests_per_s"], j["errors_total"], j.get("client_poll_s", 0.0)


def clients(sb, cpu, connections, duration, url, exact, baselines=()):
    """Every client's command line; `baselines` are (name, path) of other serverbench builds."""
    def sbl(binary):
        # The reference server's answers are held to every byte of hello's; nginx adds headers (Server, Date,
        # Content-Type): a plain GET holds it to a 2xx status (builds before `load` took a plain GET without
        # --scenario need --no-expect for the same).
        return [binary, "load", "-t1", f"-c{connections}", f"-d{duration}s", "--cpus", str(cpu), "--json", url] + (["--scenario", "hello"] if exact else ["--no-expect"])
    pin = ["taskset", "-c", str(cpu)]
    table = {
        "wrk": pin + ["wrk", "-t1", f"-c{connections}", f"-d{duration}s", url],
        "h2load": pin + ["h2load", "--h1", "-t1", f"-c{connections}", f"-D{duration}", url],
        "serverbench io_uring sleep": sbl(sb) + ["--io", "io_uring", "--poll", "sleep"],
        "serverbench io_uring busy": sbl(sb) + ["--io", "io_uring", "--poll", "busy"],
        "serverbench io_uring-sqpoll sleep": sbl(sb) + ["--io", "io_uring-sqpoll", "--poll", "sleep"],
        "serverbench epoll sleep": sbl(sb) + ["--io", "epoll", "--poll", "sleep"],
        "serverbench epoll busy": sbl(sb) + ["--io", "epoll", "--poll", "busy"],
    }
    for name, path in baselines:
        for poll in ["sleep", "busy"]:
            table[f"serverbench@{name} io_uring {poll}"] = sbl(path) + ["--io", "io_uring", "--poll", poll]
    return table


def median(rows, key):
    return statistics.median(r[key] for r in rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--duration", type=int, default=3)
    ap.add_argument("--connections", default="64,1024")
    ap.add_argument("--servers", default="reference,nginx")
    ap.add_argument("--clients", default="", help="only the clients whose name contains one of these, comma-separated")
    ap.add_argument("--rss-connections", type=int, default=20000, help="0: skip the memory runs")
    ap.add_argument("--rss-duration", type=int, default=10, help="seconds of each memory run (connecting takes a while)")
    ap.add_argument("--server-cpu", type=int, default=1)
    ap.add_argument("--client-cpu", type=int, default=0)
    ap.add_argument("--baseline", action="append", default=[], metavar="NAME=PATH",
                    help="another serverbench binary whose io_uring clients run alongside, named NAME")
    a = ap.parse_args()
    baselines = [tuple(b.split("=", 1)) for b in a.baseline]
    for name, path in baselines:
        if not os.access(path, os.X_OK):
            sys.exit(f"--baseline {name}={path}: not an executable")

    install("wrk", "wrk")
    install("h2load", "nghttp2-client")
    servers = a.servers.split(",")
    if "nginx" in servers:
        install("nginx", "nginx-light")
    nofile = raise_nofile()
    # Each side needs a descriptor per connection and a few more: where the hard limit is lower than
    # asked for (20,000 on some VMs, and root may not raise it), the memory runs use what fits.
    rss_connections = min(a.rss_connections, nofile - 100)
    if rss_connections < a.rss_connections:
        print(f"open files are limited to {nofile} here: the memory runs use {rss_connections:,} connections", flush=True)
    sh("cargo", "build", "--release", "--quiet", "--locked", "-p", "serverbench", cwd=ROOT)
    sb = os.path.join(ROOT, "target", "release", "serverbench")
    workdir = tempfile.mkdtemp(prefix="client-cost-")
    wanted = [w for w in a.clients.split(",") if w]

    results = {}  # (server, connections, client) -> [row]
    for kind in servers:
        port = free_port()
        server = start_server(kind, port, a.server_cpu, workdir)
        try:
            wait_listening(port)
            url = f"http://127.0.0.1:{port}/"
            for conns in [int(c) for c in a.connections.split(",")]:
                table = clients(sb, a.client_cpu, conns, a.duration, url, kind == "reference", baselines)
                names = [n for n in table if not wanted or any(w in n for w in wanted)]
                for run in range(a.runs):
                    order = names[run % len(names):] + names[:run % len(names)]
                    for name in order:
                        out, wall, server_cpu, usage = run_client(table[name], server.pid)
                        reqs, rps, errors, poll_s = parse(name.split()[0].split("@")[0], out)
                        if errors or not reqs:
                            sys.exit(f"{name} against {kind}: {reqs} responses, {errors} errors: the figures would not be of served requests\n{out}")
                        client_cpu = usage.ru_utime + usage.ru_stime - poll_s
                        row = {
                            "rps": rps,
                            "busy": 100 * server_cpu / wall,
                            "server_us": 1e6 * server_cpu / reqs,
                            "client_us": 1e6 * client_cpu / reqs,
                            "cs": 1000 * usage.ru_nvcsw / reqs,
                            "errors": errors,
                        }
                        results.setdefault((kind, conns, name), []).append(row)
                        print(f"{kind:9} c={conns:<5} run {run + 1} {name:34} {rps:9.0f} req/s  server {row['busy']:5.1f}% "
                              f"{row['server_us']:5.2f} us/req  client {row['client_us']:5.2f} us/resp "
                              f"{row['cs']:.1f} cs/1k resp  errors {errors}", flush=True)
        finally:
            server.terminate()
            server.wait()

    print()
    print("| server | connections | client | req/s | server busy % | server us/req | client us/resp | client / wrk | server us/req / under wrk | client cs per 1k resp |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for (kind, conns, name), rows in results.items():
        wrk = results.get((kind, conns, "wrk"))
        ratio = f"{median(rows, 'client_us') / median(wrk, 'client_us'):.2f}x" if wrk else ""
        server_ratio = f"{median(rows, 'server_us') / median(wrk, 'server_us'):.3f}x" if wrk else ""
        print(f"| {kind} | {conns} | {name} | {median(rows, 'rps'):,.0f} | {median(rows, 'busy'):.1f} | "
              f"{median(rows, 'server_us'):.2f} | {median(rows, 'client_us'):.2f} | {ratio} | {server_ratio} | "
              f"{median(rows, 'cs'):.1f} |")

    if rss_connections > 0:
        port = free_port()
        server = start_server("reference", port, a.server_cpu, workdir)
        try:
            wait_listening(port)
            url = f"http://127.0.0.1:{port}/"
            table = clients(sb, a.client_cpu, rss_connections, a.rss_duration, url, True)
            print()
            print(f"| client, {rss_connections:,} connections | peak RSS MiB | / wrk |")
            print("|---|---:|---:|")
            rss = {}
            for name in ["wrk", "serverbench io_uring sleep", "serverbench epoll sleep"]:
                out, _, _, usage = run_client(table[name], server.pid)
                reqs, _, errors, _ = parse(name.split()[0], out)
                if errors or not reqs:
                    sys.exit(f"{name} with {rss_connections} connections: {reqs} responses, {errors} errors\n{out}")
                rss[name] = usage.ru_maxrss / 1024
                print(f"| {name} | {rss[name]:.1f} | {rss[name] / rss['wrk']:.2f}x |", flush=True)
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
