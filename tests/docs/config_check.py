#!/usr/bin/env python3
"""config_check.py - docs/configuration.md names every setting the code has, and no other.

Each list is read from the sources, never kept by hand, and compared with a section of
docs/configuration.md:

  environment variables  `CG_*` names the code reads: C++ and Python string literals
                         under runtime/ and compiler/ (getenv's arguments and the constants
                         it is given), shell expansions ($CG_X, ${CG_X...}) in scripts/ and
                         in the scripts cgc writes (compiler/codegen), and $ENV{CG_X} in
                         cmake/ and the CMake files
                         -> "## Environment variables"
  LaunchOptions fields   the members of struct cg::LaunchOptions (runtime/include/cg/driver.hpp)
                         -> "## `cg::LaunchOptions`"
  add_compiled_graph     the keywords its cmake_parse_arguments() takes (cmake/CompiledGraph.cmake)
                         -> "## `add_compiled_graph()`"
  cgc flags              every cl::opt/cl::list that is not cl::Hidden, and the flags cgc
                         compares argv with itself (compiler/tool/cgc.cpp); LLVM's --help
                         -> "## cgc"
  CMake options          option(CG_...) and set(CG_... CACHE ...) in the tracked CMake files
                         -> "## CMake options of this project"

A setting of the code the page lacks fails, and so does a row of the page the code no
longer has (a variable must at least be named somewhere in the tree outside docs/).

    config_check.py [--root DIR]

Prints each mismatch as `config_check: <what>: <name> ...` and exits 1, else 0.
tests/docs/config_check_test.py plants a setting of each kind in a scratch copy of the
sources and shows each is reported.
"""

import argparse
import re
import subprocess
import sys
from pathlib import Path

VARIABLE = r"CG_[A-Z0-9_]*[A-Z0-9]"


def tracked(root, *folders):
    out = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--", *folders], check=True,
                         capture_output=True).stdout.decode()
    return [root / name for name in out.split("\0") if name and (root / name).is_file()]


def read(path):
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return ""


def strip_cpp_comments(text):
    # Keeps string literals (a "//" inside one is no comment) and line numbers.
    pattern = re.compile(r"'(?:\\.|[^'\\\n])'|" r'"(?:\\.|[^"\\\n])*"|//[^\n]*|/\*.*?\*/', re.S)
    return pattern.sub(lambda m: m.group(0) if m.group(0)[0] in "'\""
                       else "\n" * m.group(0).count("\n"), text)


# --- what the code has ----------------------------------------------------------------

def code_variables(root):
    """Environment variables the code reads, as names; a family such as CG_HOST_<i> (read
    as ${CG_HOST_0} or formatted as ${{CG_HOST_{0}...}}) as `CG_HOST_<i>`."""
    found = {}
    literal = re.compile(r'"(' + VARIABLE + r')(?:"|=)')
    # ${CG_X...}, $CG_X, and in a format string ${{CG_X...}}; CG_HOST_0 or CG_HOST_{0}
    # stands for the family CG_HOST_<i>.
    shell = re.compile(r"\$\{?\{?(CG_[A-Z0-9_]*(?:\{\d+\})?)")
    cmake_env = re.compile(r"\$ENV\{(" + VARIABLE + r")\}")

    def add(name, path):
        found.setdefault(name, str(path.relative_to(root)))

    for path in tracked(root, "runtime", "compiler", "scripts", "cmake"):
        text = read(path)
        suffix = path.suffix
        if suffix in (".cpp", ".hpp", ".h", ".c", ".tpl", ".py"):
            for m in literal.finditer(strip_cpp_comments(text) if suffix != ".py" else text):
                add(m.group(1), path)
        if suffix in (".cpp", ".tpl", ".sh", "") or path.parent.name == "scripts":
            # Shell: the scripts themselves, and the scripts cgc writes from string literals.
            body = text if suffix in (".sh", "") else "\n".join(
                re.findall(r'"((?:\\.|[^"\\\n])*)"', strip_cpp_comments(text)))
            for m in shell.finditer(body):
                add(re.sub(r"_(?:\{\d+\}|\d+)$", "_<i>", m.group(1)), path)
        if suffix == ".cmake" or path.name == "CMakeLists.txt":
            for m in cmake_env.finditer(text):
                add(m.group(1), path)
    return found


def launch_option_fields(root):
    header = read(root / "runtime/include/cg/driver.hpp")
    body = re.search(r"^struct LaunchOptions \{(.*?)^\};", header, re.S | re.M)
    if not body:
        sys.exit("config_check: no `struct LaunchOptions {` in runtime/include/cg/driver.hpp")
    fields = []
    for statement in strip_cpp_comments(body.group(1)).split(";"):
        statement = " ".join(statement.split())
        if not statement or "(" in statement.split("=")[0].split("{")[0]:
            continue  # a member function
        depth, end = 0, len(statement)
        for i, c in enumerate(statement):
            depth += c == "<"
            depth -= c == ">"
            if depth == 0 and c in "={":
                end = i
                break
        fields.append(re.findall(r"\w+", statement[:end])[-1])
    return fields


def compiled_graph_keywords(root):
    text = read(root / "cmake/CompiledGraph.cmake")
    function = re.search(r"function\(add_compiled_graph\b(.*?)endfunction", text, re.S)
    parse = function and re.search(
        r'cmake_parse_arguments\(PARSE_ARGV\s+\d+\s+\w+\s+"([^"]*)"\s+"([^"]*)"\s+"([^"]*)"',
        function.group(1))
    if not parse:
        sys.exit("config_check: no cmake_parse_arguments() in add_compiled_graph "
                 "(cmake/CompiledGraph.cmake)")
    return [word for group in parse.groups() for word in group.split(";") if word]


def cgc_flags(root):
    text = strip_cpp_comments(read(root / "compiler/tool/cgc.cpp"))
    flags = ["help"]  # LLVM's, printed with our overview
    if "cl::SetVersionPrinter" in text:
        flags.append("version")  # LLVM's, printing what cgc tells it
    declaration = re.compile(r"cl::(?:opt|list|bits)\s*<(?:[^<>]|<[^<>]*>)*>\s*\w+\s*\(\s*"
                             r'"([^"]+)"((?:"(?:\\.|[^"\\])*"|[^;"])*?)\);', re.S)
    for m in declaration.finditer(text):
        if "cl::Hidden" not in m.group(2) and "cl::ReallyHidden" not in m.group(2):
            flags.append(m.group(1))
    # Flags cgc recognises itself before LLVM parses the rest (--version).
    flags += re.findall(r'"--([a-z][a-z0-9-]*)"', text)
    return sorted(set(flags))


def cmake_options(root):
    options = set()
    for path in tracked(root, "CMakeLists.txt", "*.cmake", "*/CMakeLists.txt"):
        text = read(path)
        options.update(re.findall(r"\boption\((" + VARIABLE + r")\b", text))
        options.update(re.findall(r"\bset\((" + VARIABLE + r")\b[^)]*\bCACHE\b", text))
    return options


# --- what the page says ---------------------------------------------------------------

def sections(page):
    found, current = {}, None
    for line in page.splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            found[current] = []
        elif current:
            found[current].append(line)
    return found


def first_cells(lines):
    """The first cell of each table row, header and rule excluded."""
    cells = []
    for line in lines:
        if line.startswith("|") and not re.match(r"\|\s*-", line):
            cell = re.split(r"(?<!\\)\|", line)[1].strip()
            if cell not in ("variable", "field", "keyword", "flag", "option", "command"):
                cells.append(cell)
    return cells


def documented(page):
    parts = sections(page)

    def section(title):
        if title not in parts:
            sys.exit(f"config_check: docs/configuration.md has no section '## {title}'")
        return parts[title]

    env = section("Environment variables")
    variables = set(re.findall(VARIABLE + r"(?:_<i>)?", " ".join(first_cells(env))))
    mentioned = set(re.findall(VARIABLE + r"(?:_<i>)?", "\n".join(env)))
    fields = {re.sub(r"`", "", cell).split()[0] for cell in first_cells(section("`cg::LaunchOptions`"))}
    keywords = {re.sub(r"`", "", cell).split()[0]
                for cell in first_cells(section("`add_compiled_graph()`"))}
    flags = set()
    for cell in first_cells(section("cgc")):
        flags.update(re.findall(r"`--?([a-z][a-z0-9-]*)", cell))
        flags.update(re.findall(r",\s*`--?([a-z][a-z0-9-]*)", cell))
    options = {re.sub(r"`", "", cell).split()[0]
               for cell in first_cells(section("CMake options of this project"))}
    return variables, mentioned, fields, keywords, flags, options


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2])
    root = parser.parse_args().root.resolve()
    page = read(root / "docs/configuration.md")
    doc_variables, doc_mentioned, doc_fields, doc_keywords, doc_flags, doc_options = documented(page)

    problems = []

    def compare(what, code, doc, where):
        for name in sorted(set(code) - set(doc)):
            problems.append(f"{what}: {name} ({where(name)}) is not in docs/configuration.md")
        for name in sorted(set(doc) - set(code)):
            problems.append(f"{what}: docs/configuration.md names {name}, which {where(None)} lacks")

    variables = code_variables(root)
    for name, path in sorted(variables.items()):
        if name not in doc_mentioned:
            problems.append(f"environment variable: {name} (read in {path}) is not in "
                            "docs/configuration.md")
    # A documented variable must be read somewhere: by the code above, or by the examples
    # and tests the page names as their readers.
    # tests/docs/ is left out: its checks spell variables out as test data.
    elsewhere = "\n".join(read(path) for path in tracked(root, "examples", "tests", "runtime",
                                                         "compiler", "scripts", "cmake",
                                                         ":!tests/docs"))
    for name in sorted(doc_variables):
        stem = name.replace("<i>", "")
        if name not in variables and stem not in elsewhere:
            problems.append(f"environment variable: docs/configuration.md names {name}, "
                            "which nothing in the tree reads")

    compare("LaunchOptions field", launch_option_fields(root), doc_fields,
            lambda name: "runtime/include/cg/driver.hpp" if name else "struct cg::LaunchOptions")
    compare("add_compiled_graph keyword", compiled_graph_keywords(root), doc_keywords,
            lambda name: "cmake/CompiledGraph.cmake" if name else "add_compiled_graph()")
    # LLVM gives every tool these; the page may name them, and must name --help.
    llvm_builtins = {"help-list", "help-hidden", "help-list-hidden", "print-options",
                     "print-all-options"}
    compare("cgc flag", cgc_flags(root), doc_flags - llvm_builtins,
            lambda name: "compiler/tool/cgc.cpp" if name else "cgc")
    compare("CMake option", cmake_options(root), doc_options,
            lambda name: "a CMakeLists.txt or .cmake file" if name else "the CMake files")

    for problem in problems:
        print(f"config_check: {problem}")
    if problems:
        return 1
    print(f"config_check: docs/configuration.md names {len(variables)} environment variables, "
          f"{len(doc_fields)} LaunchOptions fields, {len(doc_keywords)} add_compiled_graph "
          f"keywords, {len(doc_flags)} cgc flags and {len(doc_options)} CMake options, "
          "as the code has them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
