"""The conformance step of scripts/test.sh: reads the check.json that `serverbench check` wrote and fails on
every failed check and on every skip but three kinds: a contestant whose manifest says this machine cannot
build it (`unsupported`), a check its manifest says it is not held to (`unsupported_checks`, looked up in
the manifests themselves, so a skip the harness gives without that declaration still fails), and, outside
CI, a client check whose tool is missing (appended to $SB_TEST_SKIPS).

    python3 scripts/conformance.py CHECK_DIR EXIT_STATUS CATALOG_ROOT
"""
import json
import os
import pathlib
import sys
import tomllib

# How the harness begins the reason of such skips (catalog::UNSUPPORTED_PREFIX, catalog::NOT_HELD_PREFIX).
UNSUPPORTED = "its manifest says it cannot be built on"
NOT_HELD = "its manifest says it is not held to this check"
# Folders the catalog never searches for manifests (catalog::SKIPPED_DIRS).
SKIPPED_DIRS = {"build", "target", "node_modules", ".venv", "__pycache__", "_build"}


def declared_checks(root):
    """Every contestant's `unsupported_checks` by name, a variant's own table replacing its manifest's."""
    out = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS]
        if "contestant.toml" not in files:
            continue
        try:
            m = tomllib.loads((pathlib.Path(folder) / "contestant.toml").read_text())
        except (OSError, tomllib.TOMLDecodeError):
            continue  # an invalid manifest declares nothing; `serverbench build` reports it
        name = m.get("name")
        if not isinstance(name, str):
            continue
        out[name] = m.get("unsupported_checks", {})
        for variant, overrides in m.get("variants", {}).items():
            out[f"{name}-{variant}"] = overrides.get("unsupported_checks", out[name])
    return out


def main(check_dir, status, catalog_root):
    ci = os.environ.get("CI") == "true"
    skips = []
    if not (check_dir / "check.json").is_file():
        sys.exit(f"FAILED: conformance: serverbench check (exit status {status}) wrote no check.json under {check_dir}")
    declared = declared_checks(catalog_root)
    problems, checked = [], 0
    for c in json.loads((check_dir / "check.json").read_text()):
        for r in c["results"]:
            what = f'{r["contestant"]} {r["scenario"] + " " if r["scenario"] else ""}{r["check"]}'
            reason = " / ".join(r["reason"].splitlines())
            if r["status"] == "fail":
                problems.append(f"{what}: {reason}")
            elif r["status"] != "skip" or (r["check"] == "build" and reason.startswith(UNSUPPORTED)):
                continue
            elif reason.startswith(NOT_HELD):
                if r["check"] not in declared.get(r["contestant"], {}):
                    problems.append(f"{what} was skipped as not held to, but no manifest under {catalog_root} declares it: {reason}")
            elif r["check"].startswith("client-") and "is not installed" in reason and not ci:
                skips.append(f"conformance {what}\t{r['check'].removeprefix('client-')} missing")
            else:
                problems.append(f"{what} was skipped: {reason}")
        checked += 1
    if status and not problems:
        problems.append(f"serverbench check exited with status {status} although check.json records no failure (interrupted?)")
    if problems:
        print(f"\nFAILED: conformance ({check_dir / 'check.json'}):\n- " + "\n- ".join(problems))
        sys.exit(1)
    if skips:
        with open(os.environ["SB_TEST_SKIPS"], "a") as log:
            log.writelines(line + "\n" for line in skips)
        print(f"\n{len(skips)} checks skipped for a missing client; every other check of {checked} contestants passed: {check_dir}")
    else:
        print(f"\nevery check of {checked} contestants passed (but those their manifests say they are not held to): {check_dir}")


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]), int(sys.argv[2]), pathlib.Path(sys.argv[3]))
