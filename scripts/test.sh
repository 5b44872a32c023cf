#!/usr/bin/env bash
# The project's test command: the harness's unit and integration tests; every contestant built through the
# runner; the quick default benchmark of every contestant end to end; a check of the result files it wrote.
#
#   SB_TEST_OUT=DIR   where build stamps, logs and the run folder go (default: results/test)
#   SB_TEST_QUICK=1   benchmark only the contestants that must pass (below), not the whole catalog
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

# Measured cleanly (requests in every round, no errors) or the test fails; the rest are reported.
required=(c-epoll c-threads go-net rust-tokio)
out="${SB_TEST_OUT:-$root/results/test}"
mkdir -p "$out"

step() { printf '\n== %s\n' "$*"; }
started=$SECONDS

step "system packages the tests use"
# chromium renders report.html; wrk, h2load (nghttp2-client) and curl are the real clients of the checks.
missing=()
for pair in chromium:chromium wrk:wrk h2load:nghttp2-client curl:curl; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
done
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
for tool in chromium wrk h2load curl; do
  command -v "$tool" >/dev/null 2>&1 || still_missing+=("$tool")
done
if ((${#still_missing[@]})); then
  if [[ "${CI:-}" == true ]]; then
    echo "FAILED: ${still_missing[*]} not on PATH; with CI=true every test must reach its subject" >&2
    exit 1
  fi
  echo "the tests that need ${still_missing[*]} will be counted as skipped" >&2
fi

step "harness tests"
test_log="$out/cargo-test.log"
# A test that cannot reach its subject (a tool missing, no io_uring) writes "test<TAB>reason" here and is
# counted as skipped, not passed; with CI=true it fails instead.
export SB_TEST_SKIPS="$out/skipped-tests.tsv"
rm -f "$SB_TEST_SKIPS"
cargo test --locked --release -p serverbench 2>&1 | tee "$test_log"
passed=$(awk '/^test result:/ {n += $4} END {print n + 0}' "$test_log")
failed=$(awk '/^test result:/ {n += $6} END {print n + 0}' "$test_log")
skipped=0
skip_reasons=""
if [[ -s "$SB_TEST_SKIPS" ]]; then
  skipped=$(wc -l <"$SB_TEST_SKIPS")
  passed=$((passed - skipped))
  skip_reasons=": $(cut -f2 "$SB_TEST_SKIPS" | sort | uniq -c | awk '{n = $1; $1 = ""; sub(/^ /, ""); printf "%s%s (%d)", (NR > 1 ? ", " : ""), $0, n}')"
fi

step "build every contestant"
./serverbench build -o "$out"

if [[ "${SB_TEST_QUICK:-}" == 1 ]]; then
  step "benchmark ${required[*]}"
  ./serverbench bench -o "$out" "${required[@]}"
else
  step "benchmark every contestant (the quick default: hello, throughput, singleCore, 64 connections)"
  ./serverbench bench -o "$out"
fi
run_dir="$(ls -1td "$out"/*/ | head -n1)"

step "check the result files in $run_dir"
python3 - "$run_dir" "${required[@]}" <<'PY'
import csv, json, pathlib, re, sys

run_dir, required = pathlib.Path(sys.argv[1]), sys.argv[2:]
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
for c in run["contestants"]:
    if c["status"] in ("failed", "skipped"):
        print(f'{c["name"]:<24} {c["status"]}: {(c.get("reason") or "").splitlines()[0]}')

for name in required:
    if name not in measured:
        problems.append(f"{name} was not measured")
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

if problems:
    print("\nFAILED:\n- " + "\n- ".join(problems))
    sys.exit(1)
print(f"\nresult files OK: {run_dir}")
PY

step "done in $((SECONDS - started)) s"
# The result-file check above counts as one more passing test.
echo "harness: $((passed + 1)) passed, $failed failed, $skipped skipped$skip_reasons"
