#!/bin/sh
# Installs the locked dependencies into contestants/javascript/node_modules.
# Quick when nothing changed: npm runs only if package-lock.json differs from the last install.
set -e
cd "$(dirname "$0")"
if cmp -s package-lock.json node_modules/.installed-lock; then
    exit 0
fi
npm ci --no-audit --no-fund
cp package-lock.json node_modules/.installed-lock
