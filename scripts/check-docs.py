#!/usr/bin/env python3
"""Check that the docs name what the repository holds, and that
docs/architecture.md maps every source file.

Fails (exit 1, one line per problem) when:

  (a) README.md or a docs/*.md names a repository path (a word starting
      with src/, crates/, scripts/, tests/, benches/, config/, alerts/,
      dashboards/, deploy/, fuzz/ or docs/) that `git ls-files` holds
      neither as a file nor as a folder. A placeholder stands for any one
      path segment or part of one (`*`, `<name>`, `{var}`); `{a,b}` is
      each of its alternatives. Paths the installer creates (INSTALLED)
      are allowed, and so is what lies under them. A relative Markdown
      link (`[text](guards.md)`, `[text](../scripts/demo)`) must lead to
      such a path too.

  (b) a Rust file under src/ or crates/*/src/ (test files `tests.rs` and
      `*_tests.rs` excepted) is not named in docs/architecture.md. A file
      is named by its whole path anywhere in that file, or by its path
      relative to a folder of a table row: the folders a row names by
      whole path (a file's own folder for a file, `crates/NAME/src` for
      a crate), a folder the row names relative to those (`merge/`,
      `cli/simulate_client/`), or the crate of its section's heading
      ("## The tap (`crates/tap`)"); a name may also be relative to an
      enclosing folder, up to the source root. `{a,b}.rs` names each
      alternative. So `report_text.rs` in a row about `src/poll/` names
      src/poll/report_text.rs, and a bare `lib.rs` names nothing unless
      its row says which crate. A folder's `mod.rs` and a crate's
      `lib.rs` must be named like any other file: they hold code too.

  (c) a `*.rs` name in a table row of docs/architecture.md names no file
      by the rule of (b) (a file renamed or removed, or a name put in the
      wrong row).

  (d) a type in the "One type per concept" table of docs/architecture.md
      (a backticked name starting with a capital in its second column,
      `Type` or `Type::item`) is defined nowhere in src/ or crates/*/src/
      (`struct`, `enum`, `trait`, `type`, `union`, a `labelled_enum!`
      entry, or an enum's variant) and is not one of EXTERNAL_TYPES, or
      its `item` is no `fn` or `const` there.

Run from anywhere: scripts/check-docs.py (it reads the repository it sits in)
"""

import fnmatch
import os
import re
import subprocess
import sys

ARCHITECTURE = "docs/architecture.md"

ROOTS = (
    "src", "crates", "scripts", "tests", "benches", "config", "alerts",
    "dashboards", "deploy", "fuzz", "docs",
)

# Paths that exist only once scripts/install-test-deps.sh (through
# scripts/install-peers.sh) has run; git holds none of them.
INSTALLED = [
    # The Python SDK peers' virtual environments, one per peer folder.
    "tests/peers/*/.venv",
    # The Node peers' packages (TypeScript SDK, gateways), from npm.
    "tests/peers/node_modules",
    # The Rust SDK peer's own cargo build output.
    "tests/peers/rmcp/target",
]

# A repository path as the docs write it: a root folder, then path
# characters (placeholders included); not the tail of a longer path or URL.
PATH_WORD = re.compile(
    r"(?<![\w./-])((?:%s)/[\w./{},*<>-]*)" % "|".join(ROOTS)
)
# A Rust file name as a row writes it, maybe relative, maybe `{a,b}.rs`.
RS_NAME = re.compile(r"(?<![\w./*<>}-])([\w./-]*(?:\{[\w.,/-]+\})?[\w./-]*\.rs)\b")
# A Markdown link's target, without its `#fragment`.
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
TYPE_WORD = re.compile(r"`([A-Z]\w*)(?:::(\w+))?(?![\w-])")
DEFINITION = r"\b(?:struct|enum|trait|type|union)\s+%s\b"
# An enum's variant: an indented line starting with the name.
VARIANT = r"(?m)^\s+%s\b\s*(?:[({,]|$)"
# Types of other crates the one-type table names beside ours.
EXTERNAL_TYPES = {
    "PreEscaped",  # maud's: HTML written as is
}


def tracked():
    out = subprocess.run(
        ["git", "ls-files"], check=True, capture_output=True, text=True
    ).stdout
    files = set(out.split())
    folders = set()
    for path in files:
        while "/" in path:
            path = path.rsplit("/", 1)[0]
            folders.add(path)
    return files, folders


def expand_braces(word):
    """`a/{b,c}.rs` as `a/b.rs` and `a/c.rs`; a brace without a comma is a
    placeholder and stays."""
    match = re.search(r"\{([^{}]*,[^{}]*)\}", word)
    if not match:
        return [word]
    out = []
    for alternative in match.group(1).split(","):
        out += expand_braces(word[: match.start()] + alternative + word[match.end():])
    return out


def clean(word):
    word = word.rstrip(".,:;)")
    return word[:-1] if word.endswith("/") else word


def as_pattern(word):
    """A path with placeholders as an fnmatch pattern (one segment each)."""
    return re.sub(r"<[^<>/]*>|\{[^{},/]*\}", "*", word)


def path_exists(word, files, folders):
    if word in files or word in folders:
        return True
    for installed in INSTALLED:
        if fnmatch.fnmatchcase(word, installed) or fnmatch.fnmatchcase(word, installed + "/*"):
            return True
    if any(mark in word for mark in "*<{"):
        pattern = as_pattern(word)
        # fnmatch's `*` crosses `/`; a placeholder stands for one segment.
        depth = pattern.count("/")
        return any(
            path.count("/") == depth and fnmatch.fnmatchcase(path, pattern)
            for path in files | folders
        )
    return False


def check_paths(files, folders):
    docs = ["README.md"] + sorted(
        "docs/" + name for name in os.listdir("docs") if name.endswith(".md")
    )
    problems = []
    for doc in docs:
        with open(doc, encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                for match in PATH_WORD.finditer(line):
                    for word in expand_braces(clean(match.group(1))):
                        if not path_exists(word, files, folders):
                            problems.append(
                                f"{doc}:{number}: names {word}, which the repository does not hold"
                            )
                for match in LINK.finditer(line):
                    target = match.group(1)
                    if re.match(r"[a-z]+:", target):
                        continue
                    path = os.path.normpath(os.path.join(os.path.dirname(doc), target))
                    if not path_exists(path, files, folders):
                        problems.append(
                            f"{doc}:{number}: links to {target}, which the repository does not hold"
                        )
    return problems


def is_source(path):
    """A Rust file of the application or of a crate's library."""
    return path.endswith(".rs") and (
        path.startswith("src/") or re.match(r"crates/[^/]+/src/", path) is not None
    )


def source_root(folder):
    """src, or crates/NAME/src: where relative names stop climbing."""
    parts = folder.split("/")
    if parts[0] == "crates" and len(parts) >= 3:
        return "/".join(parts[:3])
    return parts[0]


def as_folder(word, files, folders):
    """The folder a whole path stands for in a row, if any."""
    if re.fullmatch(r"crates/[\w-]+", word):
        return word + "/src"
    if word in files:
        return word.rsplit("/", 1)[0]
    if word in folders:
        return word
    return None


def row_folders(row, section, files, folders):
    found = [section] if section else []
    for match in PATH_WORD.finditer(row):
        for word in expand_braces(clean(match.group(1))):
            folder = as_folder(word, files, folders)
            if folder and folder.split("/")[0] in ("src", "crates"):
                found.append(folder)
    for match in re.finditer(r"`([\w-]+(?:/[\w-]+)*)/`", row):
        for base in list(found):
            if base + "/" + match.group(1) in folders:
                found.append(base + "/" + match.group(1))
    return found


def resolve(name, bases, files):
    """The files a row's `*.rs` name stands for: a whole path, or the
    nearest match under each of the row's folders."""
    if "/" in name and name in files:
        return {name}
    hits = set()
    for base in bases:
        folder, stop = base, source_root(base)
        while True:
            if folder + "/" + name in files:
                hits.add(folder + "/" + name)
                break
            if folder == stop or "/" not in folder:
                break
            folder = folder.rsplit("/", 1)[0]
    return hits


def check_map(files, folders):
    with open(ARCHITECTURE, encoding="utf-8") as handle:
        lines = handle.readlines()
    named = set()
    problems = []
    section = None
    for number, line in enumerate(lines, 1):
        if line.startswith("## "):
            crates = re.findall(r"crates/[\w-]+", line)
            section = crates[0] + "/src" if crates else None
        for match in PATH_WORD.finditer(line):
            named.update(expand_braces(clean(match.group(1))))
        if not line.startswith("|"):
            continue
        bases = row_folders(line, section, files, folders)
        for match in RS_NAME.finditer(line):
            for name in expand_braces(match.group(1)):
                hits = resolve(name, bases, files)
                if not hits:
                    problems.append(
                        f"{ARCHITECTURE}:{number}: `{name}` names no file of this row's folders"
                    )
                named |= hits
    for path in sorted(files):
        if not is_source(path):
            continue
        base = path.rsplit("/", 1)[-1]
        if base == "tests.rs" or base.endswith("_tests.rs"):
            continue
        if path not in named:
            problems.append(f"{ARCHITECTURE}: {path} is in no row of the module map")
    return problems


def check_types(files):
    with open(ARCHITECTURE, encoding="utf-8") as handle:
        text = handle.read()
    table = text.split("## One type per concept", 1)
    if len(table) < 2:
        return [f'{ARCHITECTURE}: no "## One type per concept" section']
    body = table[1].split("\n## ", 1)[0]
    sources = []
    for path in sorted(files):
        # A file deleted but not yet staged is still listed: skip it.
        if is_source(path) and os.path.isfile(path):
            with open(path, encoding="utf-8") as handle:
                sources.append(handle.read())
    code = "\n".join(sources)
    problems = []
    for line in body.splitlines():
        cells = line.split("|")
        if len(cells) < 4 or set(cells[2].strip()) <= set("-"):
            continue
        for match in TYPE_WORD.finditer(cells[2]):
            name, item = match.group(1), match.group(2)
            if name in EXTERNAL_TYPES:
                continue
            if not (
                re.search(DEFINITION % re.escape(name), code)
                or re.search(VARIANT % re.escape(name), code)
            ):
                problems.append(f"{ARCHITECTURE}: type {name} of the one-type table is defined nowhere")
            elif item and not re.search(r"\b(?:fn|const)\s+%s\b" % re.escape(item), code):
                problems.append(f"{ARCHITECTURE}: {name}::{item} of the one-type table is defined nowhere")
    return problems


def main():
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    files, folders = tracked()
    problems = check_paths(files, folders) + check_map(files, folders) + check_types(files)
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
