#!/usr/bin/env python3
"""config_check_test.py - config_check.py fails for each setting the page lacks.

Copies the files config_check.py reads (the tracked runtime/, compiler/, cmake/, scripts/,
examples/, tests/ and CMake files, and docs/configuration.md) into a scratch git
repository, checks that the copy passes, then plants one change at a time and requires
exactly the expected report and exit status 1:

  - a runtime source reads a new variable through std::getenv("CG_...");
  - a script reads ${CG_...};
  - cgc gains a cl::opt, and a hidden one that must not be asked for;
  - add_compiled_graph() gains a keyword;
  - cg::LaunchOptions gains a field;
  - the project gains a CMake option;
  - the page keeps a variable that nothing reads any more.

Run by ctest as docs.ConfigurationCheckReportsEachSettingThePageLacks.
"""

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHECK = HERE / "config_check.py"
SOURCE = HERE.parents[1]


def replace(root, name, old, new):
    path = root / name
    text = path.read_text()
    if old not in text:
        sys.exit(f"config_check_test: '{old}' is no longer in {name}: update this test")
    path.write_text(text.replace(old, new, 1))


# (what, file, old, new, the lines config_check must print)
PLANTS = [
    ("a getenv in the runtime", "runtime/src/actor/nvtx.cpp",
     'std::getenv("CG_NVTX")', 'std::getenv("CG_NVTX") ?: std::getenv("CG_PLANTED_VARIABLE")',
     ["config_check: environment variable: CG_PLANTED_VARIABLE (read in "
      "runtime/src/actor/nvtx.cpp) is not in docs/configuration.md"]),
    ("a variable of a script", "scripts/gpu-bundle",
     "work=${CG_GPU_BUNDLE_BUILD:-", "planted=${CG_PLANTED_BUNDLE:-}\nwork=${CG_GPU_BUNDLE_BUILD:-",
     ["config_check: environment variable: CG_PLANTED_BUNDLE (read in scripts/gpu-bundle) "
      "is not in docs/configuration.md"]),
    ("a cgc flag", "compiler/tool/cgc.cpp",
     "cl::opt<bool> timePhases(",
     'cl::opt<bool> plantedFlag("planted-flag", cl::desc("x; y"), cl::cat(category));\n'
     'cl::opt<bool> plantedHidden("planted-hidden", cl::Hidden, cl::cat(category));\n'
     "cl::opt<bool> timePhases(",
     ["config_check: cgc flag: planted-flag (compiler/tool/cgc.cpp) is not in "
      "docs/configuration.md"]),
    ("an add_compiled_graph keyword", "cmake/CompiledGraph.cmake",
     '"OVERLAP_GPU_COMMUNICATION;', '"PLANTED_KEYWORD;OVERLAP_GPU_COMMUNICATION;',
     ["config_check: add_compiled_graph keyword: PLANTED_KEYWORD (cmake/CompiledGraph.cmake) "
      "is not in docs/configuration.md"]),
    ("a LaunchOptions field", "runtime/include/cg/driver.hpp",
     "  bool tag_actor_output = true;",
     "  std::map<int, std::pair<int, int>> planted_field{};\n  bool tag_actor_output = true;",
     ["config_check: LaunchOptions field: planted_field (runtime/include/cg/driver.hpp) is not "
      "in docs/configuration.md"]),
    ("a CMake option", "CMakeLists.txt",
     "option(CG_BUILD_COMPILER",
     'option(CG_PLANTED_OPTION "planted" OFF)\noption(CG_BUILD_COMPILER',
     ["config_check: CMake option: CG_PLANTED_OPTION (a CMakeLists.txt or .cmake file) is not "
      "in docs/configuration.md"]),
    ("a row nothing reads", "docs/configuration.md",
     "| `CG_NCCL_LIBRARY` |",
     "| `CG_PLANTED_ROW` | unset | Read by nothing. |\n| `CG_NCCL_LIBRARY` |",
     ["config_check: environment variable: docs/configuration.md names CG_PLANTED_ROW, which "
      "nothing in the tree reads"]),
]


def run(root):
    result = subprocess.run([sys.executable, CHECK, "--root", root], text=True,
                            capture_output=True)
    return result.returncode, result.stdout.splitlines() + result.stderr.splitlines()


def main():
    names = subprocess.run(
        ["git", "-C", SOURCE, "ls-files", "--", "runtime", "compiler", "cmake", "scripts",
         "examples", "tests", "CMakeLists.txt", "*.cmake", "*/CMakeLists.txt",
         "docs/configuration.md"], check=True, capture_output=True, text=True).stdout.split()
    failures = []
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        for name in names:
            if (SOURCE / name).is_file():
                (root / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(SOURCE / name, root / name)
        subprocess.run(["git", "init", "-q", root], check=True)
        subprocess.run(["git", "-C", root, "add", "-A"], check=True)
        status, lines = run(root)
        if status != 0:
            print("config_check_test: the unchanged copy does not pass:", *lines, sep="\n  ")
            return 1
        for what, name, old, new, expected in PLANTS:
            original = (root / name).read_text()
            replace(root, name, old, new)
            status, lines = run(root)
            (root / name).write_text(original)
            if status != 1 or lines != expected:
                failures.append(f"{what}: exit {status}, printed {lines}, expected {expected}")
    for failure in failures:
        print(f"config_check_test: {failure}")
    if failures:
        return 1
    print(f"config_check_test: each of {len(PLANTS)} planted settings reported")
    return 0


if __name__ == "__main__":
    sys.exit(main())
