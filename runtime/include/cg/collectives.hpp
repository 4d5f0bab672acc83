// cg/collectives.hpp - Collectives in a graph: allreduce, allgather, reducescatter.
//
//   CG_GRAPH void data_parallel(cg::GraphBuilder& g) {
//     auto w0 = g.actor<Worker>("w0").gpus(1);
//     auto w1 = g.actor<Worker>("w1").gpus(1);
//     auto [x0, x1] = g.input<cg::Tensor, cg::Tensor>();
//     auto sums = cg::allreduce(g, {w0.bind<&Worker::grad>(x0), w1.bind<&Worker::grad>(x1)},
//                               cg::ReduceOp::sum);
//     g.output(sums[0], sums[1]);
//   }
//
// A collective has one rank per value, each run by the actor that produced
// it, and one result value per rank, in rank order. At run time it goes
// through the actors' communicators (cg/communicator.hpp); cgc puts it in one
// synchronous group of the schedule.
#pragma once

#include <cg/builder.hpp>

#include <array>
#include <cstddef>
#include <source_location>
#include <utility>
#include <vector>

namespace cg {

namespace detail {

// The collectives' access to the builder and to Value's constructor.
struct Collectives {
  template <class T, std::size_t N>
  static constexpr std::array<Value<T>, N> over(GraphBuilder& g, CollectiveKind kind, int op,
                                                const Value<T> (&ranks)[N],
                                                std::source_location loc) {
    int first = g.add_collective(kind, op, ranks, N, loc);
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return std::array<Value<T>, N>{Value<T>(&g, first + static_cast<int>(I))...};
    }(std::make_index_sequence<N>{});
  }
  template <class T>
  static constexpr std::vector<Value<T>> over(GraphBuilder& g, CollectiveKind kind, int op,
                                              const std::vector<Value<T>>& ranks,
                                              std::source_location loc) {
    int first = g.add_collective(kind, op, ranks.data(), ranks.size(), loc);
    std::vector<Value<T>> results;
    for (std::size_t i = 0; i < ranks.size(); ++i)
      results.push_back(Value<T>(&g, first + static_cast<int>(i)));
    return results;
  }
};

} // namespace detail

/// All ranks reduce their values with `op`; every rank gets the result.
/// `auto sums = cg::allreduce(g, {x0, x1, x2}, cg::ReduceOp::sum);` gives one
/// value per rank (a std::array; a std::vector for a std::vector of ranks),
/// rank r run by the actor that produced the r-th value.
template <class T, std::size_t N>
constexpr std::array<Value<T>, N>
allreduce(GraphBuilder& g, const Value<T> (&ranks)[N], ReduceOp op,
          std::source_location loc = std::source_location::current()) {
  return detail::Collectives::over(g, detail::CollectiveKind::allreduce, static_cast<int>(op),
                                   ranks, loc);
}
template <class T>
constexpr std::vector<Value<T>>
allreduce(GraphBuilder& g, const std::vector<Value<T>>& ranks, ReduceOp op,
          std::source_location loc = std::source_location::current()) {
  return detail::Collectives::over(g, detail::CollectiveKind::allreduce, static_cast<int>(op),
                                   ranks, loc);
}

/// Every rank gets all ranks' values, concatenated in rank order.
template <class T, std::size_t N>
constexpr std::array<Value<T>, N>
allgather(GraphBuilder& g, const Value<T> (&ranks)[N],
          std::source_location loc = std::source_location::current()) {
  return detail::Collectives::over(g, detail::CollectiveKind::allgather, -1, ranks, loc);
}
template <class T>
constexpr std::vector<Value<T>>
allgather(GraphBuilder& g, const std::vector<Value<T>>& ranks,
          std::source_location loc = std::source_location::current()) {
  return detail::Collectives::over(g, detail::CollectiveKind::allgather, -1, ranks, loc);
}

/// The ranks' values reduced with `op`, rank r getting the r-th part.
template <class T, std::size_t N>
constexpr std::array<Value<T>, N>
reducescatter(GraphBuilder& g, const Value<T> (&ranks)[N], ReduceOp op,
              std::source_location loc = std::source_location::current()) {
  return detail::Collectives::over(g, detail::CollectiveKind::reducescatter, static_cast<int>(op),
                                   ranks, loc);
}
template <class T>
constexpr std::vector<Value<T>>
reducescatter(GraphBuilder& g, const std::vector<Value<T>>& ranks, ReduceOp op,
              std::source_location loc = std::source_location::current()) {
  return detail::Collectives::over(g, detail::CollectiveKind::reducescatter, static_cast<int>(op),
                                   ranks, loc);
}

} // namespace cg
