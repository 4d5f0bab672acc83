#!/usr/bin/env python3
"""wording_check.py - the tree speaks of the project alone.

Every tracked text file (README, docs/, STYLE.md, CONTRIBUTING.md, sources and their
comments, scripts, CMake files) is read for words about how the project was made rather
than what it is: tracker numbers, the sessions that worked on it, the people who found
or reviewed things, files outside the repository, and the history of its own making.
A reader of the tree can act on none of these, and none of them stays true.

    wording_check.py [--root DIR] [FILE...]

Without FILEs it reads `git ls-files` of DIR (default: the repository holding this
script). Each finding is printed as `path:line: rule: text`; the exit status is 1 when
there is one, else 0. tests/docs/wording_check_test.py plants one offender per rule and
shows each is reported, and that the project's legitimate uses of the same words
(`input #0`, the compiler's `Session`, "no longer counts") are not.

The patterns are narrow on purpose: "session" is the frontend's type and "found by" the
runtime's failure detection, so only the phrases that speak of work on the project match.
"""

import argparse
import re
import subprocess
import sys
from pathlib import Path

# (name, pattern). Matched case-sensitively, line by line.
RULES = [
    ("tracker number",
     re.compile(r"\b(?:[Ii]ssues?|[Tt]ickets?|[Bb]ugs?|PRs?|[Pp]ull requests?)\s*#\s*\d+"
                r"|\b[Ii]ssues?\s+\d+\b|(?<![\w#])\(#\d+\)|\bgh-\d+\b")),
    ("session",
     re.compile(r"\b(?:[Tt]his|[Tt]hat|[Aa]nother|[Ee]arlier|[Pp]revious|[Ll]ater|[Ll]ast|"
                r"[Hh]elper|[Ll]ead|[Ww]orking|[Aa]gent|[Aa]|[Oo]ne|[Ee]ach|[Ee]very)"
                r"\s+sessions?\b|\bsessions? (?:found|filed|ran|measured|saw|noticed|fixed)\b")),
    ("file outside the repository",
     re.compile(r"\.\./shared\b|\bshared/(?:DESIGN|REDESIGN|NOTES|notes)|\b(?:RE)?DESIGN\.md\b")),
    ("people",
     re.compile(r"\b(?:filed|suggested|spotted|flagged) by\b|"
                r"\b[Rr]eviewers?\b|\b[Cc]ode review\b|\b[Tt]he lead\b|\b[Tt]hanks to\b|"
                r"\b(?:[Ww]ho|[Tt]hat) (?:filed|reported|found|noticed) (?:it|this|the)\b")),
    ("work history",
     re.compile(r"\bused to\b|\b[Pp]reviously\b|\b[Ff]ormerly\b|\b[Ee]arlier versions?\b|"
                r"\b[Tt]he old (?:code|version|implementation|design|way)\b|"
                r"\b[Bb]efore (?:this|the) (?:fix|change|commit|rewrite|redesign)\b|"
                r"\b(?:was|were|has been|have been) (?:removed|reverted|rewritten|fixed)\b|"
                r"\b[Ww]e (?:tried|changed|fixed|removed|decided)\b|"
                r"\b[Ff]ixed in [0-9a-f]{7,}\b|\b(?:an )?experiments? (?:that was |that were )?not kept\b")),
]

# The raw summaries of GPU runs are records of runs on given days at given commits:
# what a run found before a later commit is what they are for. The other rules hold there.
HISTORY_EXEMPT = ("docs/gpu-runs/",)

# This check spells the patterns out (its test keeps its offenders encoded).
SELF = ("tests/docs/wording_check.py",)

TEXT_SUFFIXES = {
    ".md", ".txt", ".cpp", ".hpp", ".h", ".c", ".cc", ".tpl", ".py", ".sh", ".cmake", ".in",
    ".json", ".def", ".toml", ".yml", ".yaml", ".cfg", ".svg", "",
}


def tracked_files(root):
    out = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], check=True,
                         capture_output=True).stdout.decode()
    return [name for name in out.split("\0") if name]


def check(root, names):
    findings = []
    for name in names:
        if name in SELF or Path(name).suffix not in TEXT_SUFFIXES:
            continue
        path = root / name
        if not path.is_file():
            continue  # deleted in the work tree, or a submodule
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # binary
        for number, line in enumerate(text.splitlines(), 1):
            for rule, pattern in RULES:
                if rule == "work history" and name.startswith(HISTORY_EXEMPT):
                    continue
                if pattern.search(line):
                    findings.append(f"{name}:{number}: {rule}: {line.strip()}")
    return findings


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2])
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    names = args.files or tracked_files(args.root)
    findings = check(args.root, names)
    for finding in findings:
        print(finding)
    if findings:
        print(f"wording_check: {len(findings)} line(s) speak of how the project was made, "
              "not of what it is", file=sys.stderr)
        return 1
    print(f"wording_check: {len(names)} files speak of the project alone")
    return 0


if __name__ == "__main__":
    sys.exit(main())
