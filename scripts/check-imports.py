#!/usr/bin/env python3
"""Check the direction of imports in every crate of the workspace
(docs/architecture.md, "Arrows").

Arrows between crates (crates/*) are the compiler's: each crate's Cargo.toml
states what it may import. What is left to police is inside each crate:
every `use` path and inline `crate::`/`super::` path of every file is
resolved to the file that defines what it names (through `pub use`
re-exports), and

  - in every crate but the simulator: no circle between files;
  - no crate pulls in, through any dependency, a package
    DEPENDENCIES_FORBIDDEN denies it (asked of `cargo tree`);
  - in the application (src/): every top-level module sits on a floor
    (FLOORS, top first) and no import runs back up to a floor above its
    own; a module on no floor is an error, so a new one must be placed;
    and the FORBIDDEN arrows (layers that must not speak the wire, say).

`mod x;` declarations are containment, not imports, and are not edges.
Unit tests (`#[cfg(test)] mod tests { ... }`) may reach anywhere.
Run from the repository root: scripts/check-imports.py
"""

import os
import re
import subprocess
import sys

APP = "src"

# The application's floors, top first: a module may import its own floor
# and those below, never one above (the binary's main.rs and lib.rs are
# the crate's roots).
FLOORS = [
    ("cli", "main"),
    ("web",),
    ("tap",),
    ("scheduler",),
    ("sinks", "listen_tls"),
    ("telemetry",),
    ("verdict", "baseline", "discovery"),
    ("poll",),
    ("config", "files", "heap", "lib"),
]

# (files whose path starts with this, module prefix they must not name)
FORBIDDEN = [
    ("src/telemetry/", "mcp_wire"),
    ("src/baseline/", "crate::telemetry"),
    ("src/web/status", "crate::scheduler"),
    ("src/web/status", "crate::telemetry"),
    ("src/web/status", "mcp_wire"),
    # The /probe handler answers through sinks::probe_answer; its budget
    # (probe_budget.rs) is counted by telemetry like the other endpoints.
    ("src/web/probe.rs", "crate::telemetry"),
    ("src/web/probe", "mcp_wire"),
    ("src/web/api", "crate::telemetry"),
    ("src/web/api", "mcp_wire"),
    ("src/sinks/", "mcp_wire"),
    ("src/poll/", "crate::baseline"),
    ("src/discovery/", "crate::baseline"),
]

# Crates whose files may import each other in circles: the simulator's
# behaviours and its engine call each other by design.
CIRCLES_ALLOWED = {"crates/simulator/src"}

# Crates of the workspace whose paths are checked against FORBIDDEN.
WORKSPACE_CRATES = (
    "mcp_wire",
    "mcp_listing",
    "mcp_conformance",
    "mcp_simulator",
    "mcp_tap",
    "mcp_tap_contract",
    "mcp_observer",
)

# (package, packages it must not pull in, even through another): the arrows
# between crates are the compiler's, but what a crate pulls in through its
# dependencies is not, so `cargo tree` is asked. The observer reads the
# tap's copies through the contract (crates/tap-contract), never the proxy:
# no tap, no wire, no runtime, no HTTP stack, no TLS.
DEPENDENCIES_FORBIDDEN = [
    ("mcp-observer", ("mcp-tap", "mcp-wire", "tokio", "hyper", "rustls", "tokio-rustls")),
    ("mcp-tap-contract", ("mcp-tap", "mcp-wire", "tokio", "hyper", "rustls", "tokio-rustls")),
]


class Crate:
    """One crate's source folder and how its paths resolve to files."""

    def __init__(self, src):
        self.src = src
        self.reexports = {}
        # `#[macro_export]` macros are named at the crate root but defined
        # in their own file: `crate::labelled_enum!` is an arrow there.
        self.macros = {}
        for f in self.files():
            text = open(f, encoding="utf-8").read()
            for name in re.findall(r"#\[macro_export\]\s*macro_rules!\s*(\w+)", text):
                self.macros[name] = f

    def module_path(self, path):
        rel = os.path.relpath(path, self.src)[:-3].split(os.sep)
        if rel[-1] in ("mod", "lib", "main"):
            rel = rel[:-1]
        return rel

    def file_of(self, mod):
        """The file defining module `mod` (list of segments), or None."""
        if not mod:
            return os.path.join(self.src, "lib.rs")
        base = os.path.join(self.src, *mod)
        for cand in (base + ".rs", os.path.join(base, "mod.rs")):
            if os.path.isfile(cand):
                return cand
        return None

    def resolve(self, segments, depth=0):
        """The file defining what `segments` (after `crate`) names: the
        deepest module file on the path, or, when the next segment is a
        name that file re-exports, where that name comes from."""
        best, used = None, 0
        for i in range(len(segments) + 1):
            f = self.file_of(segments[:i])
            if f is None and i > 0:
                break
            best, used = f, i
        if best is None or used >= len(segments) or depth > 8:
            return best
        if used == 0 and segments[0] in self.macros:
            return self.macros[segments[0]]
        target = self.exported(best).get(segments[used])
        if target is None:
            return best
        if target[0] != "crate":
            # Re-exported from another crate: no file of this one.
            return None
        return self.resolve(target[1:] + segments[used + 1 :], depth + 1) or best

    def exported(self, path):
        """Names `path` re-exports (`pub use`), each with its full path."""
        if path not in self.reexports:
            self.reexports[path] = {}
            text = strip_comments(open(path, encoding="utf-8").read())
            for tree in re.findall(r"\bpub(?:\([^)]*\))?\s+use\s+([^;]+);", text):
                for raw in split_tree(tree):
                    name = raw.strip()
                    alias = re.search(r"\s+as\s+(\w+)$", name)
                    name = re.sub(r"\s+as\s+\w+$", "", name)
                    segs = self.absolute(path, [s for s in name.split("::") if s])
                    if segs and segs[-1] != "*":
                        self.reexports[path][alias.group(1) if alias else segs[-1]] = segs
        return self.reexports[path]

    def absolute(self, path, segs):
        """`segs` as written in `path`, made absolute (`crate`, ...), or the
        path as is for another crate; None when it names nothing here."""
        here = self.module_path(path)
        if not segs:
            return None
        if segs[0] in WORKSPACE_CRATES:
            return segs
        if segs[0] == "crate":
            return ["crate"] + segs[1:]
        if segs[0] in ("super", "self"):
            base = list(here)
            while segs and segs[0] in ("super", "self"):
                if segs[0] == "super":
                    base = base[:-1]
                segs = segs[1:]
            return ["crate"] + base + segs
        if self.file_of(here + segs[:1]):
            # 2018-style relative path to a child module.
            return ["crate"] + here + segs
        return None

    def paths_in(self, path, src):
        """Module paths (absolute segment lists) a file names."""
        text = strip_comments(src)
        uses = re.findall(r"\buse\s+([^;]+);", text)
        inline = re.findall(r"\b((?:crate|super)(?:::[A-Za-z_][A-Za-z0-9_]*)+)", text)
        out = []
        for raw in [p for u in uses for p in split_tree(u)] + inline:
            raw = re.sub(r"\s+as\s+\w+$", "", raw.strip())
            segs = self.absolute(path, [s for s in raw.split("::") if s and s != "*"])
            if segs:
                out.append(segs)
        return out

    def files(self):
        out = []
        for root, _, names in os.walk(self.src):
            out += [os.path.join(root, n) for n in names if n.endswith(".rs")]
        return sorted(out)


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


def without_tests(src):
    return re.split(r"#\[cfg\(test\)\]\s*mod\s+tests\s*\{", src)[0]


def floor_of(top):
    for i, floor in enumerate(FLOORS):
        if top in floor:
            return i
    return None


def top_module(crate, path):
    return os.path.relpath(path, crate.src).split(os.sep)[0].removesuffix(".rs")


def check(crate, problems):
    """The file graph of `crate`, its layering problems added."""
    graph = {}
    app = crate.src == APP
    for f in crate.files():
        src = without_tests(open(f, encoding="utf-8").read())
        if app and floor_of(top_module(crate, f)) is None:
            problems.append(f"{f}: module `{top_module(crate, f)}` is on no floor (FLOORS)")
        edges = set()
        for segs in crate.paths_in(f, src):
            name = "::".join(segs)
            for prefix, forbidden in FORBIDDEN if app else ():
                if f.startswith(prefix) and (name + "::").startswith(forbidden + "::"):
                    problems.append(f"{f}: forbidden import {name}")
            if segs[0] != "crate":
                continue
            target = crate.resolve(segs[1:])
            if not target or target == f:
                continue
            edges.add(target)
            if app:
                mine, theirs = top_module(crate, f), top_module(crate, target)
                a, b = floor_of(mine), floor_of(theirs)
                if a is not None and b is not None and b < a:
                    problems.append(
                        f"{f}: imports {name}, a floor above `{mine}` (`{theirs}`)"
                    )
        graph[f] = edges
    return graph


def circles(graph):
    """Every circle a depth-first search finds (one per back edge)."""
    state, stack, found = {}, [], []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                found.append(stack[stack.index(m) :] + [m])
            elif m not in state:
                visit(m)
        stack.pop()
        state[n] = 2

    sys.setrecursionlimit(10000)
    for n in sorted(graph):
        if n not in state:
            visit(n)
    return found


def forbidden_dependencies(problems):
    """Packages a crate pulls in that DEPENDENCIES_FORBIDDEN denies it
    (normal, build and dev dependencies alike, as `cargo tree` prints)."""
    for package, denied in DEPENDENCIES_FORBIDDEN:
        tree = subprocess.run(
            ["cargo", "tree", "--locked", "--quiet", "--prefix", "none", "-p", package],
            capture_output=True,
            text=True,
        )
        if tree.returncode != 0:
            problems.append(f"cargo tree -p {package} failed: {tree.stderr.strip()}")
            continue
        pulled = {line.split()[0] for line in tree.stdout.splitlines() if line.strip()}
        for name in sorted(pulled & set(denied)):
            problems.append(f"{package} depends on {name} (DEPENDENCIES_FORBIDDEN)")


def main():
    roots = [APP] + sorted(
        os.path.join("crates", c, "src")
        for c in os.listdir("crates")
        if os.path.isdir(os.path.join("crates", c, "src"))
    )
    problems, files = [], 0
    forbidden_dependencies(problems)
    for src in roots:
        crate = Crate(src)
        graph = check(crate, problems)
        files += len(graph)
        if src not in CIRCLES_ALLOWED:
            for cycle in circles(graph):
                problems.append("import circle: " + " -> ".join(cycle))
    for p in sorted(set(problems)):
        print(p)
    if problems:
        return 1
    print(
        f"imports ok: {files} files in {len(roots)} crates, no circle, "
        "no forbidden arrow or dependency, no import up a floor"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
