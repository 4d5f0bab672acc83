#!/usr/bin/env bash
# break_python_waits.sh [<build dir>] - shows that the tests of how the Python
# driver waits, converts and describes itself fail against the code as it
# once was, and pass against the code as it is.
#
# Each case breaks a copy of cg/python.hpp or cg/detail/python_waits.hpp
# (nothing in the source or build folder changes), compiles e2e_graphs'
# module (or python_graphs') against it with the build's own commands, and
# runs the tests that must then fail:
#   get() in 100 ms slices, an early timeout retried at once, as it was:
#     test_waits.py: the stopped actor's CPU and timeout, the busy actor's text
#   execute() waiting for room with the GIL held, as it was:
#     test_waits.py: Ctrl-C and another thread during execute()
#   a ref that does not keep its graph, NaN and negative timeouts taken,
#   pybind11's own docstrings, no "did you mean" (one module):
#     test_waits.py, test_module_help.py, test_graphs.py: one test each
#   arrays element by element:  test_numbers.py::test_the_array_...
# About a minute per compile (four). Needs the build's cgc, runtime and modules built
# and nothing rebuilding them meanwhile (take the build lock).
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python=$(sed -n 's/^Python_EXECUTABLE:FILEPATH=//p' "$build/CMakeCache.txt")
failures=0
export CG_MODE=processes

# breaks <file> <copy> <old> <new> [<old> <new>...]: <copy> is <file> with each old replaced.
breaks() {
  "$python" - "$@" <<'PY'
import sys
path, copy, pairs = sys.argv[1], sys.argv[2], sys.argv[3:]
text = open(path).read()
for old, new in zip(pairs[::2], pairs[1::2]):
    if old not in text:
        sys.exit("break_python_waits: '" + old + "' is no longer in " + path)
    text = text.replace(old, new)
open(copy, "w").write(text)
PY
}

# module <case> <target> <folder>: builds <target>'s module into $work/<case>
# against the headers in $work/<case>/include (the broken one first).
module() {
  local case=$1 target=$2 folder=$3 compile link so object
  compile=$("$python" -c "import json, sys
print(next(e['command'] for e in json.load(open(sys.argv[1]))
           if e['file'].endswith('/' + sys.argv[2] + '.python.cpp')))" \
    "$build/compile_commands.json" "$target")
  so=$(cd "$build" && ls "$folder/$target".*.so)
  object=$folder/CMakeFiles/${target}_python.dir/$target.cg/$target.python.cpp.o
  link=$(cd "$build" && ninja -t commands "$so" | tail -n 1)
  compile=${compile/ / -I$work/$case/include }
  compile=${compile/"-o $object"/"-o $work/$case/$target.o"}
  link=${link/"-o $so"/"-o $work/$case/${so##*/}"}
  link=${link/" $object "/" $work/$case/$target.o "}
  (cd "$build" && eval "$compile" && eval "$link") && [[ -f $work/$case/${so##*/} ]]
}

# expect <case> <reason> <pytest node...>: with the module of <case> first on
# PYTHONPATH, the tests fail, and their output says <reason>.
expect() {
  local case=$1 reason=$2 output
  shift 2
  if output=$(cd "$repo/tests/python" &&
    PYTHONPATH="$work/$case:$build/tests/e2e:$build/tests/python" \
      "$python" -m pytest -q -p no:cacheprovider "$@" 2>&1); then
    echo "WRONG: $case: the tests passed: $*"
    failures=$((failures + 1))
  elif [[ $output != *"$reason"* ]]; then
    echo "WRONG: $case: the tests failed, but not saying '$reason': $output"
    failures=$((failures + 1))
  else
    echo "ok: $case: failed: $(grep -F -m 1 "$reason" <<<"$output")"
  fi
}

# broken <case> <header> <old> <new>...: a copy of <header> for <case>, broken.
broken() {
  local name=$1 header=$2
  shift 2
  mkdir -p "$work/$name/include/cg/detail"
  [[ -e $work/$name/cg ]] || ln -s "$repo/runtime/python/cg" "$work/$name/cg"
  breaks "$repo/runtime/include/$header" "$work/$name/include/$header" "$@"
}
# built <case> <target> <folder>: <target>'s module against <case>'s headers.
built() {
  echo "compiling $2's module for $1 (about a minute)"
  module "$@" || { echo "WRONG: $1: the module did not build" && exit 1; }
}

# As it is: every test passes.
output=$(cd "$repo/tests/python" && PYTHONPATH="$build/tests/e2e:$build/tests/python" \
  "$python" -m pytest -q -p no:cacheprovider test_waits.py test_numbers.py test_module_help.py \
  test_graphs.py 2>&1) || { echo "WRONG: as it is, the tests fail: $output" && exit 1; }
echo "ok: as it is: the tests pass"

# get(): 100 ms slices, an immediate timeout retried at once, its own wording.
broken old-get cg/python.hpp \
  'if (!value && !(first && SlicedTimeout::stalled_before(what)))
          std::this_thread::sleep_until(slice_start + slice);' '' \
  'if (first && SlicedTimeout::stalled_before(what))
        throw cg::TimeoutError(what); // as C++ answers it' '' \
  'throw timed_out.error(*total);' \
  'throw cg::TimeoutError("no result within " + std::to_string(total->count()) + " ms");'
broken old-get cg/detail/python_waits.hpp 'wait_slice{50}' 'wait_slice{100}'
built old-get e2e_graphs tests/e2e
expect old-get "get() used" \
  test_waits.py::test_a_get_on_a_stopped_actor_sleeps_to_its_timeout_and_names_it
expect old-get "no result within 1000 ms" \
  test_waits.py::test_a_get_that_times_out_sleeps_ends_on_time_and_names_the_busy_actor

# execute(): no wait for room of its own, the GIL held while the driver waits.
broken old-execute cg/python.hpp '    wait_for_room();
    std::optional<cg::Ref<Result>> ref;
    {
      py::gil_scoped_release unlocked;' '    std::optional<cg::Ref<Result>> ref;
    {'
built old-execute e2e_graphs tests/e2e
expect old-execute "KeyboardInterrupt" \
  test_waits.py::test_ctrl_c_ends_an_execute_waiting_for_room_within_100_ms
expect old-execute "the other thread ran" \
  test_waits.py::test_another_thread_runs_while_execute_waits_for_room

# A ref without its graph; timeouts unchecked; pybind11's docstrings; no guess.
broken as-before cg/python.hpp '&Graph::execute, py::keep_alive<0, 1>(),' '&Graph::execute,' \
  'signatures.disable_function_signatures();' '' \
  '" +
                           did_you_mean(name, launch_option_names));' '");'
broken as-before cg/detail/python_waits.hpp 'if (std::isnan(seconds) || seconds < 0)' 'if (false)' \
  'if (std::isinf(seconds))' 'if (std::isinf(seconds) && seconds > 0)'
built as-before e2e_graphs tests/e2e
expect as-before "ChannelClosedError" test_waits.py::test_a_ref_keeps_its_graph_alive
expect as-before "cg.TimeoutError: no result of execution 0 of graph 'adder'" \
  test_waits.py::test_a_timeout_that_is_nan_or_negative_is_refused_and_inf_waits_without_limit
expect as-before "AssertionError" \
  test_module_help.py::test_a_graph_class_says_its_signature_in_its_docstring
expect as-before "AssertionError" test_graphs.py::test_launch_options_are_keyword_arguments

# Arrays element by element, as any sequence.
broken by-element cg/python.hpp \
  'if (std::optional<T> numbers = numbers_from_buffer<typename T::value_type>(object))' \
  'if (std::optional<T> numbers = std::nullopt)' \
  'if (std::optional<Held> held = Held::of(object))' 'if (std::optional<Held> held = std::nullopt)'
built by-element python_graphs tests/python
expect by-element "read element by element" \
  test_numbers.py::test_the_array_is_read_through_its_buffer_not_element_by_element

if ((failures)); then
  echo "break_python_waits: $failures case(s) went the wrong way"
  exit 1
fi
echo "break_python_waits: every test fails against the broken code and passes as it is"
