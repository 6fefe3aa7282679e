#!/usr/bin/env bash
# The compare gate checked on this machine (docs/compare.md, "A/A and A/B"):
#   A/A across runs: PAIRS pairs of `run quick` of one build, each pair compared:
#        every figure named where no change exists is a false flag, and the gate must
#        pass (exit 0).
#   A/A in one run: TWINS runs of epoll and select each beside a twin of itself (the
#        same model under another label), interleaved, each model against its twin.
#   A/B: epoll against epoll spending WORK_US µs of CPU on every read, two models of
#        one interleaved run, RUNS times: CPU per request must be named in the right
#        direction, with its interval covering the change a longer reference run
#        measures, and the gate must fail (exit 1).
# Run it on a quiet machine: it measures the comparison's noise, not the machine's.
#
# usage: scripts/gate-campaign.sh OUT [PAIRS [TWINS [RUNS [WORK_US]]]]
set -euo pipefail

out=${1:?usage: scripts/gate-campaign.sh OUT [PAIRS [TWINS [RUNS [WORK_US]]]]}
pairs=${2:-5}
twins=${3:-5}
runs=${4:-3}
work_us=${5:-3}
echolab=${ECHOLAB:-target/release/echolab}
gate='cpu_per_request > +5%'
mkdir -p "$out"

# One step of quick (1000 connections, open loop at 10 000 requests/s, server and load
# pinned), epoll against itself with a fixed cost per read; REPS repetitions.
ab_scenario() {
    cat <<EOF
name = "ab"
description = "epoll and epoll with ${work_us} µs of CPU per read, interleaved, at quick's 1000-connection step."
models = ["epoll", "epoll-work"]
repetitions = $1
step_timeout = "30s"
[model.epoll-work]
base = "epoll"
work_us = ${work_us}
[server]
workers = 1
cpus = [0]
[load]
size = 64
duration = "1s"
rate = 10000
warmup = "0.2s"
connect_rate = 10000
cpus = [1]
[sweep]
connections = [1000]
EOF
}

# quick's steps, epoll and select each beside a twin of itself.
twins_scenario() {
    cat <<EOF
name = "aa-twins"
description = "An interleaved A/A: epoll and select, each beside a twin (the same model under another label), at quick's three steps."
models = ["epoll", "epoll-twin", "select", "select-twin"]
repetitions = 5
step_timeout = "30s"
[model.epoll-twin]
base = "epoll"
[model.select-twin]
base = "select"
[server]
workers = 1
cpus = [0]
[load]
size = 64
duration = "1s"
rate = 10000
warmup = "0.2s"
connect_timeout = "5s"
connect_rate = 10000
cpus = [1]
[sweep]
connections = [10, 100, 1000]
[failure]
min_established = 1.0
max_error_rate = 0.01
EOF
}

gate_exit() {
    local status=0
    "$echolab" compare "$@" --fail-if "$gate" >/dev/null 2>&1 || status=$?
    echo "$status"
}

echo "A/A: $pairs pairs of quick"
for i in $(seq "$pairs"); do
    for side in a b; do
        [ -f "$out/aa-$i-$side/results.csv" ] ||
            "$echolab" run quick --no-report --quiet --out "$out/aa-$i-$side" >/dev/null
    done
    "$echolab" compare "$out/aa-$i-a" "$out/aa-$i-b" --format csv >"$out/aa-$i.csv"
    echo "pair $i: gate exit $(gate_exit "$out/aa-$i-a" "$out/aa-$i-b")"
done

twins_scenario >"$out/twins.toml"
echo "A/A in one run: $twins runs of epoll and select beside their twins"
for i in $(seq "$twins"); do
    [ -f "$out/twins-$i/results.csv" ] ||
        "$echolab" run "$out/twins.toml" --no-report --quiet --out "$out/twins-$i" >/dev/null
    for m in epoll select; do
        "$echolab" compare "$out/twins-$i" --models "$m,$m-twin" --format csv >"$out/twins-$i-$m.csv"
        echo "run $i $m: gate exit $(gate_exit "$out/twins-$i" --models "$m,$m-twin")"
    done
done

ab_scenario 15 >"$out/ab-reference.toml"
ab_scenario 10 >"$out/ab.toml"
echo "A/B: epoll + ${work_us} µs per read, a reference of 15 repetitions, then $runs runs of 10"
[ -f "$out/ab-reference/results.csv" ] ||
    "$echolab" run "$out/ab-reference.toml" --no-report --quiet --out "$out/ab-reference" >/dev/null
"$echolab" compare "$out/ab-reference" --models epoll,epoll-work --format csv >"$out/ab-reference.csv"
for i in $(seq "$runs"); do
    [ -f "$out/ab-$i/results.csv" ] ||
        "$echolab" run "$out/ab.toml" --no-report --quiet --out "$out/ab-$i" >/dev/null
    "$echolab" compare "$out/ab-$i" --models epoll,epoll-work --format csv >"$out/ab-$i.csv"
    echo "run $i: gate exit $(gate_exit "$out/ab-$i" --models epoll,epoll-work)"
done

python3 - "$out" "$pairs" "$twins" "$runs" <<'EOF'
import csv, sys
out, pairs, twins, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rows = lambda name: list(csv.DictReader(open(f"{out}/{name}.csv")))
def false_flags(title, names):
    compared = flagged = 0
    by_figure = {}
    for label, name in names:
        for r in rows(name):
            if r["old_step"] == "geomean":
                continue
            compared += 1
            if r["significant"] == "true":
                flagged += 1
                by_figure.setdefault(r["figure"], []).append(
                    f"{label} {r['old_model']} {r['old_step']} {float(r['change_pct']):+.1f}%")
    print(f"{title}: {flagged} of {compared} figure-steps named a change "
          f"({100 * flagged / max(compared, 1):.1f} %)")
    for figure, where in sorted(by_figure.items()):
        print(f"  {figure}: {len(where)} step(s): " + "; ".join(where))
    worst = max((len(w) for w in by_figure.values()), default=0)
    print(f"  most steps any one figure was named in: {worst}")
false_flags("A/A across runs", [(f"pair {i}", f"aa-{i}") for i in range(1, pairs + 1)])
false_flags("A/A in one run", [(f"run {i}", f"twins-{i}-{m}")
                               for i in range(1, twins + 1) for m in ("epoll", "select")])
cpu = lambda name: next(r for r in rows(name) if r["figure"] == "cpu_per_request")
ref = cpu("ab-reference")
true = float(ref["change_pct"])
print(f"A/B reference (15 + 15 repetitions): cpu_per_request {true:+.1f}% "
      f"({float(ref['interval_lo_pct']):+.1f}% to {float(ref['interval_hi_pct']):+.1f}%), p = {float(ref['p']):.3g}")
for i in range(1, runs + 1):
    r = cpu(f"ab-{i}")
    lo, hi = float(r["interval_lo_pct"]), float(r["interval_hi_pct"])
    print(f"  run {i}: {float(r['old_value']):.2f} -> {float(r['new_value']):.2f} µs/req, "
          f"{float(r['change_pct']):+.1f}% ({lo:+.1f}% to {hi:+.1f}%), p = {float(r['p']):.3g}, "
          f"named: {r['significant']}, covers the reference: {lo <= true <= hi}")
EOF
