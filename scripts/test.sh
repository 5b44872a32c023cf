#!/usr/bin/env bash
# The project's test command: unit and integration tests of the harness.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
cargo test --locked --release -p serverbench 2>&1
