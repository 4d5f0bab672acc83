"""Compiled Graph for C++, driven from Python.

The graph modules add_compiled_graph(<t> ... PYTHON) builds (`import <t>`)
raise these: the Python face of cg/errors.hpp, one class per C++ error.
"""

import asyncio
import builtins
import collections
import os


class Error(RuntimeError):
    """Base of every error a graph raises (cg::Error)."""


class TaskError(Error):
    """An actor method threw; the graph stays usable (cg::TaskError)."""

    def __init__(self, what, actor, method, exception_type, message):
        super().__init__(what)
        self.actor = actor
        self.method = method
        self.exception_type = exception_type
        self.message = message


class ActorDiedError(Error):
    """An actor's process exited or was killed. Unless it was restarted
    (launch(max_restarts=...); then restarted is True and the graph executes
    on), the graph is unusable."""

    def __init__(self, what, actor, restarted=False):
        super().__init__(what)
        self.actor = actor
        self.restarted = restarted


class ChannelClosedError(Error):
    """The graph was torn down while a call needed it."""


class ChannelError(Error):
    """A channel delivered a lost, reordered or corrupted message."""


class TimeoutError(Error, builtins.TimeoutError):
    """No result (or no room for an input) within the timeout."""


class CapacityExceeded(Error):
    """max_in_flight executions are in flight and not yet collected."""


class LaunchError(Error):
    """The actors could not be started."""


class _AsyncResults:
    """The executions of one graph awaited in one asyncio loop.

    The loop watches the graph's results_fd() (an eventfd the graph signals
    whenever results arrive, from its collector thread) with add_reader; each
    time it fires, the futures whose results are in are resolved, in
    execution order. No thread of ours polls.
    """

    def __init__(self, graph, loop):
        self._graph = graph
        self.loop = loop
        self._fd = graph.results_fd()
        self._pending = collections.deque()  # (ref, future), in execution order
        loop.add_reader(self._fd, self._arrived)

    def submit(self, args):
        ref = self._graph.execute(*args)
        future = self.loop.create_future()
        self._pending.append((ref, future))
        return future

    def _arrived(self):
        try:
            os.read(self._fd, 8)  # reset it; what is ready is asked below
        except BlockingIOError:
            pass
        while self._pending and self._pending[0][0].ready():
            ref, future = self._pending.popleft()
            try:
                value = ref.get(timeout=0)
            except Exception as error:  # a cg.Error of this execution
                if not future.done():
                    future.set_exception(error)
            else:
                if not future.done():  # a cancelled await leaves its result unread
                    future.set_result(value)

    def close(self):
        """Stops watching (the graph tears down); what is still awaited fails."""
        self.loop.remove_reader(self._fd)
        while self._pending:
            _, future = self._pending.popleft()
            if not future.done():
                future.set_exception(ChannelClosedError("the graph was torn down"))


def _execute_async(graph, *inputs):
    """graph.execute_async(*inputs): an asyncio future of the result."""
    loop = asyncio.get_running_loop()
    waiting = getattr(graph, "_cg_async", None)
    if waiting is not None and waiting.loop is not loop:
        raise RuntimeError("execute_async: this graph's executions are awaited in another "
                           "event loop")
    if waiting is None:
        waiting = graph._cg_async = _AsyncResults(graph, loop)
    return waiting.submit(inputs)


def _close_async(graph):
    """Before a graph tears down: its asyncio watch ends."""
    waiting = getattr(graph, "_cg_async", None)
    if waiting is not None:
        waiting.close()
        graph._cg_async = None
