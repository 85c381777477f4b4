#!/usr/bin/env python3
"""Check the direction of imports inside the application crate, src/
(docs/architecture.md, "Arrows").

Arrows between crates (crates/*) are the compiler's: each crate's Cargo.toml
states what it may import. What is left to police is inside src/: every `use`
path and inline `crate::`/`super::` path of every file is resolved to the file
of the module it names, and paths into the wire crate (`mcp_wire`) are checked
against the layers that must not speak the wire. Fails (exit 1) on:
  - a forbidden arrow (a folder importing one it must not), or
  - a circle between files.
`mod x;` declarations are containment, not imports, and are not edges.
Run from the repository root: scripts/check-imports.py
"""

import os
import re
import sys

SRC = "src"

# (files whose path starts with this, module prefix they must not name)
FORBIDDEN = [
    ("src/telemetry/", "crate::poller"),
    ("src/telemetry/", "mcp_wire"),
    ("src/telemetry/", "crate::sinks"),
    ("src/baseline/", "crate::poller"),
    ("src/baseline/", "crate::sinks"),
    ("src/baseline/", "crate::telemetry"),
    ("src/web/status", "crate::poller"),
    ("src/web/status", "crate::telemetry"),
    ("src/web/status", "mcp_wire"),
    # The /probe handler answers through sinks::probe_answer; its budget
    # (probe_budget.rs) is counted by telemetry like the other endpoints.
    ("src/web/probe.rs", "crate::telemetry"),
    ("src/web/probe", "mcp_wire"),
    ("src/web/probe", "crate::listing"),
    ("src/web/api", "crate::telemetry"),
    ("src/web/api", "mcp_wire"),
    ("src/sinks/status", "crate::poller"),
    ("src/sinks/", "crate::poller"),
    ("src/sinks/", "mcp_wire"),
    ("src/poll/", "crate::poller"),
    ("src/poll/", "crate::sinks"),
    ("src/poll/", "crate::telemetry"),
    ("src/poll/", "crate::baseline"),
    ("src/poll/", "crate::web"),
    ("src/discovery/", "crate::poller"),
    ("src/discovery/", "crate::sinks"),
    ("src/discovery/", "crate::telemetry"),
    ("src/discovery/", "crate::baseline"),
    ("src/discovery/", "crate::web"),
]

# Crates of the workspace whose paths are checked against FORBIDDEN.
WORKSPACE_CRATES = ("mcp_wire", "mcp_listing", "mcp_conformance", "mcp_simulator")


def module_path(path):
    rel = os.path.relpath(path, SRC)[:-3].split(os.sep)
    if rel[-1] in ("mod", "lib", "main"):
        rel = rel[:-1]
    return rel


def file_of(mod):
    """The file defining module `mod` (list of segments), or None."""
    if not mod:
        return os.path.join(SRC, "lib.rs")
    base = os.path.join(SRC, *mod)
    for cand in (base + ".rs", os.path.join(base, "mod.rs")):
        if os.path.isfile(cand):
            return cand
    return None


def resolve(segments):
    """Deepest file among the path's module prefixes."""
    best = None
    for i in range(len(segments) + 1):
        f = file_of(segments[:i])
        if f is None and i > 0:
            break
        best = f
    return best


def split_tree(text):
    """Expand a use tree `a::{b, c::{d}}` into paths."""
    text = text.strip()
    m = re.match(r"^(.*?)\{(.*)\}$", text, re.S)
    if not m:
        return [text]
    prefix, inner = m.group(1), m.group(2)
    parts, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    out = []
    for p in parts:
        p = p.strip()
        if p:
            out.extend(prefix + q for q in split_tree(p))
    return out


def strip_comments(src):
    src = re.sub(r"/\*.*?\*/", "", src, flags=re.S)
    return re.sub(r"//[^\n]*", "", src)


def paths_in(path, src):
    """Module paths (absolute segment lists) a file names."""
    me = module_path(path)
    is_mod_file = os.path.basename(path) in ("mod.rs", "lib.rs", "main.rs")
    # A non-mod file `a/b.rs` is module a::b; its children live in a/b/.
    here = me
    out = []
    text = strip_comments(src)
    uses = re.findall(r"\buse\s+([^;]+);", text)
    inline = re.findall(r"\b((?:crate|super)(?:::[A-Za-z_][A-Za-z0-9_]*)+)", text)
    for raw in [p for u in uses for p in split_tree(u)] + inline:
        raw = re.sub(r"\s+as\s+\w+$", "", raw.strip())
        segs = [s for s in raw.split("::") if s and s != "*"]
        if not segs:
            continue
        if segs[0] in WORKSPACE_CRATES:
            out.append(segs)
        elif segs[0] == "crate":
            out.append(["crate"] + segs[1:])
        elif segs[0] in ("super", "self"):
            base = list(here)
            while segs and segs[0] in ("super", "self"):
                if segs[0] == "super":
                    base = base[:-1]
                segs = segs[1:]
            out.append(["crate"] + base + segs)
        elif file_of(here + segs[:1]):
            # 2018-style relative path to a child module.
            out.append(["crate"] + here + segs)
    del is_mod_file
    return out


def main():
    files = []
    for root, _, names in os.walk(SRC):
        files += [os.path.join(root, n) for n in names if n.endswith(".rs")]
    problems = []
    graph = {}
    for f in sorted(files):
        src = open(f, encoding="utf-8").read()
        # Unit tests may reach anywhere; they are not part of the layering.
        src = re.split(r"#\[cfg\(test\)\]\s*mod\s+tests\s*\{", src)[0]
        edges = set()
        for segs in paths_in(f, src):
            name = "::".join(segs)
            for prefix, forbidden in FORBIDDEN:
                if f.startswith(prefix) and (name + "::").startswith(forbidden + "::"):
                    problems.append(f"{f}: forbidden import {name}")
            if segs[0] != "crate":
                continue
            target = resolve(segs[1:])
            if target and target != f:
                edges.add(target)
        graph[f] = edges
    # Circles: depth-first search for a back edge.
    state, stack = {}, []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                cycle = stack[stack.index(m):] + [m]
                problems.append("import circle: " + " -> ".join(cycle))
            elif m not in state:
                visit(m)
        stack.pop()
        state[n] = 2

    sys.setrecursionlimit(10000)
    for n in sorted(graph):
        if n not in state:
            visit(n)
    for p in sorted(set(problems)):
        print(p)
    if problems:
        return 1
    print(f"imports ok: {len(graph)} files, no circle, no forbidden arrow")
    return 0


if __name__ == "__main__":
    sys.exit(main())
