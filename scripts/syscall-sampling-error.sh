#!/usr/bin/env bash
# How far the sampled system-call counts (ECHOLAB_COUNT_SYSCALLS=sampled: windows of 10 ms
# every second, scaled by the server's TCP segments; src/experiment/measurement/request_cost.rs) are
# from the exact ones (ECHOLAB_COUNT_SYSCALLS=1): the same scenario run both ways, one
# after the other, ROUNDS times, and per model and step the sampled figure over the median
# exact one. Counted apart, not at once: an exact count keeps every call on the kernel's
# slow path, which would hide what a window does to the server.
#
#   scripts/syscall-sampling-error.sh [ROUNDS] [SCENARIO]
#
# Environment: MODELS (default "epoll,select,uring"), ECHOLAB (target/release/echolab).
# Root only (perf events). Prints one line per model and step: the sampled over exact
# ratio of system calls per request and of read calls per request, median (lowest-highest)
# over the rounds, and the exact figures.
set -euo pipefail
rounds=${1:-3}
scenario=${2:-quick}
bin=${ECHOLAB:-target/release/echolab}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for r in $(seq 1 "$rounds"); do
    for mode in sampled 1; do
        ECHOLAB_COUNT_SYSCALLS=$mode "$bin" run "$scenario" --models "${MODELS:-epoll,select,uring}" \
            --out "$work/$mode-$r" --quiet --no-report >/dev/null
    done
done
python3 - "$work" "$rounds" <<'PY'
import csv, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
def figures(mode):
    out = {}
    for r in range(1, rounds + 1):
        for row in csv.DictReader(open(f"{work}/{mode}-{r}/results.csv")):
            if row["status"] != "ok" or not row["server_syscalls_per_req"]:
                continue
            key = (row["model"], row["step"])
            out.setdefault(key, []).append(
                (float(row["server_syscalls_per_req"]), float(row["server_read_calls_per_req"])))
    return out
sampled, exact = figures("sampled"), figures("1")
for key in sorted(sampled):
    if key not in exact:
        continue
    parts = []
    for i, name in enumerate(("syscalls", "reads")):
        truth = statistics.median(v[i] for v in exact[key])
        if truth == 0:
            continue
        ratios = sorted(v[i] / truth for v in sampled[key])
        parts.append(f"{name} {statistics.median(ratios):.3f} ({ratios[0]:.3f}-{ratios[-1]:.3f}) of exact {truth:.3f}")
    print(f"{key[0]} {key[1]}: " + ", ".join(parts))
PY
