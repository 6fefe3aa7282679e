#!/usr/bin/env python3
"""Do several runs' verdicts agree? Reads the verdict table of each results directory's
report.md and prints the figures side by side, then every contradiction: a figure for
which one run names model A among its winners (or tied leaders) and model B behind them,
and another run names B among its winners and A behind. A figure decided in one run and
undecided in another is no contradiction.

Usage: scripts/verdict-agreement.py RESULTS_DIR RESULTS_DIR [...]
Exit status: 0 no contradiction, 1 some, 2 usage or unreadable report."""
import re
import sys


def verdicts(directory):
    """{figure: (set of models named best, the Winner cell)} of the first verdict table."""
    lines = open(f"{directory}/report.md", encoding="utf-8").read().split("\n")
    start = next(i for i, l in enumerate(lines) if l.startswith("| Figure | Compared at | Winner"))
    table = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        figure, winner = cells[0], cells[2]
        if winner.startswith("no difference") or winner.startswith("one model"):
            table[figure] = (set(), winner)
        else:
            table[figure] = (set(re.sub(r" \(tied\)$", "", winner).split(", ")), winner)
    return table


def main(dirs):
    if len(dirs) < 2:
        print(__doc__.strip().split("\n\n")[-1], file=sys.stderr)
        return 2
    try:
        runs = [verdicts(d) for d in dirs]
    except (OSError, StopIteration) as e:
        print(f"verdict-agreement: no verdict table: {e}", file=sys.stderr)
        return 2
    contradictions = 0
    for figure in runs[0]:
        print(f"{figure:30} | " + " | ".join(r.get(figure, (set(), "—"))[1] for r in runs))
        for i, ri in enumerate(runs):
            for j in range(i + 1, len(runs)):
                best_i, best_j = ri.get(figure, (set(),))[0], runs[j].get(figure, (set(),))[0]
                for a in best_i - best_j:
                    for b in best_j - best_i:
                        print(f"  contradiction: run {i + 1} puts {a} ahead of {b}, run {j + 1} the reverse")
                        contradictions += 1
    decided = [sum(1 for f in r if r[f][0]) for r in runs]
    print(f"figures decided per run: {decided}; contradictions: {contradictions}")
    return 1 if contradictions else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
