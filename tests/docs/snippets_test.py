#!/usr/bin/env python3
"""snippets_test.py - snippets.py fails for each kind of broken example.

Pages of its own, written to a scratch folder, are given to snippets.py:

  - read only (--only-parse): an unmarked ```cpp example, a fence never closed, code
    outside a fence (a lost fence), a marker away from its fence, a skip without its
    reason, an unknown marker: each is reported with its page and line, exit status 1;
  - built and run, one page with a broken example of each kind that runs: a fragment
    that does not compile against its graph (the compiler's error points at the page's
    line), a program and a Python example that print other than the page shows, an
    excerpt that is not in its source. Each is reported, exit status 1.

Run by ctest as docs.SnippetsCheckReportsEachBrokenExample:
    snippets_test.py --build <build dir> --work <scratch> --python <interpreter>
"""

import argparse
import subprocess
import sys
from pathlib import Path

SNIPPETS = Path(__file__).resolve().with_name("snippets.py")
FENCE = "```"

# page text -> the problem lines snippets.py --only-parse must print (page: the page's path)
PARSE_CASES = [
    (f"Text.\n\n{FENCE}cpp\nint x = 1;\n{FENCE}\n",
     ["snippets: {page}:3: a ```cpp example with no file name and no snippet marker: name its "
      "file in its first line or mark it (see tests/docs/snippets.py)"]),
    (f"{FENCE}sh\nls\n",
     ["snippets: {page}:1: a fence that is never closed"]),
    (f"## Using it\n\nimport quickstart\n\n{FENCE}\n",
     ["snippets: {page}:3: code outside a fenced block: import quickstart",
      "snippets: {page}:5: a fence that is never closed"]),
    (f"<!-- snippet: output -->\n\n{FENCE}\nhello\n{FENCE}\n",
     ["snippets: {page}:1: a snippet marker not directly above a fence"]),
    (f"<!-- snippet: skip -->\n{FENCE}cpp\nint x;\n{FENCE}\n",
     ["snippets: {page}:2: a skip needs its reason",
      "snippets: not checked: {page}:2: "]),
    (f"<!-- snippet: compile -->\n{FENCE}cpp\nint x;\n{FENCE}\n",
     ["snippets: {page}:2: unknown snippet marker 'compile'"]),
]

# One page whose runnable examples are each broken; built against the real install.
BUILD_PAGE = f"""\
# A page of broken examples

{FENCE}cpp
// tiny.cg.cpp
#include <cg/cg.hpp>

struct CG_ACTOR Twice {{
  int twice(int x) {{ return 2 * x; }}
}};

CG_GRAPH void doubler(cg::GraphBuilder& g) {{
  auto t = g.actor<Twice>("t");
  g.output(t.bind<&Twice::twice>(g.input<int>()));
}}
{FENCE}

<!-- snippet: fragment {{page}}:tiny.cg.cpp graph=doubler -->
{FENCE}cpp
cg::Ref<std::string> wrong = graph.execute(21);
{FENCE}

<!-- snippet: program {{page}}:tiny.cg.cpp -->
{FENCE}cpp
#include "tiny.cg.hpp"

#include <cstdio>

int main() {{
  auto graph = cg::launch<&doubler>();
  std::printf("%d\\n", graph.execute(21).get());
}}
{FENCE}

<!-- snippet: output -->
{FENCE}
43
{FENCE}

<!-- snippet: python examples/quickstart stdout="goodbye\\n" -->
{FENCE}python
import quickstart

with quickstart.launch("pipeline", mode="threads") as graph:
    print(graph.execute("hello").get(timeout=5))
{FENCE}

<!-- snippet: excerpt tests/e2e/multihost.cg.cpp -->
{FENCE}cpp
CG_GRAPH void multihost(cg::GraphBuilder& g) {{
  auto a = g.actor<Stage>("a", 2);
  ...
}}
{FENCE}
"""


def run(args, pages):
    result = subprocess.run([sys.executable, SNIPPETS, *args, *pages], text=True,
                            capture_output=True)
    return result.returncode, result.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, required=True)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    failures = []

    for number, (text, expected) in enumerate(PARSE_CASES):
        page = work / f"parse{number}.md"
        page.write_text(text)
        status, out = run(["--only-parse"], [str(page)])
        wanted = [line.format(page=page) for line in expected]
        got = [line for line in out.splitlines() if "problem(s) in" not in line]
        if status != 1 or got != wanted:
            failures.append(f"parse case {number}: exit {status}, printed {got}, expected {wanted}")

    page = work / "broken.md"
    page.write_text(BUILD_PAGE.replace("{page}", str(page)))
    status, out = run(["--build", str(args.build), "--work", str(work / "snippets"),
                       "--python", args.python], [str(page)])
    lines = BUILD_PAGE.splitlines()

    def fence_after(marker):  # the line of the fence below a marker, as snippets.py names it
        return next(n for n, line in enumerate(lines, 1) if line.startswith(marker)) + 1

    fragment_line = lines.index("cg::Ref<std::string> wrong = graph.execute(21);") + 1
    # The harness does not build, so the program is not run; the rest is still checked.
    expected = [
        f"snippets: {page}:{fence_after('<!-- snippet: excerpt')}: 'auto a = g.actor<Stage>(\"a\", 2);' is not in "
        "tests/e2e/multihost.cg.cpp (or not in this order)",
        "snippets: the harness of graph sources, fragments and programs failed to build:",
        f"{page}:{fragment_line}:",
        f"snippets: {page}:{fence_after('<!-- snippet: python')}: the Python example printed:\n'hello\\n'\nthe page shows:\n'goodbye\\n'",
    ]
    missing = [text for text in expected if text not in out]
    if status != 1 or missing:
        failures.append(f"broken page: exit {status}, missing {missing} in:\n{out}")

    # The program's wrong output, with the fragment gone so that the harness builds.
    page.write_text(BUILD_PAGE.replace("{page}", str(page)).replace(
        "cg::Ref<std::string> wrong", "cg::Ref<int> right"))
    status, out = run(["--build", str(args.build), "--work", str(work / "snippets"),
                       "--python", args.python], [str(page)])
    expected = [f"snippets: {page}:{fence_after('<!-- snippet: program')}: the program printed:\n'42\\n'\nthe page shows:\n'43\\n'"]
    missing = [text for text in expected if text not in out]
    if status != 1 or missing or "failed to build" in out:
        failures.append(f"wrong output of a program: exit {status}, missing {missing} in:\n{out}")

    for failure in failures:
        print(f"snippets_test: {failure}")
    if failures:
        return 1
    print(f"snippets_test: {len(PARSE_CASES)} broken pages and 5 broken examples reported")
    return 0


if __name__ == "__main__":
    sys.exit(main())
