#!/usr/bin/env bash
# break_python_waits.sh [<build dir>] [<work dir>] - shows that the tests of
# how the Python driver waits, converts and describes itself fail against the
# code as it once was, and pass against the code as it is.
#
# Each case breaks a copy of cg/python.hpp or cg/detail/python_waits.hpp
# (nothing in the source or build folder changes), compiles e2e_graphs'
# module (or python_graphs') against it as the build does
# (tests/support/break_support.sh), and runs the tests that must then fail,
# saying why:
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
break_timeout=300 # the as-is run is four test files
source "$(dirname "$0")/../support/break_support.sh"
break_setup "$@"
python=$(sed -n 's/^Python_EXECUTABLE:FILEPATH=//p' "$build/CMakeCache.txt")
export CG_MODE=processes

# The tests run from tests/python, with a module built here (and the cg
# package beside it) found ahead of the build's.
pythonpath=$build/tests/e2e:$build/tests/python
pytest=(env -C "$repo/tests/python" "$python" -m pytest -q -p no:cacheprovider)

# As it is: every test passes.
break_expect "as it is: the tests pass" 0 env PYTHONPATH="$pythonpath" "${pytest[@]}" \
  test_waits.py test_numbers.py test_module_help.py test_graphs.py

# broken <case> <header> <old> <new>...: a copy of <header> for <case>, broken.
broken() {
  break_copy "$repo/runtime/include/$2" "$work/$1/include/$2" "${@:3}" || exit 1
  [[ -e $work/$1/cg ]] || ln -s "$repo/runtime/python/cg" "$work/$1/cg"
}
# built <case> <graph>: <graph>'s module against <case>'s headers.
built() {
  echo "compiling $2's module for $1 (about a minute)"
  break_module "$2" "$work/$1" "-I$work/$1/include" || exit 1
}
# fails <case> <reason> <pytest node...>: with the module of <case> first on
# PYTHONPATH, the tests fail, and their output says <reason>.
fails() {
  break_expect "$1: ${*:3} fails" 1 env PYTHONPATH="$work/$1:$pythonpath" "${pytest[@]}" "${@:3}"
  break_says "$1: ${*:3} fails" "$2"
}

# get(): 100 ms slices, an immediate timeout retried at once, its own wording.
broken old-get cg/python.hpp \
  'if (!value && !(first && SlicedTimeout::stalled_before(what)))
          std::this_thread::sleep_until(slice_start + slice);' '' \
  'if (first && SlicedTimeout::stalled_before(what))
        throw cg::TimeoutError(what); // as C++ answers it' '' \
  'throw timed_out.error(*total);' \
  'throw cg::TimeoutError("no result within " + std::to_string(total->count()) + " ms");'
broken old-get cg/detail/python_waits.hpp 'wait_slice{50}' 'wait_slice{100}'
built old-get e2e_graphs
fails old-get "get() used" \
  test_waits.py::test_a_get_on_a_stopped_actor_sleeps_to_its_timeout_and_names_it
fails old-get "no result within 1000 ms" \
  test_waits.py::test_a_get_that_times_out_sleeps_ends_on_time_and_names_the_busy_actor

# execute(): no wait for room of its own, the GIL held while the driver waits.
broken old-execute cg/python.hpp '    wait_for_room();
    std::optional<cg::Ref<Result>> ref;
    {
      py::gil_scoped_release unlocked;' '    std::optional<cg::Ref<Result>> ref;
    {'
built old-execute e2e_graphs
fails old-execute "KeyboardInterrupt" \
  test_waits.py::test_ctrl_c_ends_an_execute_waiting_for_room_within_100_ms
fails old-execute "the other thread ran" \
  test_waits.py::test_another_thread_runs_while_execute_waits_for_room

# A ref without its graph; timeouts unchecked; pybind11's docstrings; no guess.
broken as-before cg/python.hpp '&Graph::execute, py::keep_alive<0, 1>(),' '&Graph::execute,' \
  'signatures.disable_function_signatures();' '' \
  '" +
                           did_you_mean(name, launch_option_names));' '");'
broken as-before cg/detail/python_waits.hpp 'if (std::isnan(seconds) || seconds < 0)' 'if (false)' \
  'if (std::isinf(seconds))' 'if (std::isinf(seconds) && seconds > 0)'
built as-before e2e_graphs
fails as-before "ChannelClosedError" test_waits.py::test_a_ref_keeps_its_graph_alive
fails as-before "cg.TimeoutError: no result of execution 0 of graph 'adder'" \
  test_waits.py::test_a_timeout_that_is_nan_or_negative_is_refused_and_inf_waits_without_limit
fails as-before "AssertionError" \
  test_module_help.py::test_a_graph_class_says_its_signature_in_its_docstring
fails as-before "AssertionError" test_graphs.py::test_launch_options_are_keyword_arguments

# Arrays element by element, as any sequence.
broken by-element cg/python.hpp \
  'if (std::optional<T> numbers = numbers_from_buffer<typename T::value_type>(object))' \
  'if (std::optional<T> numbers = std::nullopt)' \
  'if (std::optional<Held> held = Held::of(object))' 'if (std::optional<Held> held = std::nullopt)'
built by-element python_graphs
fails by-element "read element by element" \
  test_numbers.py::test_the_array_is_read_through_its_buffer_not_element_by_element

break_verdict "every test fails against the broken code and passes as it is"
