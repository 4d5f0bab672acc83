#!/usr/bin/env python3
"""check_tree_test.py - check_tree.py reports each kind of offence, and only those.

Plants a scratch repository: one runtime source that breaks every rule (its
opening line, a room above its own, 701 lines with no reason given, figures in
its comments), and sources that keep them in every way the rules allow. Then
check_tree.py must exit 1 with exactly the expected lines; and 0 once the
offender is gone. Run by ctest as tree.TheHouseRulesCheckReportsEachPlantedOffence.
"""

import subprocess
import sys
import tempfile
from pathlib import Path

CHECK = Path(__file__).resolve().with_name("check_tree.py")

OFFENDER = ["// bad.cpp \u2014 an em dash, and no room in its name",
            '#include "os/process.hpp"',
            '#include "graph/segment.hpp"',
            "// A hop measured 15.4 us here.",
            "int x; // 1.9 GB/s where 11 were possible",
            "// one to four: 1-4 us"] + ["int y%d;" % i for i in range(700)]

KEPT = {
    "runtime/src/os/good.cpp": [
        "// os/good.cpp - a source that keeps every rule.",
        "//",
        "// One file, about 700 lines: kept whole for the test.",
        '#include "os/process.hpp"',
        '#include "support/format.hpp"',
        "// Spins ~40 us, a constant; prints \"+12.3 ms: <what>\" as its log does.",
        'const char* s = "1.9 GB/s"; // a string, not a comment',
    ] + ["int z%d;" % i for i in range(700)],
    "runtime/include/cg/thing.hpp": ["// cg/thing.hpp - a public header."],
    "compiler/part/Thing.cpp": [
        "//===- Thing.cpp - A compiler source in LLVM's form -----------------===//"],
    "tests/unit/compiler/thing_test.cpp": [
        "//===- thing_test.cpp - A compiler test in LLVM's form ---------------===//"],
    "tests/error/any.cg.cpp": ["// A must-fail source opens with what it shows."],
}

EXPECTED = [
    "runtime/src/os/bad.cpp:1: opening: the first line must be '// bad.cpp - <what it is "
    "for>', not '// bad.cpp \u2014 an em dash, and no room in its name'",
    "runtime/src/os/bad.cpp:3: rooms: room 'os' includes 'graph/', a room above it",
    "runtime/src/os/bad.cpp:1: length: 707 lines, and its opening comment does not say why "
    "it is one file",
    "runtime/src/os/bad.cpp:4: measurements: a measured figure in a comment: '// A hop "
    "measured 15.4 us here.'",
    "runtime/src/os/bad.cpp:5: measurements: a measured figure in a comment: '// 1.9 GB/s "
    "where 11 were possible'",
    "runtime/src/os/bad.cpp:6: measurements: a measured figure in a comment: '// one to "
    "four: 1-4 us'",
    "check_tree.py: 6 offence(s) against STYLE.md",
]


def write(root, path, lines):
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    subprocess.run(["git", "-C", str(root), "add", path], check=True)


def run(root):
    done = subprocess.run([sys.executable, str(CHECK), str(root)], capture_output=True,
                          text=True)
    return done.returncode, done.stdout.splitlines()


def main():
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        for path, lines in KEPT.items():
            write(root, path, lines)
        write(root, "runtime/src/os/bad.cpp", OFFENDER)
        status, found = run(root)
        failures = []
        if status != 1:
            failures.append("check_tree.py exited %d with offences planted, not 1" % status)
        for line in EXPECTED:
            if line not in found:
                failures.append("not reported: " + line)
        for line in found:
            if line not in EXPECTED:
                failures.append("reported, but not planted: " + line)
        subprocess.run(["git", "-C", str(root), "rm", "-q", "-f", "runtime/src/os/bad.cpp"],
                       check=True)
        status, found = run(root)
        if status != 0 or found:
            failures.append("without the offender, check_tree.py exited %d saying %s" %
                            (status, found))
        for failure in failures:
            print(failure)
        if not failures:
            print("every planted offence was reported, and nothing else")
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
