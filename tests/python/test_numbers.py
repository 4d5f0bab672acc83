"""numpy arrays into std::vector inputs (cg/python.hpp): an array, or any
one-dimensional contiguous buffer, of the vector's element type is copied
once out of its memory, never read element by element; the numbers arrive
bit for bit. Other arrays convert element by element, as any sequence does.
ctest runs this file in both modes (CG_MODE)."""

import array

import pytest

import python_graphs


class NoElements:
    """A mixin for numpy arrays that refuse to be read element by element."""

    def __getitem__(self, index):
        raise AssertionError("read element by element")

    def __iter__(self):
        raise AssertionError("read element by element")


def test_a_numpy_float32_array_enters_a_vector_of_float_and_comes_back_exactly():
    import numpy  # a declared dependency (python3-numpy): missing fails, never skips
    values = numpy.array([0.1, -2.5, 3.4028235e38, 1e-45, -0.0, numpy.inf, 7], numpy.float32)
    with python_graphs.launch("floats") as graph:
        back = graph.execute(values).get()
        assert numpy.array(back, numpy.float32).tobytes() == values.tobytes()
        many = numpy.random.default_rng(7).standard_normal(1 << 20).astype(numpy.float32)
        assert numpy.array(graph.execute(many).get(), numpy.float32).tobytes() == many.tobytes()


def test_the_array_is_read_through_its_buffer_not_element_by_element():
    import numpy  # a declared dependency: missing fails, never skips
    Refusing = type("Refusing", (NoElements, numpy.ndarray), {})
    values = numpy.arange(5, dtype=numpy.float32).view(Refusing)
    with python_graphs.launch("floats") as graph:
        assert graph.execute(values).get() == [0.0, 1.0, 2.0, 3.0, 4.0]
    with python_graphs.launch("ints") as graph:
        ints = numpy.array([-(1 << 62), 0, 1 << 62], numpy.int64).view(Refusing)
        assert graph.execute(ints).get() == [-(1 << 62), 0, 1 << 62]


def test_other_arrays_and_buffers_convert_too():
    import numpy  # a declared dependency: missing fails, never skips
    with python_graphs.launch("floats") as graph:
        strided = numpy.arange(10, dtype=numpy.float32)[::3]  # not contiguous
        assert graph.execute(strided).get() == [0.0, 3.0, 6.0, 9.0]
        doubles = numpy.array([0.5, 1.5], numpy.float64)  # another element type
        assert graph.execute(doubles).get() == [0.5, 1.5]
        assert graph.execute(array.array("f", [2.5, -1.0])).get() == [2.5, -1.0]
        assert graph.execute(memoryview(numpy.ones(2, numpy.float32))).get() == [1.0, 1.0]
        assert graph.execute(numpy.zeros(0, numpy.float32)).get() == []
        with pytest.raises(TypeError) as raised:
            graph.execute(numpy.array(["a"]))
        assert str(raised.value) == (
            "graph 'floats' input #0 takes std::vector<float> (C++); a Python ndarray does not "
            "convert to it")
