//===- AggregateCodec.h - A serializer cgc generates for a struct -*- C++ -*-===//
//
// The frontend decides which user aggregates cross an actor boundary; codegen
// writes a cg::Codec specialization for each from its fields, in order.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

namespace cg::ir {

struct AggregateCodec {
  struct Field {
    std::string name;
    std::string type; // as generated code spells it
  };
  std::string type; // fully qualified
  std::vector<Field> fields;
};

} // namespace cg::ir
