"""A small serving loop in Python over the quickstart's C++ pipeline.

Requests (lines on stdin) go into the pipeline as they come, up to 8 in
flight; answers come out in order. Built by add_compiled_graph(... PYTHON):

    PYTHONPATH=<build>/examples/quickstart:<cg package> python3 serve.py < requests.txt
"""

import collections
import sys

import cg
import quickstart

IN_FLIGHT = 8

with quickstart.launch("pipeline", max_in_flight=IN_FLIGHT) as pipeline:
    waiting = collections.deque()
    for line in sys.stdin:
        if len(waiting) == IN_FLIGHT:  # the pipeline is full: answer the oldest first
            print(waiting.popleft().get())
        try:
            waiting.append(pipeline.execute(line.rstrip("\n")))
        except cg.Error as error:
            print(f"refused: {error}")
    while waiting:
        print(waiting.popleft().get())
