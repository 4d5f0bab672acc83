"""The bench's round trip driven from Python (cg/python.hpp): cg_bench runs
it beside its own C++ driver's, in alternating rounds.

    python3 python_round_trip.py <processes|threads> <n>

prints median_ns=<the median of n execute(42).get() round trips>.
"""

import statistics
import sys
import time

import bench_graphs

mode, n = sys.argv[1], int(sys.argv[2])
with bench_graphs.launch("round_trip", mode=mode) as graph:
    for _ in range(min(n, 1000)):  # warm up, as the C++ side does
        graph.execute(42).get()
    samples = []
    clock = time.perf_counter_ns
    for _ in range(n):
        start = clock()
        graph.execute(42).get()
        samples.append(clock() - start)
print(f"median_ns={statistics.median(samples)}")
