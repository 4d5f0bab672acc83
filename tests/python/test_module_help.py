"""What a graph module says of itself (cg/python.hpp): docstrings with each
graph's signature in C++ types, and stats() as in C++."""

import pytest

import cg
import e2e_graphs


def test_a_graph_class_says_its_signature_in_its_docstring():
    assert e2e_graphs.vectors.__doc__ == (
        "vectors(**options): launches graph 'vectors' of graphs.cg.cpp:202 (options: those of "
        "launch())\n\n"
        "execute(int, std::vector<double>) -> vectors_ref\n"
        "vectors_ref.get(timeout=None) -> tuple[std::vector<double>, int]\n\n"
        "Types as C++ spells them.")
    assert e2e_graphs.adder.execute.__doc__ == (
        "execute(int) -> adder_ref\n\nSubmits one execution; .get() on the result waits for it")
    assert e2e_graphs.adder_ref.get.__doc__ == (
        "get(timeout=None) -> int\n\nThe result, waiting up to `timeout` seconds (None: the "
        "graph's get_timeout; math.inf: no limit); Ctrl-C interrupts the wait")
    assert e2e_graphs.adder.execute_async.__doc__.startswith(
        "execute_async(int) -> asyncio.Future[int]\n\n")


def test_stats_are_the_cpp_driver_s_by_field():
    with e2e_graphs.launch("adder", record_profile=True) as graph:
        for i in range(5):
            assert graph.execute(i).get() == i + 2
        stats = graph.stats()
    assert stats.graph == "adder"
    assert [(t.task, t.actor, t.loc) for t in stats.tasks] == [
        ("a.add_one", "a", "graphs.cg.cpp:168"), ("b.add_one", "b", "graphs.cg.cpp:168")]
    for task in stats.tasks:
        assert (task.compute.count, task.read_wait.count) == (5, 5)
        assert 0 < task.compute.p50_us <= task.compute.p90_us <= task.compute.p99_us
    assert (stats.latency.count, stats.dropped_events) == (5, 0)
    table = str(stats).splitlines()  # cg::format_stats()
    assert table[0] == "graph 'adder'"
    assert table[1].split() == ["task", "what", "count", "p50", "us", "p90", "us", "p99", "us",
                                "bound", "at"]
    assert [line.split()[:3] for line in table[2:]] == [
        ["a.add_one", "compute", "5"], ["a.add_one", "read", "wait"],
        ["b.add_one", "compute", "5"], ["b.add_one", "read", "wait"],
        ["execute", "->", "result"]]


def test_stats_without_a_profile_say_how_to_record_one():
    with e2e_graphs.launch("adder") as graph:
        with pytest.raises(cg.Error) as raised:
            graph.stats()
    assert str(raised.value) == (
        "graph 'adder' records no profile: launch it with cg::LaunchOptions::profile or the "
        "environment variable CG_PROFILE set to a file (or LaunchOptions::record_profile)")
