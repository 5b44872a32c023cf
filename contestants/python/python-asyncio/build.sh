#!/bin/sh
# Makes .venv with the pinned requirements; a no-op when the stamp says it already matches.
set -eu
cd "$(dirname "$0")"
want="$(python3 -c 'import sys; print(sys.executable, sys.version.split()[0])') $(sha256sum requirements.txt | cut -d' ' -f1)"
if [ "$(cat .venv/stamp 2>/dev/null)" = "$want" ]; then exit 0; fi
rm -rf .venv
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check --require-hashes -r requirements.txt
echo "$want" > .venv/stamp
