#!/usr/bin/env python3
"""Each testable statement of docs/statements.md beside the verdict a classic run gave the
claims that judge it. Reads the statements' table rows (# | line | words | in echolab), the
claim numbers named in their last column ("claim N", "claims N and M", "claims N, M and
K"), and each claim's verdict from the run's report.md (as scripts/claims-agreement.py
reads them). Prints a Markdown table: statement, claims, verdicts; a statement no claim
judges keeps its reason.

Usage: scripts/statements-verdicts.py RESULTS_DIR [docs/statements.md]
Exit status: 0, or 2 for a usage error or a directory without Claims."""
import importlib.util
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROW = re.compile(r"^\| (\d{3}-\d+) \|")
# "claim 4", "claims 29 and 32", "claims 1, 2 and 3", "claims 19 (20 000) and 16 (40 000)"
NAMED = re.compile(r"\bclaims? (\d+)((?:(?: \([^)]*\))?(?:,| and) \d+)*)")
MORE = re.compile(r"(?:,| and) (\d+)")


def agreement():
    spec = importlib.util.spec_from_file_location(
        "claims_agreement", os.path.join(HERE, "claims-agreement.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def judged_by(cell):
    """The claim numbers a statement's 'in echolab' cell names, in order, once each."""
    numbers = []
    for m in NAMED.finditer(cell):
        for n in [m.group(1)] + MORE.findall(re.sub(r" \([^)]*\)", "", m.group(2))):
            if int(n) not in numbers:
                numbers.append(int(n))
    return numbers


def main(args):
    if len(args) not in (1, 2):
        print(__doc__, file=sys.stderr)
        return 2
    path = args[1] if len(args) == 2 else os.path.join(HERE, "..", "docs", "statements.md")
    try:
        verdicts = agreement().claims(args[0])
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print("| # | judged by | verdict |")
    print("| --- | --- | --- |")
    for line in open(path, encoding="utf-8"):
        m = ROW.match(line)
        if not m:
            continue
        cell = line.rstrip().rstrip("|").split(" | ")[-1].strip()
        claims = judged_by(cell)
        if claims and not cell.startswith(("not testable", "testable, not judged")):
            named = ", ".join(str(c) for c in claims)
            said = "; ".join(f"{c}: {verdicts.get(c, 'not in this run')}" for c in claims)
            print(f"| {m.group(1)} | {named} | {said} |")
        else:
            print(f"| {m.group(1)} | — | {cell} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
