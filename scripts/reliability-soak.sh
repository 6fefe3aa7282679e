#!/usr/bin/env bash
# The long soak of docs/reliability.md: MINUTES of connection churn (connect, one
# request, close; rounds of 2 000 connections over 8 source addresses) against one
# server; its fds must come back to their baseline and its RSS must not keep growing.
# Usage: scripts/reliability-soak.sh MODEL [MINUTES]   (default 10; not run in CI)
set -euo pipefail
model=${1:?usage: $0 MODEL [MINUTES]}
minutes=${2:-10}
cd "$(dirname "$0")/.."
cargo build --release -q
exe=target/release/echolab
work=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
"$exe" serve --model "$model" --addr 127.0.0.1:0 >"$work/listening" 2>"$work/stderr" &
server=$!
until addr=$(awk '/listening on/ {print $3; exit}' "$work/listening") && [ -n "$addr" ]; do sleep 0.1; done
sample() { echo "$(ls /proc/$server/fd | wc -l) $(awk '/VmRSS/ {print $2}' /proc/$server/status)"; }
churn() { "$exe" load --target "$addr" --connections 2000 --requests 1 --size 64 --connect-rate 4000 \
    --source-addrs 127.0.0.2-127.0.0.9 --quiet --out "$work/load" >/dev/null; }
churn   # warm-up round: buffers allocated once are in the baseline
sleep 2
read -r fds0 rss0 <<<"$(sample)"
echo "baseline: $fds0 fds, $rss0 KiB RSS"
end=$((SECONDS + minutes * 60)); rounds=0; peak=$rss0
while [ $SECONDS -lt $end ]; do
    churn; rounds=$((rounds + 1))
    read -r _ rss <<<"$(sample)"; [ "$rss" -gt "$peak" ] && peak=$rss
done
sleep 2
read -r fds1 rss1 <<<"$(sample)"
echo "after $rounds rounds ($((rounds * 2000)) connections): $fds1 fds, $rss1 KiB RSS (peak $peak KiB)"
[ "$fds1" -eq "$fds0" ] || { echo "FAIL: fds $fds0 -> $fds1"; exit 1; }
[ "$rss1" -le $((rss0 + rss0 / 2 + 4096)) ] || { echo "FAIL: RSS $rss0 -> $rss1 KiB"; exit 1; }
echo "ok: fds back to baseline, RSS within bound"
