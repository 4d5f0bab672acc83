#!/usr/bin/env python3
"""wording_check_test.py - wording_check.py reports each kind of offender, and only those.

Plants one line per rule in a scratch folder (a Markdown page, a C++ comment, a shell
comment) and requires wording_check.py to exit 1 with exactly the expected findings; then
a file of the project's legitimate uses of the same words must pass. Run by ctest as
docs.WordingCheckReportsEachPlantedOffender.
"""

import subprocess
import sys
import tempfile
from pathlib import Path

CHECK = Path(__file__).resolve().with_name("wording_check.py")

# file -> lines; each line planted is expected back as `file:line: rule: line`.
PLANTED = {
    "notes.md": [
        ("tracker number", "The retry was added for issue #39."),
        ("tracker number", "See issue 12 for the reasons."),
        ("tracker number", "Slots grew to 64 KiB (#41)."),
        ("session", "This session measured 4.2 us on the round trip."),
        ("session", "An earlier session found the leak."),
        ("file outside the repository", "The rules are in ../shared/DESIGN.md."),
        ("file outside the repository", "As REDESIGN.md says, the ring is fixed."),
        ("people", "The race was spotted by a reviewer."),
        ("people", "Thanks to the lead for the idea."),
        ("work history", "The driver used to poll every channel."),
        ("work history", "Previously the segment was mapped twice."),
        ("work history", "The cache was removed after it went stale."),
        ("work history", "Three tests failed; fixed in 005aac6."),
    ],
    "ring.cpp": [
        ("work history", "// We tried a lock here first; it was slower."),
        ("session", "// A helper session rewrote this loop."),
    ],
    "run.sh": [
        ("tracker number", "# works around gh-1234"),
        ("people", "# the layout was flagged by CI owners"),
    ],
}

# The same words where the project speaks of itself: none of these may be reported.
LEGITIMATE = """\
graph 'adder' input #0 takes int (C++)
bool selectGraphs(Session& session) {
// Runs `action` over the session's main file.
// The buffer is no longer needed when this returns.
// A stopped actor process found by a get() that times out.
| error | raised by | when |
// Our actors' profiles, asked for by the driver at its teardown.
executions whose refs were dropped are still running
the run of 2026-11-25, on the shared 2-core machine
"""


def main():
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        expected = []
        for name, lines in PLANTED.items():
            (root / name).write_text("".join(text + "\n" for _, text in lines))
            expected += [f"{name}:{n}: {rule}: {text}" for n, (rule, text) in enumerate(lines, 1)]
        (root / "legitimate.md").write_text(LEGITIMATE)

        planted = subprocess.run([sys.executable, CHECK, "--root", root, *PLANTED], text=True,
                                 capture_output=True)
        found = planted.stdout.splitlines()
        if planted.returncode != 1 or found != expected:
            missed = [line for line in expected if line not in found]
            extra = [line for line in found if line not in expected]
            print(f"planted offenders: exit {planted.returncode}, missed {missed}, "
                  f"unexpected {extra}")
            return 1

        clean = subprocess.run([sys.executable, CHECK, "--root", root, "legitimate.md"],
                               text=True, capture_output=True)
        if clean.returncode != 0:
            print(f"legitimate words reported (exit {clean.returncode}):\n{clean.stdout}")
            return 1
    print(f"wording_check_test: {len(expected)} planted offenders reported, "
          "legitimate uses passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
