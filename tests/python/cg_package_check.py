"""How a graph module finds the package `cg` it imports (its error classes).

Usage: cg_package_check.py <case> <folder of the module> <the package's folder>
  beside   with only the module's folder on PYTHONPATH, the module imports, and
           `cg` is the package add_compiled_graph() linked beside it
  missing  the module copied where no `cg` is: importing it is an ImportError
           naming the package and every folder of sys.path it was looked for in

Each import runs in a fresh interpreter (this one, sys.executable) with
PYTHONPATH set to one folder; -S keeps site-packages out of sys.path, so that
a `cg` installed there cannot stand in for the one under test.
"""

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

MODULE = "e2e_graphs"

# Run in the child: the outcome of `import e2e_graphs`, and where it looked.
PROBE = f"""
import json, os, sys
try:
    import {MODULE}, cg
    outcome = {{"imported": True, "cg": os.path.realpath(cg.__file__)}}
except ImportError as error:
    outcome = {{"imported": False, "type": type(error).__name__, "message": str(error)}}
outcome["sys.path"] = repr(sys.path)
print(json.dumps(outcome))
"""


def probe(pythonpath):
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env["PYTHONPATH"] = pythonpath
    done = subprocess.run([sys.executable, "-S", "-c", PROBE], env=env, cwd=pythonpath,
                          capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        sys.exit(f"the probe failed (exit {done.returncode}): {done.stderr}")
    return json.loads(done.stdout)


def beside(module_dir, package_dir):
    outcome = probe(module_dir)
    if not outcome["imported"]:
        sys.exit(f"{MODULE} did not import with only {module_dir} on PYTHONPATH: "
                 f"{outcome['type']}: {outcome['message']}")
    expected = os.path.realpath(os.path.join(package_dir, "cg", "__init__.py"))
    if outcome["cg"] != expected:
        sys.exit(f"cg came from {outcome['cg']}, not {expected}")


def missing(module_dir, package_dir):
    modules = glob.glob(os.path.join(module_dir, MODULE + ".*.so"))
    if len(modules) != 1:
        sys.exit(f"expected one {MODULE} module in {module_dir}, found {modules}")
    with tempfile.TemporaryDirectory() as alone:
        shutil.copy(modules[0], alone)
        outcome = probe(alone)
    if outcome["imported"]:
        sys.exit(f"{MODULE} imported with no cg package in reach (cg: {outcome['cg']})")
    expected = (f"module '{MODULE}' needs the Python package 'cg', which is in no folder of "
                f"sys.path {outcome['sys.path']}: keep the link 'cg' that add_compiled_graph() "
                "puts beside the module, or put <install prefix>/lib/python3/dist-packages on "
                "PYTHONPATH")
    if (outcome["type"], outcome["message"]) != ("ImportError", expected):
        sys.exit(f"expected ImportError: {expected}\n"
                 f"got      {outcome['type']}: {outcome['message']}")


def main():
    cases = {"beside": beside, "missing": missing}
    if len(sys.argv) != 4 or sys.argv[1] not in cases:
        sys.exit(__doc__)
    cases[sys.argv[1]](sys.argv[2], sys.argv[3])


if __name__ == "__main__":
    main()
