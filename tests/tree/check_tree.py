#!/usr/bin/env python3
"""check_tree.py - the house rules of STYLE.md that a reader would otherwise
police by hand, checked over the tracked sources.

  python3 check_tree.py <repository> [<rule>...]

Each rule prints one line per offence, `path:line: rule: what`, and the script
exits 1 if any rule found one. The rules (all by default):

  opening      a source opens with one line naming it and its purpose:
               `// <its path, or the end of it> - <purpose>` (ASCII hyphen), or
               LLVM's `//===- <name> - <purpose> ...` in compiler/ and its tests
  rooms        a runtime source includes only its own room and rooms below it
               (graph, comm, net, tensor, shm, os, support, highest first)
  length       a source over 700 lines says in its opening comment why it is
               one file (the words "one file")
  measurements a comment holds no figure that was measured: no throughput
               (GB/s, MB/s), no time with decimals or a range (0.3 us, 1-4 us),
               no "measured" beside a number; figures belong on
               docs/performance.md with their machine, date and baseline
"""

import re
import subprocess
import sys

ROOMS = ["support", "os", "shm", "tensor", "net", "comm", "actor", "graph"]  # lowest first
LIMIT = 700
SOURCES = (".cpp", ".hpp", ".h")
# Graph sources and their inputs that tests feed cgc: each opens with what it shows.
EXEMPT = ("tests/error/", "tests/language/")

FIGURE = re.compile(
    r"\b\d+(\.\d+)?\s*(GB/s|MB/s|GiB/s|MiB/s|Gb/s)"      # a throughput
    r"|\b\d+\.\d+\s*(ns|us|µs|ms)\b"                     # a time with decimals
    r"|\b\d+(\.\d+)?\s*-\s*\d+(\.\d+)?\s*(ns|us|µs|ms)\b"  # a range of times
    r"|\bmeasured\s+(at\s+|as\s+)?~?\d")                # "measured 15.4 us"


def tracked(repo):
    out = subprocess.run(["git", "-C", repo, "ls-files", "runtime", "compiler", "tests",
                          "examples"], capture_output=True, text=True, check=True).stdout
    return [p for p in out.split("\n")
            if p.endswith(SOURCES) and not p.startswith(EXEMPT)
            and "/templates/" not in p]


def comments(lines):
    """(line number, text) of each // comment in the file, and of /* */ lines."""
    inside = False
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if inside:
            yield number, stripped
            inside = "*/" not in stripped
            continue
        if stripped.startswith("/*"):
            inside = "*/" not in stripped
            yield number, stripped
            continue
        at = line.find("//")
        # Not inside a string literal on the line: an even number of quotes before it.
        if at >= 0 and line[:at].count('"') % 2 == 0:
            yield number, line[at:]


def check_opening(path, lines):
    first = lines[0] if lines else ""
    name = path.rsplit("/", 1)[-1]
    m = re.match(r"// (\S+) - \S", first)
    if m and path.endswith(m.group(1)) and m.group(1).endswith(name):
        return []
    if path.startswith(("compiler/", "tests/unit/compiler/")) and re.match(r"//===-+ " + re.escape(name) + r" ", first):
        return []
    return [(1, "opening", "the first line must be '// " + name + " - <what it is for>', not '" +
             first[:60] + "'")]


def check_rooms(path, lines):
    parts = path.split("/")
    if len(parts) < 4 or parts[:2] != ["runtime", "src"] or parts[2] not in ROOMS:
        return []
    mine = ROOMS.index(parts[2])
    found = []
    for number, line in enumerate(lines, 1):
        m = re.match(r'\s*#\s*include\s+"([a-z_]+)/', line)
        if m and m.group(1) in ROOMS and ROOMS.index(m.group(1)) > mine:
            found.append((number, "rooms", "room '" + parts[2] + "' includes '" + m.group(1) +
                          "/', a room above it"))
    return found


def check_length(path, lines):
    if len(lines) <= LIMIT:
        return []
    opening = []
    for line in lines:
        if not line.startswith("//"):
            break
        opening.append(line)
    if "one file" in " ".join(opening).lower():
        return []
    return [(1, "length", "%d lines, and its opening comment does not say why it is one file" %
             len(lines))]


def check_measurements(path, lines):
    # A quoted text is what the code prints ("+12.3 ms: <what>"), not a figure.
    return [(number, "measurements", "a measured figure in a comment: '" + text.strip()[:70] + "'")
            for number, text in comments(lines)
            if FIGURE.search(re.sub(r'"[^"]*"', '""', text))]


RULES = {"opening": check_opening, "rooms": check_rooms, "length": check_length,
         "measurements": check_measurements}


def main():
    repo = sys.argv[1]
    rules = sys.argv[2:] or list(RULES)
    unknown = [r for r in rules if r not in RULES]
    if unknown:
        sys.exit("check_tree.py: no rule " + ", ".join(unknown) + "; the rules: " +
                 ", ".join(RULES))
    offences = 0
    for path in tracked(repo):
        with open(repo + "/" + path, encoding="utf-8", errors="replace") as f:
            lines = f.read().split("\n")
        for rule in rules:
            for number, name, what in RULES[rule](path, lines):
                print("%s:%d: %s: %s" % (path, number, name, what))
                offences += 1
    if offences:
        print("check_tree.py: %d offence(s) against STYLE.md" % offences)
    return 1 if offences else 0


if __name__ == "__main__":
    sys.exit(main())
