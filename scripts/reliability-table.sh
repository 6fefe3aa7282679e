#!/usr/bin/env bash
# Runs every adversarial case on every model and prints the Markdown table of
# docs/reliability.md (about 3 minutes on 2 cores; takes the shared heavy lock).
set -euo pipefail
cd "$(dirname "$0")/.."
flock /tmp/echolab-heavy.lock \
    cargo test --release --test adversarial -- --ignored --exact table --nocapture --test-threads 1 2>/dev/null \
    | grep '^|'
