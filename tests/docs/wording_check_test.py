#!/usr/bin/env python3
"""wording_check_test.py - wording_check.py reports each kind of offender, and only those.

Plants one line per rule in a scratch folder (a Markdown page, a C++ comment, a shell
comment) and requires wording_check.py to exit 1 with exactly the expected findings; then
a file of the project's legitimate uses of the same words must pass. Run by ctest as
docs.WordingCheckReportsEachPlantedOffender.
"""

import base64
import subprocess
import sys
import tempfile
from pathlib import Path

CHECK = Path(__file__).resolve().with_name("wording_check.py")

# file -> lines; each line planted is expected back as `file:line: rule: line`. The
# offending lines are kept in base64, so that this file itself does not say them (the
# check scans it like any other); spelled_out() decodes them.
PLANTED = {
    "notes.md": [
        ("tracker number", "VGhlIHJldHJ5IHdhcyBhZGRlZCBmb3IgaXNzdWUgIzM5Lg=="),
        ("tracker number", "U2VlIGlzc3VlIDEyIGZvciB0aGUgcmVhc29ucy4="),
        ("tracker number", "U2xvdHMgZ3JldyB0byA2NCBLaUIgKCM0MSku"),
        ("session", "VGhpcyBzZXNzaW9uIG1lYXN1cmVkIDQuMiB1cyBvbiB0aGUgcm91bmQgdHJpcC4="),
        ("session", "QW4gZWFybGllciBzZXNzaW9uIGZvdW5kIHRoZSBsZWFrLg=="),
        ("file outside the repository", "VGhlIHJ1bGVzIGFyZSBpbiAuLi9zaGFyZWQvREVTSUdOLm1kLg=="),
        ("file outside the repository", "QXMgUkVERVNJR04ubWQgc2F5cywgdGhlIHJpbmcgaXMgZml4ZWQu"),
        ("people", "VGhlIHJhY2Ugd2FzIHNwb3R0ZWQgYnkgYSByZXZpZXdlci4="),
        ("people", "VGhhbmtzIHRvIHRoZSBsZWFkIGZvciB0aGUgaWRlYS4="),
        ("work history", "VGhlIGRyaXZlciB1c2VkIHRvIHBvbGwgZXZlcnkgY2hhbm5lbC4="),
        ("work history", "UHJldmlvdXNseSB0aGUgc2VnbWVudCB3YXMgbWFwcGVkIHR3aWNlLg=="),
        ("work history", "VGhlIGNhY2hlIHdhcyByZW1vdmVkIGFmdGVyIGl0IHdlbnQgc3RhbGUu"),
        ("work history", "VGhyZWUgdGVzdHMgZmFpbGVkOyBmaXhlZCBpbiAwMDVhYWM2Lg=="),
    ],
    "ring.cpp": [
        ("work history", "Ly8gV2UgdHJpZWQgYSBsb2NrIGhlcmUgZmlyc3Q7IGl0IHdhcyBzbG93ZXIu"),
        ("session", "Ly8gQSBoZWxwZXIgc2Vzc2lvbiByZXdyb3RlIHRoaXMgbG9vcC4="),
    ],
    "run.sh": [
        ("tracker number", "IyB3b3JrcyBhcm91bmQgZ2gtMTIzNA=="),
        ("people", "IyB0aGUgbGF5b3V0IHdhcyBmbGFnZ2VkIGJ5IENJIG93bmVycw=="),
    ],
}


def spelled_out(lines):
    """The planted (rule, line) pairs of one file, decoded."""
    return [(rule, base64.b64decode(text).decode()) for rule, text in lines]


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
        for name, encoded in PLANTED.items():
            lines = spelled_out(encoded)
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
