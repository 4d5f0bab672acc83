// cg/detail/graph_records.hpp - The records a graph function leaves for cgc.
//
// The contract between the graph language and the compiler: cg/builder.hpp
// writes these records while Clang's constant evaluator runs a CG_GRAPH
// function, and cgc (compiler/frontend/GraphDecoder.cpp) reads the evaluated
// cg::detail::Encoded back field by field. Both include this header, so a
// record kind, a collective kind or a field added here is seen by both; the
// decoder static_asserts the field order it relies on.
//
// Plain data only: the compiler includes it without the rest of the runtime.
#pragma once

#include <cg/device.hpp>
#include <cg/reduce_op.hpp>
#include <cg/transport.hpp>

#include <array>
#include <cstddef>

namespace cg::detail {

// Identity tags: their addresses name a type or a method in the records.
template <class T> inline constexpr char type_tag = 0;
template <auto Method> inline constexpr char method_tag = 0;

enum class RecordKind : int {
  actor = 1,      // tag = type_tag<Class>, text = instance name, c = 1 when
                  // Class cannot be built without arguments and none are given;
                  // followed by a `constant` record per constructor argument
  input = 2,      // a = value id, b = input position, tag = type_tag<T>
  task = 3,       // a = actor index, b = first result value id, c = results
                  // when a tuple is unpacked (else 0), tag = method_tag<M>;
                  // followed by an `argument` or `constant` record per parameter
  argument = 4,   // a = value id
  output = 5,     // a = value id
  constant = 6,   // tag = type_tag<T>; integer, floating or text holds the value
  transport = 7,  // a = value id, b = TensorTransport (v.with_tensor_transport)
  collective = 8, // a = CollectiveKind, b = ReduceOp (-1 for allgather),
                  // c = ranks, tag = type_tag<T>; followed by c `rank` records
  rank = 9,       // a = the rank's input value id, b = its result value id
  cost = 10,      // tag = method_tag<M>, floating = the estimated cost (g.cost)
  host = 11,      // a = actor index, b = logical host index (actor.host(i))
  gpus = 12,      // a = actor index, b = GPUs (a.gpus(n))
};

// The `b` of a transport record made by with_tensor_transport(Device): beyond
// TensorTransport's values; c = DeviceKind, integer = the device index.
inline constexpr int kDeviceTransport = 16;
static_assert(kDeviceTransport > static_cast<int>(TensorTransport::cuda_ipc));

enum class CollectiveKind : int { allreduce = 0, allgather = 1, reducescatter = 2 };

/// One thing the graph function did; fields by kind above. Trivial (no
/// default member initializers): an array of them can be value-initialized
/// without running a constructor per element, so cgc's probe can offer a large
/// one that the evaluator materializes only as far as it is written.
struct Record {
  RecordKind kind;
  int a;
  int b;
  int c;
  const void* tag;
  long long integer;
  double floating;
  int text; // offset into the text pool (actor names, string constants)
  int text_size;
  unsigned line;
  unsigned column;
  const char* file; // the file of `line` (a helper may sit in another header)
};

/// What cgc's probe evaluates: the records a graph made and its text pool.
template <std::size_t Records, std::size_t Text> struct Encoded {
  std::size_t record_count; // how many the graph made, stored or not
  std::size_t text_size;
  std::array<Record, Records> records;
  std::array<char, Text> text;
};

} // namespace cg::detail
