"""The tests of test_graphs.py that need numpy fail where it is missing, and
never skip: numpy is a declared dependency (python3-numpy, scripts/install-deps),
so a machine without it is a broken one. Runs them in this process with
`import numpy` made to fail as it does where numpy is not installed."""

import os
import sys

import pytest

NEED_NUMPY = [
    "test_graphs.py::test_a_tensor_goes_in_and_comes_back_through_dlpack_without_a_copy",
    "test_graphs.py::"
    "test_an_input_tensor_made_in_place_is_filled_through_numpy_and_sent_without_a_copy",
    "test_numbers.py::test_a_numpy_float32_array_enters_a_vector_of_float_and_comes_back_exactly",
    "test_numbers.py::test_the_array_is_read_through_its_buffer_not_element_by_element",
    "test_numbers.py::test_other_arrays_and_buffers_convert_too",
]


class Outcomes:
    """Each test's outcome, as pytest reports it (a skip is reported at setup)."""

    def __init__(self):
        self.of = {}

    def pytest_runtest_logreport(self, report):
        name = report.nodeid.split("::")[-1]
        if report.when == "call" or report.outcome != "passed":
            self.of.setdefault(name, report.outcome)


def main():
    sys.modules["numpy"] = None  # `import numpy` raises ImportError from here on
    here = os.path.dirname(os.path.abspath(__file__))
    outcomes = Outcomes()
    pytest.main(["-q", "-p", "no:cacheprovider"] + [os.path.join(here, test) for test in NEED_NUMPY],
                plugins=[outcomes])
    expected = {test.split("::")[-1]: "failed" for test in NEED_NUMPY}
    if outcomes.of != expected:
        print(f"expected {expected}, got {outcomes.of}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
