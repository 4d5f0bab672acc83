"""The Python driver (cg/python.hpp) end to end: the e2e graphs' modules,
launched in the mode CG_MODE says (ctest runs this file in both)."""

import asyncio
import os
import signal
import threading
import time

import pytest

import cg
import e2e_graphs
import e2e_quickstart

MODE = os.environ.get("CG_MODE", "processes")


def child_pids():
    """This process's children: the actor processes, in processes mode."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == os.getpid():
                pids.append(int(entry))
    return pids


def test_a_graph_launches_by_name_and_answers():
    with e2e_quickstart.launch("chain", max_in_flight=8) as graph:
        assert graph.execute("hello").get() == "hello"
    assert set(e2e_quickstart.graphs) == {"chain", "fanout", "pipeline"}
    assert e2e_quickstart.__doc__ == "The graphs of quickstart.cg.cpp: chain, fanout, pipeline"


def test_each_graph_is_a_class_of_the_module():
    with e2e_quickstart.pipeline() as graph:
        refs = [graph.execute(f"word {i}") for i in range(5)]
        assert [ref.get() for ref in refs] == [f"word {i}" for i in range(5)]


def test_several_inputs_and_outputs_are_arguments_and_a_tuple():
    with e2e_graphs.launch("vectors") as graph:
        assert graph.execute(3, [1.0, -2.5, 4.0]).get() == ([9.0, -22.5, 36.0], 6)
    with e2e_graphs.launch("in_place") as graph:
        assert graph.execute([1.0, 2.0], "text", 4).get() == ("3 in place", "4 in place", "6 in place")


def test_bytes_cross_as_bytes():
    payload = bytes(range(256)) * 1000
    with e2e_graphs.launch("bytes_chain") as graph:
        assert graph.execute(payload).get() == payload
        assert graph.execute(bytearray(b"\x00abc")).get() == b"\x00abc"


def test_a_method_that_throws_is_a_task_error_and_the_graph_goes_on():
    with e2e_graphs.launch("adder") as graph:
        with pytest.raises(cg.TaskError) as raised:
            graph.execute(-5).get()
        error = raised.value
        assert str(error) == "task a.add_one failed: std::invalid_argument: negative input -5"
        assert (error.actor, error.method) == ("a", "add_one")
        assert error.exception_type == "std::invalid_argument"
        assert error.message == "negative input -5"
        assert isinstance(error, cg.Error)
        assert graph.execute(1).get() == 3


def test_an_input_of_the_wrong_type_is_a_type_error_naming_it():
    with e2e_graphs.launch("adder") as graph:
        with pytest.raises(TypeError) as raised:
            graph.execute("one")
        assert str(raised.value) == (
            "graph 'adder' input #0 takes int (C++); a Python str does not convert to it")
        with pytest.raises(TypeError) as raised:
            graph.execute(1, 2)
        assert str(raised.value) == "graph 'adder' takes 1 input, not 2"
        assert graph.execute(2).get() == 4


def test_launch_options_are_keyword_arguments():
    with pytest.raises(TypeError) as raised:
        e2e_graphs.launch("adder", max_in_fligth=2)
    assert str(raised.value) == (
        "launch() got an unexpected keyword argument 'max_in_fligth'; did you mean "
        "'max_in_flight'?")
    with pytest.raises(TypeError) as raised:
        e2e_graphs.launch("adder", colour="blue")  # near no option: no guess
    assert str(raised.value) == "launch() got an unexpected keyword argument 'colour'"
    with pytest.raises(ValueError) as raised:
        e2e_graphs.launch("adder", mode="fibers")
    assert str(raised.value) == "launch() option mode is 'processes' or 'threads', not 'fibers'"
    with pytest.raises(TypeError) as raised:
        e2e_graphs.launch("adder", max_in_flight="two")
    assert str(raised.value) == "launch() option max_in_flight cannot be 'two' (a Python str)"
    with pytest.raises(ValueError) as raised:
        e2e_graphs.launch("adder", get_timeout=-1)
    assert str(raised.value) == "launch() option get_timeout must be seconds, at least 0"
    with e2e_graphs.launch("adder", get_timeout=1e300, start_timeout=30.5) as graph:
        assert graph.execute(1).get() == 3  # a timeout of any length is no overflow
    with pytest.raises(ValueError) as raised:
        e2e_graphs.launch("nothing")
    assert str(raised.value).startswith("module e2e_graphs has no graph 'nothing' (it has ")
    with pytest.raises(cg.LaunchError) as raised:
        e2e_graphs.launch("adder", max_in_flight=0)
    assert str(raised.value) == "cg::LaunchOptions::max_in_flight must be at least 1"


def test_max_in_flight_bounds_what_is_submitted():
    with e2e_graphs.launch("napper", max_in_flight=2) as graph:
        first, second = graph.execute(1), graph.execute(1)
        with pytest.raises(cg.CapacityExceeded):
            graph.execute(1)
        assert (first.get(), second.get()) == (1, 1)


def test_a_get_that_times_out_leaves_the_ref_valid():
    with e2e_graphs.launch("napper") as graph:
        ref = graph.execute(300)
        with pytest.raises(cg.TimeoutError) as raised:
            ref.get(timeout=0.05)
        assert isinstance(raised.value, TimeoutError)  # the built-in one, too
        assert str(raised.value).startswith(
            "no result of execution 0 of graph 'napper' within 50 ms")
        assert not ref.ready()
        assert ref.get(timeout=10) == 300


def test_get_releases_the_gil_while_it_waits():
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.001)

    with e2e_graphs.launch("napper") as graph:
        ticker = threading.Thread(target=tick)
        ticker.start()
        try:
            assert graph.execute(300).get() == 300
            during = len(ticks)
        finally:
            stop.set()
            ticker.join()
    # Held, the GIL would let it run once or twice; released, ~250 times
    # (fewer on a loaded machine).
    assert during > 20, f"the other thread ran {during} times in 300 ms"


def test_ctrl_c_interrupts_a_get():
    with e2e_graphs.launch("napper") as graph:
        ref = graph.execute(3000)
        timer = threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGINT))
        timer.start()
        start = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            ref.get(timeout=10)
        assert time.monotonic() - start < 1.5
        timer.join()


def test_a_torn_down_graph_refuses_to_execute():
    with e2e_graphs.launch("adder") as graph:
        assert graph.execute(1).get() == 3
    with pytest.raises(cg.ChannelClosedError):
        graph.execute(1)
    graph.teardown()  # idempotent


@pytest.mark.skipif(MODE == "threads", reason="an actor thread cannot be killed alone")
def test_a_killed_actor_is_an_actor_died_error():
    with e2e_graphs.launch("adder") as graph:
        assert graph.execute(1).get() == 3
        actors = child_pids()
        assert len(actors) == 2
        for pid in actors:
            os.kill(pid, signal.SIGKILL)
        with pytest.raises(cg.ActorDiedError) as raised:
            for _ in range(100):
                graph.execute(1).get(timeout=5)
        assert raised.value.actor in ("a", "b")


def test_a_killed_actor_with_restarts_left_comes_back_and_the_graph_goes_on():
    if MODE == "threads":  # restarts are of actor processes
        with pytest.raises(cg.LaunchError) as raised:
            e2e_graphs.launch("napper", max_restarts=1)
        assert str(raised.value) == (
            "cannot launch graph 'napper': restarts are not supported yet for actor threads "
            "(threads mode), and actor 'a' has max_restarts 1 "
            "(cg::LaunchOptions::max_restarts, CG_MAX_RESTARTS)")
        with e2e_graphs.launch("napper", record_profile=True) as graph:
            assert graph.execute(1).get() == 1
            assert graph.stats().restarts == {}
        return
    with e2e_graphs.launch("napper", actor_max_restarts={"a": 1}, record_profile=True) as graph:
        assert graph.execute(1).get() == 1
        assert graph.stats().restarts == {}
        held = graph.execute(3000)  # the actor naps in it when it is killed
        time.sleep(0.3)
        [actor] = child_pids()
        os.kill(actor, signal.SIGKILL)
        with pytest.raises(cg.ActorDiedError) as raised:
            held.get(timeout=10)
        assert (raised.value.actor, raised.value.restarted) == ("a", True)
        assert graph.execute(2).get(timeout=10) == 2
        assert graph.restarts() == {"a": 1}
        stats = graph.stats()
        assert stats.restarts == {"a": 1}
        assert str(stats).endswith("\nactor 'a' restarted 1 time\n"), str(stats)
    with pytest.raises(cg.LaunchError) as raised:
        e2e_graphs.launch("napper", actor_max_restarts={"b": 1})
    assert str(raised.value) == (
        "cg::LaunchOptions::actor_max_restarts names actor 'b', which graph 'napper' does not have")


def test_a_profile_records_one_execution_in_profile_every():
    with pytest.raises(cg.LaunchError) as raised:
        e2e_graphs.launch("adder", record_profile=True, profile_every=0)
    assert str(raised.value) == (
        "cg::LaunchOptions::profile_every is 0; it must be from 1 (every execution) to 1000000")
    with e2e_graphs.launch("adder", record_profile=True, profile_every=4) as graph:
        assert [graph.execute(i).get() for i in range(8)] == [i + 2 for i in range(8)]
        stats = graph.stats()
        assert stats.profile_every == 4
        assert stats.latency.count == 2  # executions 0 and 4


def test_threads_mode_starts_no_process():
    with e2e_graphs.launch("adder", mode="threads") as graph:
        assert child_pids() == []
        assert graph.execute(40).get() == 42


def test_asyncio_awaits_many_executions_from_one_coroutine():
    async def main():
        with e2e_graphs.launch("napper", max_in_flight=8) as graph:
            ticks = 0
            done = False

            async def ticker():  # runs only while the loop is free
                nonlocal ticks
                while not done:
                    ticks += 1
                    await asyncio.sleep(0.005)

            counting = asyncio.create_task(ticker())
            # Eight in flight at once (one actor naps through them in turn).
            results = await asyncio.gather(*(graph.execute_async(20 + i) for i in range(8)))
            done = True
            await counting
            assert results == [20 + i for i in range(8)]
            assert ticks >= 5, f"the loop ran {ticks} times in ~0.2 s"

    asyncio.run(main())


def test_asyncio_raises_a_task_error_and_teardown_fails_what_is_left():
    async def main():
        graph = e2e_graphs.launch("adder")
        with pytest.raises(cg.TaskError) as raised:
            await graph.execute_async(-3)
        assert raised.value.message == "negative input -3"
        assert await graph.execute_async(3) == 5
        graph.teardown()
        with pytest.raises(cg.ChannelClosedError):
            await graph.execute_async(1)

    asyncio.run(main())


def test_a_tensor_goes_in_and_comes_back_through_dlpack_without_a_copy():
    import numpy  # a declared dependency (python3-numpy, scripts/install-deps): missing fails
    values = numpy.arange(6, dtype=numpy.float32).reshape(2, 3)
    with e2e_graphs.launch("tensors") as graph:
        result = graph.execute(values).get()
        assert (result.shape, result.dtype, result.device) == ((2, 3), "float32", "cpu")
        array = numpy.from_dlpack(result)
        assert array.ctypes.data == result.data_ptr  # the same memory
        assert array.tolist() == (values * 2).tolist()
        del result  # the array keeps the memory alive on its own
        assert array.tolist() == (values * 2).tolist()
        with pytest.raises(TypeError) as raised:
            graph.execute([1.0, 2.0])
        assert str(raised.value) == (
            "graph 'tensors' input #0 takes cg::Tensor (C++); a Python list does not convert to it")


def test_an_input_tensor_made_in_place_is_filled_through_numpy_and_sent_without_a_copy():
    import numpy  # a declared dependency: missing fails, never skips
    with e2e_graphs.launch("tensor_total") as graph:
        made = graph.input_tensor("float32", [4, 1024])
        assert (made.shape, made.dtype, made.device) == ((4, 1024), "float32", "cpu")
        array = numpy.asarray(made)  # the array interface: writable, the same memory
        assert array.ctypes.data == made.data_ptr and array.flags.writeable
        array[:] = numpy.arange(4096, dtype=numpy.float32).reshape(4, 1024)
        with pytest.raises(cg.Error) as raised:
            graph.input_tensor("float32", [3])
        assert str(raised.value) == (
            "input #0 of graph 'tensor_total' already has a tensor from input_tensor() that no "
            "execute() has taken: the next execute() takes it (and one tensor per input waits "
            "at a time)")
        total, where = graph.execute(array).get()  # the array is the tensor's memory
        assert total == float(sum(range(4096)))
        if MODE == "threads":  # the actor read it where numpy wrote it
            assert where == made.data_ptr
        with pytest.raises(TypeError) as raised:
            numpy.asarray(graph.input_tensor("bfloat16", [2]))
        assert str(raised.value) == "numpy has no bfloat16: use DLPack (torch.from_dlpack(t))"
        graph.execute(numpy.zeros(3, dtype=numpy.float32)).get()  # takes that one
        with pytest.raises(ValueError) as raised:
            graph.input_tensor("float128", [3])
        assert str(raised.value) == (
            "no dtype 'float128': one of float16, bfloat16, float32, float64, int8, int32, "
            "int64, uint8, bool")
    with e2e_graphs.launch("points") as graph:
        with pytest.raises(TypeError) as raised:
            graph.input_tensor("float32", [3])
        assert str(raised.value) == "graph 'points' has no cg::Tensor input"
        with pytest.raises(TypeError) as raised:
            graph.input_tensor("float32", [3], input=1)
        assert str(raised.value) == "graph 'points' input #1 takes int (C++), not a tensor"
        with pytest.raises(IndexError) as raised:
            graph.input_tensor("float32", [3], input=2)
        assert str(raised.value) == "graph 'points' has no input #2"


def test_a_plain_struct_is_a_class_of_the_module():
    Point = e2e_graphs.Point
    point = Point(1, 2.5, label="start")
    assert repr(point) == "Point(x=1, y=2.5, label='start')"
    assert point == Point(x=1, y=2.5, label="start")
    assert point != Point(1)
    assert Point() == Point(0, 0.0, "")
    with e2e_graphs.launch("points") as graph:
        moved = graph.execute(point, 3).get()
    assert moved == Point(4, 2.5, "start+3")
    moved.x = 7
    assert moved.x == 7
    with pytest.raises(TypeError) as raised:
        Point(1, z=2)
    assert str(raised.value) == "Point() has no field 'z'"
    with pytest.raises(TypeError) as raised:
        Point("one")
    assert str(raised.value) == "Point.x cannot be a Python str"


def test_dicts_and_optional_values_cross():
    with e2e_graphs.launch("totals") as graph:
        assert graph.execute({"a": 1, "b": 2}, 10).get() == 13
        assert graph.execute({"a": 1, "b": 2}, None).get() == 3
        assert graph.execute({}, 5).get() is None
        with pytest.raises(TypeError):
            graph.execute({"a": "one"}, None)
