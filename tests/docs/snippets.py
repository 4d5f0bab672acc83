#!/usr/bin/env python3
"""snippets.py - every C++ and Python example of README.md and docs/ is built and run.

An example that does not compile, or prints something other than the page says, fails
this test; so does a ```cpp or ```python block the test does not know what to do with.

How a page says what an example is (an HTML comment on the line just above the fence;
it does not show where Markdown is rendered):

  ```cpp / ```cmake / ```python whose first line is a comment naming a file
  (`// app.cpp`, `# CMakeLists.txt`)
        a file of the page's project. The page's `<!-- snippet: run -->` ```sh block is
        run in a folder holding those files, with an install of this build at
        $HOME/compiled-graph (HOME a scratch folder): cmake, find_package and
        add_compiled_graph as a user runs them. A named `*.cg.cpp` on a page without a
        run block is compiled through add_compiled_graph() (cgc runs, its driver and
        actors compile and link) in the test's harness project.
  <!-- snippet: output -->
        above a block: exactly what the example just before it prints (for a run
        block, its last command; the others' output is shown only when they fail).
  <!-- snippet: fragment SOURCE [graph=NAME] [LIBRARY.cpp...] -->
        statements, compiled (not run) in a function of the harness that includes
        the generated header of SOURCE's graphs and the standard headers it may
        want (<algorithm>, <cstdio>, <span>, <string>, <vector>); with graph=NAME they may use
        `graph`, a launched NAME. SOURCE is a file of the tree (tests/e2e/x.cg.cpp)
        or a page's named block (language.md:echo.cg.cpp); LIBRARY.cpp are sources
        of the tree the actors need.
  <!-- snippet: program SOURCE [stdout=TEXT] -->
        a whole driver (with main) against SOURCE's graphs: built and run; it must
        exit 0 and, where given, print TEXT (`\\n` for a new line) or the output block
        that follows.
  <!-- snippet: python MODULE_DIR [stdin=TEXT] [stdout=TEXT] -->
        run by the interpreter the modules are built for, with the graph modules of
        <build>/MODULE_DIR and the package cg (runtime/python) on PYTHONPATH, given
        TEXT on stdin; it must exit 0 and print the stdout TEXT or output block.
  <!-- snippet: excerpt SOURCE -->
        lines of SOURCE as they are there: each line, its `//` comment and `...`
        lines aside, must be one of SOURCE's, in order.
  <!-- snippet: skip REASON -->
        not checked; the test counts these and prints each with its reason.

Other blocks (```sh commands, untagged output, tables) are prose and not run.

    snippets.py --build DIR --work DIR [--root DIR] [--only-parse]

--only-parse reads the pages and reports what it would check (and any unmarked
example) without building; tests/docs/snippets_test.py uses it with pages of its own.
"""

import argparse
import codecs
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

FILE_COMMENT = re.compile(r"^(?://|#)\s*((?:[\w.-]+/)*(?:[\w-]+\.)+(?:cpp|hpp|h|py|txt|cmake))\s*$")
MARKER = re.compile(r"^<!--\s*snippet:\s*(.*?)\s*-->\s*$")
EXAMPLE_LANGUAGES = ("cpp", "c++", "python")


@dataclass
class Block:
    page: str
    line: int  # of the opening fence, 1-based
    language: str
    text: str
    marker: list = field(default_factory=list)  # the marker's words, [] if none

    def where(self):
        return f"{self.page}:{self.line}"


def fail(message):
    raise SystemExit(f"snippets: {message}")


def parse_page(page, text):
    blocks, lines = [], text.splitlines()
    i, problems = 0, []
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            language = line[3:].strip().lower()
            start, body = i, []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            if i == len(lines):
                problems.append(f"{page}:{start + 1}: a fence that is never closed")
            marker = []
            if start > 0 and (m := MARKER.match(lines[start - 1])):
                marker = shlex.split(m.group(1))
            blocks.append(Block(page, start + 1, language, "\n".join(body) + "\n", marker))
        elif MARKER.match(line) and not (i + 1 < len(lines) and lines[i + 1].startswith("```")):
            problems.append(f"{page}:{i + 1}: a snippet marker not directly above a fence")
        elif re.match(r"^(#include [<\"]|import \w+$|int main\()", line):
            # Code outside a fence is a fence gone missing: it would be checked by nobody.
            problems.append(f"{page}:{i + 1}: code outside a fenced block: {line}")
        i += 1
    return blocks, problems


def option(words, name, default=None):
    for word in words:
        if word.startswith(name + "="):
            return codecs.decode(word[len(name) + 1:], "unicode_escape")
    return default


@dataclass
class Plan:
    projects: dict = field(default_factory=dict)  # page -> {file name: text}
    runs: dict = field(default_factory=dict)  # page -> (run block, expected output or None)
    sources: dict = field(default_factory=dict)  # "page:name" -> text (named *.cg.cpp blocks)
    fragments: list = field(default_factory=list)  # (block, source, graph, libraries)
    programs: list = field(default_factory=list)  # (block, source, expected or None)
    pythons: list = field(default_factory=list)  # (block, module dir, stdin, expected or None)
    excerpts: list = field(default_factory=list)  # (block, source)
    skipped: list = field(default_factory=list)  # (block, reason)
    problems: list = field(default_factory=list)


def plan(root, pages):
    result = Plan()
    for page in pages:
        blocks, problems = parse_page(page, (root / page).read_text())
        result.problems += problems
        for index, block in enumerate(blocks):
            following = blocks[index + 1] if index + 1 < len(blocks) else None
            expected = following.text if following and following.marker == ["output"] else None
            kind = block.marker[0] if block.marker else None
            first = block.text.splitlines()[0] if block.text.strip() else ""
            named = FILE_COMMENT.match(first)
            if kind == "output":
                continue
            if kind == "run":
                if page in result.runs:
                    result.problems.append(f"{block.where()}: a second run block on the page")
                result.runs[page] = (block, expected)
            elif kind == "skip":
                reason = " ".join(block.marker[1:])
                if not reason:
                    result.problems.append(f"{block.where()}: a skip needs its reason")
                result.skipped.append((block, reason))
            elif kind in ("fragment", "program", "excerpt", "python"):
                if len(block.marker) < 2:
                    result.problems.append(f"{block.where()}: '{kind}' needs what it belongs to")
                    continue
                target = block.marker[1]
                if kind == "fragment":
                    libraries = [w for w in block.marker[2:] if "=" not in w]
                    result.fragments.append((block, target, option(block.marker, "graph"),
                                             libraries))
                elif kind == "program":
                    result.programs.append(
                        (block, target, option(block.marker, "stdout", expected)))
                elif kind == "excerpt":
                    result.excerpts.append((block, target))
                else:
                    result.pythons.append((block, target, option(block.marker, "stdin", ""),
                                           option(block.marker, "stdout", expected)))
            elif kind:
                result.problems.append(f"{block.where()}: unknown snippet marker '{kind}'")
            elif named and block.language in EXAMPLE_LANGUAGES + ("cmake",):
                name = named.group(1)
                files = result.projects.setdefault(page, {})
                if name in files:
                    result.problems.append(f"{block.where()}: a second {name} on the page")
                files[name] = block.text
                if name.endswith(".cg.cpp"):
                    result.sources[f"{page}:{name}"] = block.text
            elif block.language in EXAMPLE_LANGUAGES:
                result.problems.append(
                    f"{block.where()}: a ```{block.language} example with no file name and no "
                    "snippet marker: name its file in its first line or mark it (see "
                    "tests/docs/snippets.py)")
        if page in result.projects and page not in result.runs:
            # Graph sources alone: compiled in the harness. Anything else needs a run block.
            others = [n for n in result.projects[page] if not n.endswith(".cg.cpp")]
            if others:
                result.problems.append(f"{page}: files {others} but no run block")
            del result.projects[page]
    return result


def run(command, cwd, env=None, stdin="", log=None):
    result = subprocess.run(command, cwd=cwd, env=env, input=stdin, text=True,
                            capture_output=True, shell=isinstance(command, str),
                            executable="/bin/bash" if isinstance(command, str) else None)
    if log is not None:
        log.write(f"$ {command}\n{result.stdout}{result.stderr}\n")
    return result


def compare(what, expected, actual, problems):
    if expected is not None and actual != expected:
        problems.append(f"{what} printed:\n{actual!r}\nthe page shows:\n{expected!r}")


def source_path(root, work, plan_, name):
    """A context's graph source: a page's named block (written out) or a tree file."""
    if name in plan_.sources:
        page, file_name = name.split(":", 1)
        folder = work / "sources" / re.sub(r"\W", "_", page)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / file_name).write_text(plan_.sources[name])
        return folder / file_name
    path = root / name
    if not path.is_file():
        fail(f"no graph source '{name}': neither a file of the tree nor a named block of a page")
    return path


def build_harness(root, work, env, plan_, problems, log):
    """One CMake project: each graph source once, each fragment and program against it."""
    harness = work / "harness"
    shutil.rmtree(harness, ignore_errors=True)
    harness.mkdir(parents=True)
    contexts = {}  # source name -> target
    lines = ["cmake_minimum_required(VERSION 3.25)", "project(doc_snippets LANGUAGES CXX)",
             "find_package(CompiledGraph 0.2 CONFIG REQUIRED)"]

    def context(name, libraries=()):
        if name in contexts:
            return contexts[name]
        path = source_path(root, work, plan_, name)
        target = path.name.split(".")[0]
        if target in contexts.values():
            fail(f"two graph sources named {target}: {name} and another")
        contexts[name] = target
        link = ""
        if libraries:
            sources = " ".join(str(root / library) for library in libraries)
            lines.extend([f"add_library({target}_needs STATIC {sources})",
                          f"target_link_libraries({target}_needs PUBLIC CompiledGraph::runtime)",
                          f"target_include_directories({target}_needs PUBLIC {path.parent})"])
            link = f" LINK_LIBRARIES {target}_needs"
        lines.append(f"add_compiled_graph({target} SOURCE {path}{link})")
        return target

    for name in plan_.sources:
        if name.split(":")[0] not in plan_.runs:
            context(name)
    fragment_sources = {}
    for number, (block, source, graph, libraries) in enumerate(plan_.fragments):
        target = context(source, libraries)
        launch = f"  auto graph = cg::launch<&{graph}>();\n" if graph else ""
        body = "".join("  " + line + "\n" for line in block.text.splitlines())
        (harness / f"fragment{number}.cpp").write_text(
            f"// {block.where()}\n#include \"{target}.cg.hpp\"\n\n#include <cg/cg.hpp>\n\n"
            "#include <algorithm>\n#include <cstdio>\n#include <span>\n#include <string>\n"
            f"#include <vector>\n\n[[maybe_unused]] void fragment{number}() {{\n"
            f"{launch}#line {block.line + 1} \"{block.page}\"\n{body}}}\n")
        fragment_sources.setdefault(target, []).append(f"fragment{number}.cpp")
    for target, files in fragment_sources.items():
        lines += [f"add_library({target}_fragments OBJECT {' '.join(files)})",
                  f"target_link_libraries({target}_fragments PRIVATE {target})"]
    for number, (block, source, _) in enumerate(plan_.programs):
        target = context(source)
        # #line: the compiler's errors point at the page.
        (harness / f"program{number}.cpp").write_text(
            f"#line {block.line + 1} \"{block.page}\"\n{block.text}")
        lines += [f"add_executable(program{number} program{number}.cpp)",
                  f"target_link_libraries(program{number} PRIVATE {target})"]
    (harness / "CMakeLists.txt").write_text("\n".join(lines) + "\n")

    configure = run(["cmake", "-S", harness, "-B", harness / "build", "-G", "Ninja",
                     "-DCMAKE_BUILD_TYPE=Release",
                     f"-DCMAKE_PREFIX_PATH={env['HOME']}/compiled-graph"], harness, env, log=log)
    build = configure if configure.returncode else run(
        ["cmake", "--build", harness / "build", "--", "-k", "0"], harness, env, log=log)
    if build.returncode:
        problems.append("the harness of graph sources, fragments and programs failed to "
                        f"build:\n{build.stdout[-6000:]}{build.stderr[-3000:]}")
        return
    for number, (block, _, expected) in enumerate(plan_.programs):
        result = run([harness / "build" / f"program{number}"], harness, env, log=log)
        if result.returncode:
            problems.append(f"{block.where()}: the program exited {result.returncode}:\n"
                            f"{result.stdout}{result.stderr}")
        compare(f"{block.where()}: the program", expected, result.stdout, problems)


def run_projects(work, env, plan_, problems, log):
    for page, files in plan_.projects.items():
        block, expected = plan_.runs[page]
        folder = work / "projects" / re.sub(r"\W", "_", page)
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for name, text in files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text)
        commands = [line for line in block.text.splitlines()
                    if line.strip() and not line.lstrip().startswith("#")]
        for command in commands[:-1]:
            result = run(command, folder, env, log=log)
            if result.returncode:
                problems.append(f"{block.where()}: `{command}` failed ({result.returncode}):\n"
                                f"{result.stdout[-6000:]}{result.stderr[-3000:]}")
                break
        else:
            result = run(commands[-1], folder, env, log=log)
            if result.returncode:
                problems.append(f"{block.where()}: `{commands[-1]}` exited {result.returncode}:"
                                f"\n{result.stdout}{result.stderr}")
            compare(f"{block.where()}: `{commands[-1]}`", expected, result.stdout, problems)


def run_pythons(root, build_dir, env, plan_, problems, log, python):
    for block, module_dir, stdin, expected in plan_.pythons:
        folder = build_dir / module_dir
        if not folder.is_dir():
            problems.append(f"{block.where()}: no {folder}: build the examples")
            continue
        env_python = dict(env, PYTHONPATH=f"{folder}:{root / 'runtime/python'}")
        result = run([python, "-c", block.text], folder, env_python, stdin=stdin, log=log)
        if result.returncode:
            problems.append(f"{block.where()}: Python exited {result.returncode}:\n"
                            f"{result.stdout}{result.stderr}")
        compare(f"{block.where()}: the Python example", expected, result.stdout, problems)


def check_excerpts(root, plan_, problems):
    def code(line):
        return " ".join(re.sub(r"\s*//.*$", "", line).split())

    for block, source in plan_.excerpts:
        path = root / source
        if not path.is_file():
            problems.append(f"{block.where()}: excerpt of '{source}', which is no file of the tree")
            continue
        remaining = [code(line) for line in path.read_text().splitlines()]
        for line in block.text.splitlines():
            wanted = code(line)
            if not wanted or wanted == "...":
                continue
            if wanted not in remaining:
                problems.append(f"{block.where()}: '{line.strip()}' is not in {source} "
                                "(or not in this order)")
                break
            remaining = remaining[remaining.index(wanted) + 1:]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2])
    parser.add_argument("--build", type=Path, help="the build tree (cmake --install's source)")
    parser.add_argument("--work", type=Path, help="a scratch folder, emptied first")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--only-parse", action="store_true")
    parser.add_argument("pages", nargs="*", help="default: README.md and docs/*.md")
    args = parser.parse_args()
    root = args.root.resolve()
    pages = args.pages or ["README.md"] + sorted(
        str(p.relative_to(root)) for p in (root / "docs").glob("*.md"))
    plan_ = plan(root, pages)

    checked = (f"{len(plan_.projects)} project(s), "
               f"{len([s for s in plan_.sources if s.split(':')[0] not in plan_.runs])} graph "
               f"source(s), {len(plan_.fragments)} fragment(s), {len(plan_.programs)} "
               f"program(s), {len(plan_.pythons)} Python example(s), {len(plan_.excerpts)} "
               f"excerpt(s)")
    problems = list(plan_.problems)
    if not args.only_parse and not problems:
        work = args.work.resolve()
        shutil.rmtree(work, ignore_errors=True)
        (work / "home").mkdir(parents=True)
        env = dict(os.environ, HOME=str(work / "home"), CMAKE_BUILD_PARALLEL_LEVEL="2")
        env.pop("CG_MODE", None)  # the examples run as the pages say, in the default mode
        with open(work / "log.txt", "w") as log:
            install = run(["cmake", "--install", args.build.resolve(), "--prefix",
                           work / "home/compiled-graph"], work, env, log=log)
            if install.returncode:
                fail(f"cmake --install failed:\n{install.stdout}{install.stderr}")
            check_excerpts(root, plan_, problems)
            run_projects(work, env, plan_, problems, log)
            build_harness(root, work, env, plan_, problems, log)
            run_pythons(root, args.build.resolve(), env, plan_, problems, log, args.python)
    for problem in problems:
        print(f"snippets: {problem}")
    for block, reason in plan_.skipped:
        print(f"snippets: not checked: {block.where()}: {reason}")
    if problems:
        print(f"snippets: {len(problems)} problem(s) in {checked}")
        return 1
    print(f"snippets: {'read' if args.only_parse else 'built and ran'} {checked}; "
          f"{len(plan_.skipped)} skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
