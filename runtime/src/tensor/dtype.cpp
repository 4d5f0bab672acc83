// dtype.cpp - names of the tensor element types.
#include <cg/dtype.hpp>

namespace cg {

std::string_view to_string(DType t) noexcept {
  switch (t) {
  case DType::float16:
    return "float16";
  case DType::bfloat16:
    return "bfloat16";
  case DType::float32:
    return "float32";
  case DType::float64:
    return "float64";
  case DType::int8:
    return "int8";
  case DType::int32:
    return "int32";
  case DType::int64:
    return "int64";
  case DType::uint8:
    return "uint8";
  case DType::boolean:
    return "bool";
  }
  return "dtype(invalid)";
}

} // namespace cg
