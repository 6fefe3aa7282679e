#!/usr/bin/env bash
# Prints the module graph of src/ (or of the folder given, e.g. src/experiment) as
# edges "from -> to", one per line, from `use crate::`/`use super::`/`crate::` paths,
# then every cycle (strongly connected component of more than one module, and each
# pair importing each other). Exit 1 when a cycle exists.
# Usage: scripts/module-graph.sh [src/SUBDIR] [--edges|--cycles]
set -euo pipefail
cd "$(dirname "$0")/.."
root=${1:-src}
mode=${2:-all}
python3 - "$root" "$mode" <<'PY'
import os, re, sys
root, mode = sys.argv[1], sys.argv[2]

def module_of(path):
    rel = os.path.relpath(path, "src")[:-3].split(os.sep)
    if rel[-1] in ("mod", "lib", "main"):
        rel = rel[:-1]
    return rel  # list of segments below crate

modules = {}
for d, _, files in os.walk("src"):
    for f in files:
        if f.endswith(".rs"):
            p = os.path.join(d, f)
            modules[tuple(module_of(p))] = p
known = set(modules)

def resolve(cur, segs):
    """Longest known module prefix of an absolute path."""
    best = None
    for i in range(1, len(segs) + 1):
        if tuple(segs[:i]) in known:
            best = tuple(segs[:i])
    return best

def strip_comments(src):
    src = re.sub(r"/\*.*?\*/", "", src, flags=re.S)
    return "\n".join(l.split("//")[0] if not l.lstrip().startswith("//") else "" for l in src.splitlines())

def paths(src):
    # use trees: expand one level of braces, e.g. use crate::a::{b, c::d};
    out = []
    for m in re.finditer(r"\buse\s+((?:crate|super|self)(?:::\w+)*)(?:::\{([^;]*)\})?\s*(?:as \w+)?;", src, re.S):
        base, inner = m.group(1), m.group(2)
        if inner is None:
            out.append(base)
        else:
            for part in re.split(r",(?![^{]*\})", inner):
                part = part.strip()
                if not part:
                    continue
                head = re.match(r"[\w:]+", part)
                if head and head.group(0) != "self":
                    out.append(base + "::" + head.group(0).rstrip(":"))
                else:
                    out.append(base)
    for m in re.finditer(r"(?<![\w:])((?:crate|super)(?:::\w+)+)", src):
        out.append(m.group(1))
    return out

edges = set()
for mod, p in modules.items():
    src = strip_comments(open(p).read())
    is_dir_mod = os.path.basename(p) in ("mod.rs", "lib.rs", "main.rs")
    for path in paths(src):
        segs = path.split("::")
        cur = list(mod)
        if segs[0] == "crate":
            abs_ = segs[1:]
        else:
            # super/self relative to the module (a file's parent is its module's parent)
            base = list(cur)
            while segs and segs[0] in ("super", "self"):
                if segs[0] == "super":
                    base = base[:-1]
                segs = segs[1:]
            abs_ = base + segs
        tgt = resolve(cur, abs_)
        if tgt is None or tgt == mod:
            continue
        # a module using its own descendants is structure, not a dependency
        if tgt[: len(mod)] == mod:
            continue
        edges.add((mod, tgt))

rootsegs = tuple(module_of(root + ".rs")) if not os.path.isdir(root) else tuple(os.path.relpath(root, "src").split(os.sep)) if root != "src" else ()
def inside(m):
    return m[: len(rootsegs)] == rootsegs
name = lambda m: "::".join(m) or "crate"
sel = sorted((a, b) for a, b in edges if inside(a) and inside(b))

# collapse descendants: an edge into a submodule's ancestor counts on the ancestor's file
graph = {}
for a, b in sel:
    graph.setdefault(a, set()).add(b)
    graph.setdefault(b, set())

sys.setrecursionlimit(10000)
def cycles(graph):
    """Tarjan: the strongly connected components of more than one node."""
    index, low, stack, on, sccs, i = {}, {}, [], set(), [], [0]
    def strong(v):
        index[v] = low[v] = i[0]; i[0] += 1; stack.append(v); on.add(v)
        for w in graph[v]:
            if w not in index:
                strong(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v: break
            if len(comp) > 1:
                sccs.append(sorted(comp))
    for v in sorted(graph):
        if v not in index:
            strong(v)
    return sccs
sccs = cycles(graph)

# The same with every module folded into its top-level module below the root (a
# folder counts as one module): catches a file that reaches its own parent's file
# through another module (a -> b -> a/c, with a/mod.rs using a/c).
def top(m):
    return m[: len(rootsegs) + 1]
folded = {}
for a, b in sel:
    if top(a) != top(b):
        folded.setdefault(top(a), set()).add(top(b))
        folded.setdefault(top(b), set())
sccs += [c for c in cycles(folded) if c not in sccs]

if mode in ("all", "--edges"):
    for a, b in sel:
        print(f"{name(a)} -> {name(b)}")
if mode in ("all", "--cycles"):
    mutual = sorted({tuple(sorted((a, b))) for a, b in sel if (b, a) in set(sel)})
    print(f"# {len(sel)} edges, {len(sccs)} cycle(s)")
    for c in sccs:
        print(f"cycle ({len(c)} modules): " + ", ".join(name(m) for m in c))
    for a, b in mutual:
        print(f"mutual: {name(a)} <-> {name(b)}")
sys.exit(1 if sccs else 0)
PY
