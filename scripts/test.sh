#!/usr/bin/env bash
# The project's test command: the harness's lints (clippy), unit and integration tests; every contestant
# built through the runner, checked for conformance (`serverbench check --quick`) and measured by the quick
# default benchmark end to end; a check of the result files it wrote. Every contestant must build, pass every
# check but those its manifest says it is not held to (`unsupported_checks`), and be measured with requests in
# every round and no errors; the only one allowed to be absent is one whose manifest says (`unsupported`)
# that this kind of machine cannot build it.
#
#   SB_TEST_OUT=DIR   where build stamps, logs, the check folder and the run folder go (default: results/test)
#   SB_TEST_QUICK=1   check and benchmark only the contestants below, not the whole catalog
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

# What SB_TEST_QUICK=1 checks and benchmarks: one of each way of holding connections (the contestants
# `check --quick` gives the full scale check).
required=(c-epoll c-threads go-net rust-tokio)
out="${SB_TEST_OUT:-$root/results/test}"
mkdir -p "$out"

# Each step prints its elapsed time when the next begins, or when the script fails during it.
step_name=""
step_started=$SECONDS
end_step() {
  [[ -n "$step_name" ]] && printf '== %s: %d s\n' "$step_name" $((SECONDS - step_started))
  step_name=""
}
step() {
  end_step
  step_name="$*"
  step_started=$SECONDS
  printf '\n== %s\n' "$*"
}
trap 'status=$?; if ((status)); then end_step; fi' EXIT
started=$SECONDS

step "system packages the tests use"
# chromium renders report.html; wrk, h2load (nghttp2-client), curl and ab (apache2-utils) are the real
# clients of the checks; nginx is the server that `serverbench load` measures as any server (it is also a
# contestant).
# wrk, h2load and hey are also the external load tools of `bench --tool`. ssh, sshd and ip (iproute2) run
# the test of load from client hosts, which serves ssh inside network namespaces it creates. PostgreSQL is
# the server the history's tests start (harness/tests/common/postgres.rs); Debian keeps its initdb off PATH.
# perf (linux-perf) samples the server's stacks in `bench --profile`'s round (harness/tests/profile.rs).
missing=()
for pair in chromium:chromium nginx:nginx wrk:wrk h2load:nghttp2-client curl:curl ab:apache2-utils ssh:openssh-client sshd:openssh-server ip:iproute2 perf:linux-perf; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
done
has_postgres() { compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null; }
has_postgres || missing+=(postgresql)
if ((${#missing[@]})); then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    echo "installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "missing ${missing[*]}: run 'apt-get install ${missing[*]}' as root" >&2
  fi
fi
still_missing=()
for tool in chromium nginx wrk h2load curl ab ssh sshd ip perf; do
  command -v "$tool" >/dev/null 2>&1 || still_missing+=("$tool")
done
has_postgres || still_missing+=(postgresql)
if ((${#still_missing[@]})); then
  if [[ "${CI:-}" == true ]]; then
    echo "FAILED: ${still_missing[*]} not on PATH; with CI=true every test must reach its subject" >&2
    exit 1
  fi
  echo "the tests that need ${still_missing[*]} will be counted as skipped" >&2
fi
# hey is no Debian package: the harness builds the version tools/hey pins with Go into target/tools/hey
# the first time `--tool hey` is asked (the runner's hey test does it here), and keeps it there.
if ! command -v go >/dev/null 2>&1; then
  if [[ "${CI:-}" == true ]]; then
    echo "FAILED: go not on PATH; it builds hey (tools/hey) and the Go contestants" >&2
    exit 1
  fi
  echo "go missing: the hey test will be counted as skipped" >&2
fi

step "clippy: every target of the harness, warnings as errors"
# Among the lints (harness/Cargo.toml): every unsafe block says why it is sound.
cargo clippy --locked --release --all-targets -p serverbench -- -D warnings

step "harness tests"
test_log="$out/cargo-test.log"
# A test that cannot reach its subject (a tool missing, no io_uring) writes "test<TAB>reason" here and is
# counted as skipped, not passed; with CI=true it fails instead.
export SB_TEST_SKIPS="$out/skipped-tests.tsv"
rm -f "$SB_TEST_SKIPS"
# Every test binary runs even after one fails, so that a red run lists all its failures at once.
cargo test --locked --release --no-fail-fast -p serverbench 2>&1 | tee "$test_log"
passed=$(awk '/^test result:/ {n += $4} END {print n + 0}' "$test_log")
failed=$(awk '/^test result:/ {n += $6} END {print n + 0}' "$test_log")
# cargo reports a skipped test as passed: take them out here; the conformance step may add skips below.
cargo_skipped=0
[[ -s "$SB_TEST_SKIPS" ]] && cargo_skipped=$(wc -l <"$SB_TEST_SKIPS")
passed=$((passed - cargo_skipped))

# The contestants of the steps below: all of them, or with SB_TEST_QUICK=1 those of `required`.
selection=()
[[ "${SB_TEST_QUICK:-}" == 1 ]] && selection=("${required[@]}")

step "build ${selection[*]:-every contestant}"
# --require-all: a contestant that is not built fails here, unless its manifest says this machine cannot
# build it; a Debian package that fails to install is a failed build.
./serverbench build --require-all -o "$out" "${selection[@]}"

step "check the conformance of ${selection[*]:-every contestant} (serverbench check --quick)"
# The check folder is read below (scripts/conformance.py), so that each failure is printed with its
# contestant and check. A check skipped because its client (wrk, h2load, curl) is missing is counted as
# skipped, and fails with CI=true; a check a contestant's manifest says it is not held to
# (`unsupported_checks`) is accepted for that contestant only; any other skip fails; the exit status still
# counts when it says more.
rm -rf "$out/checks"
check_status=0
./serverbench check --quick -o "$out" "${selection[@]}" || check_status=$?
check_dir="$(ls -1td "$out"/checks/*/ 2>/dev/null | head -n1)"
python3 scripts/conformance.py "${check_dir:-$out/checks}" "$check_status" contestants

step "benchmark ${selection[*]:-every contestant} (the quick default: hello, throughput, singleCore, 64 connections)"
# The bounded pools (c-thread-pool, c-process-pool: 16 by default) get a thread or process for each of the
# 64 connections here. With 16 the other 48 connections are starved by design (every round flagged
# ramp-incomplete and unfair), and a request of theirs that outlives the 5 s timeout is an error, which the
# result check below refuses; that starvation is what `bench -c 64,1000` of the pools is for, not this
# smoke test.
SB_POOL_THREADS=64 SB_POOL_PROCESSES=64 ./serverbench bench -o "$out" "${selection[@]}"
# Run folders are named by their UTC start time (the check folders are under checks/).
run_dir="$(ls -1td "$out"/[0-9]*/ | head -n1)"

step "check the result files in $run_dir"
python3 - "$run_dir" <<'PY'
import csv, json, pathlib, re, sys

run_dir = pathlib.Path(sys.argv[1])
unsupported = "its manifest says it cannot be built on"
problems = []
run = json.loads((run_dir / "run.json").read_text())
if run.get("schema") != 1:
    problems.append(f"run.json schema is {run.get('schema')!r}, not 1")
if run.get("interrupted"):
    problems.append("the run says it was interrupted")
for key in ("cpu_model", "cores", "kernel", "load_average", "tools", "command_line"):
    if key not in run["environment"]:
        problems.append(f"run.json environment lacks {key}")

measured = {}
for m in run["measurements"]:
    rounds = [r for r in m["rounds"] if not r["warmup"]]
    errors = sum(sum(r["load"]["errors"].values()) for r in rounds)
    requests = [r["load"]["requests"] for r in rounds]
    line = f'{m["contestant"]:<24} {m["scenario"]} c={m["connections"]}: {m["status"]}'
    if m["status"] == "measured":
        line += f", {len(rounds)} rounds, {sum(requests)} requests, {errors} errors"
    else:
        line += f': {(m.get("reason") or "").splitlines()[0] if m.get("reason") else ""}'
    print(line)
    measured[m["contestant"]] = (m, rounds, errors, requests)
absent = {}
for c in run["contestants"]:
    if c["status"] in ("failed", "skipped"):
        print(f'{c["name"]:<24} {c["status"]}: {(c.get("reason") or "").splitlines()[0]}')
        absent[c["name"]] = f'{c["status"]}: {c.get("reason")}'

# Every contestant of the run, but one whose manifest says this machine cannot build it.
required = [c["name"] for c in run["contestants"] if not (c["status"] == "skipped" and (c.get("reason") or "").startswith(unsupported))]
for name in required:
    if name not in measured:
        problems.append(f"{name} was not measured: {absent.get(name, 'no measurement in run.json')}")
        continue
    m, rounds, errors, requests = measured[name]
    if m["status"] != "measured":
        problems.append(f"{name}: {m['status']}: {m.get('reason')}")
    elif not rounds or min(requests) == 0:
        problems.append(f"{name}: a measured round without requests ({requests})")
    elif errors:
        problems.append(f"{name}: {errors} errors")
    elif any(not r["load"]["latency"] for r in rounds):
        problems.append(f"{name}: a round without its latency histogram")

if not (run_dir / "report.html").is_file():
    problems.append("report.html was not written")
# Table cells are padded to the widest entry: compare with runs of spaces folded.
summary = re.sub(r" +", " ", (run_dir / "summary.md").read_text())
for needle in ("| Name", "req/s", "server CPU %", "q0.9999", "| Language | Framework | Category |", "Res[B]"):
    if needle not in summary:
        problems.append(f"summary.md lacks {needle!r}")
rows = list(csv.DictReader((run_dir / "summary.csv").open()))
if len(rows) != len(run["measurements"]):
    problems.append(f"summary.csv has {len(rows)} rows for {len(run['measurements'])} measurements")
# Where a request's cost goes, for every measured row: the server's user and kernel time and switches (from
# /proc), and its system calls (a leading call by name: counted by the tracepoints, or by /proc/<pid>/io).
for row in rows:
    if row["status"] != "measured":
        continue
    for column in ("server_user_us_per_request", "server_system_us_per_request", "server_voluntary_switches_per_request", "server_syscall_1"):
        if not row[column]:
            problems.append(f'{row["contestant"]} {row["scenario"]}: summary.csv has no {column}')

if problems:
    print("\nFAILED:\n- " + "\n- ".join(problems))
    sys.exit(1)
print(f"\nresult files OK: {run_dir}")
PY

end_step
echo "== done in $((SECONDS - started)) s"
skipped=0
skip_reasons=""
if [[ -s "$SB_TEST_SKIPS" ]]; then
  skipped=$(wc -l <"$SB_TEST_SKIPS")
  skip_reasons=": $(cut -f2 "$SB_TEST_SKIPS" | sort | uniq -c | awk '{n = $1; $1 = ""; sub(/^ /, ""); printf "%s%s (%d)", (NR > 1 ? ", " : ""), $0, n}')"
fi
# The conformance step and the result-file check above count as two more passing tests.
echo "harness: $((passed + 2)) passed, $failed failed, $skipped skipped$skip_reasons"
