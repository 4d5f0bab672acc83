
  /// Input #I of the next execute() (#{first} unless told: the graph's cg::Tensor
  /// inputs are #{list}) as a host tensor made where the graph carries it, in its
  /// channel's shared memory: fill it, then pass it to execute(), which hands it
  /// over without copying its elements. The next execute() takes it, whatever it
  /// is given; the memory is the graph's from then on (see
  /// cg::detail::GraphRuntime::input_tensor).
  template <std::size_t I = {first}>
  cg::Tensor input_tensor(cg::DType dtype, std::vector<std::int64_t> shape) {{
    static_assert({checks},
                  "input_tensor<I>(): input #I of graph '{graph}' is not a cg::Tensor");
    return runtime_->input_tensor(I, dtype, std::move(shape));
  }}
