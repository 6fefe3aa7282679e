#!/usr/bin/env python3
"""Do several classic runs judge the claims alike? Reads the Claims of each results
directory's report.md (a composite's own report, else its parts' reports, one folder
down) and prints each claim's verdicts side by side, then every flip: a claim one run
confirms and another refutes. A claim decided (confirmed or refuted) in one run and
undecided in another (no difference, inconclusive, not run) is no flip; it is listed
apart, to be explained.

Usage: scripts/claims-agreement.py RESULTS_DIR RESULTS_DIR [...]
Exit status: 0 no flip, 1 some, 2 usage or no Claims in a directory."""
import glob
import re
import sys

HEADING = re.compile(r"^### Claim (\d+): (.+)$")
DECIDED = ("confirmed", "refuted")


def claims(directory):
    """{claim number: verdict} from the '### Claim N: verdict' headings of the reports."""
    table = {}
    # The composite's own report judges every claim; without it, each part's report.
    for reports in ([f"{directory}/report.md"], sorted(glob.glob(f"{directory}/*/report.md"))):
        for report in reports:
            try:
                lines = open(report, encoding="utf-8").read().split("\n")
            except OSError:
                continue
            for line in lines:
                m = HEADING.match(line)
                if m:
                    table.setdefault(int(m.group(1)), m.group(2).strip())
        if table:
            break
    if not table:
        raise ValueError(f"no Claims in {directory}/report.md nor its parts' reports")
    return table


def main(dirs):
    if len(dirs) < 2:
        print(__doc__.strip().split("\n\n")[-1], file=sys.stderr)
        return 2
    try:
        runs = [claims(d) for d in dirs]
    except ValueError as e:
        print(f"claims-agreement: {e}", file=sys.stderr)
        return 2
    flips, apart = [], []
    for n in sorted(set().union(*runs)):
        verdicts = [r.get(n, "absent") for r in runs]
        print(f"claim {n:>2} | " + " | ".join(verdicts))
        if "confirmed" in verdicts and "refuted" in verdicts:
            flips.append(n)
        elif any(v in DECIDED for v in verdicts) and len(set(verdicts)) > 1:
            apart.append(n)
    for n in flips:
        runs_of = lambda v: ", ".join(str(i + 1) for i, r in enumerate(runs) if r.get(n) == v)
        print(f"  flip: claim {n} confirmed in run {runs_of('confirmed')}, refuted in run {runs_of('refuted')}")
    for n in apart:
        print(f"  decided in one run, not in another: claim {n}")
    print(f"claims: {len(set().union(*runs))}; flips: {len(flips)}; decided and undecided: {len(apart)}")
    return 1 if flips else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
