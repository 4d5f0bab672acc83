"""The bench's round trips driven from Python (cg/python.hpp).

    python3 python_round_trip.py <processes|threads> <n>

prints median_ns=<the median of n execute(42).get() round trips>: cg_bench
runs it beside its own C++ driver's, in alternating rounds.

    python3 python_round_trip.py vector-vs-tensor <processes|threads> <n>

prints one row: a 16 MiB numpy float32 array into a std::vector<float> input
(one copy out of the array's buffer), beside the same array as a cg::Tensor
(no copy), the median of n round trips each, in alternating rounds; both
graphs read their input in place (python_graphs.cg.cpp, on PYTHONPATH).
"""

import statistics
import sys
import time


def median_ns(graph, value, n):
    clock = time.perf_counter_ns
    samples = []
    for _ in range(n):
        start = clock()
        graph.execute(value).get()
        samples.append(clock() - start)
    return statistics.median(samples)


def round_trip(mode, n):
    import bench_graphs

    with bench_graphs.launch("round_trip", mode=mode) as graph:
        for _ in range(min(n, 1000)):  # warm up, as the C++ side does
            graph.execute(42).get()
        print(f"median_ns={median_ns(graph, 42, n)}")


def vector_vs_tensor(mode, n):
    import numpy
    import python_graphs

    array = numpy.arange(4 << 20, dtype=numpy.float32)  # 16 MiB
    with python_graphs.launch("vector_bytes", mode=mode) as vector, \
            python_graphs.launch("tensor_bytes", mode=mode) as tensor:
        assert vector.execute(array).get() == tensor.execute(array).get() == array.nbytes
        rounds = [(median_ns(vector, array, n), median_ns(tensor, array, n)) for _ in range(3)]
    as_vector = statistics.median(v for v, _ in rounds) / 1e6
    as_tensor = statistics.median(t for _, t in rounds) / 1e6
    ratio = as_vector / as_tensor
    print(f"numpy float32 16 MiB into std::vector<float>, Python driver: {as_vector:.2f} ms "
          f"(as cg::Tensor: {as_tensor:.2f} ms, {ratio:.2f}x; target <= 1.2x: "
          f"{'met' if ratio <= 1.2 else 'MISSED'}) [{mode}, median of {n} x 3 rounds]")


if __name__ == "__main__":
    if sys.argv[1] == "vector-vs-tensor":
        vector_vs_tensor(sys.argv[2], int(sys.argv[3]))
    else:
        round_trip(sys.argv[1], int(sys.argv[2]))
