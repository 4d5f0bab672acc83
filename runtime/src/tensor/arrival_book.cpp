// arrival_book.cpp - tensors still arriving, by storage (see tensor/arrival_book.hpp).
#include "tensor/arrival_book.hpp"

#include <algorithm>

namespace cg::detail {

void ArrivalBook::expect(const void* storage, Arrival arrival) {
  pending_.push_back({storage, arrival});
}

std::vector<Arrival> ArrivalBook::take(const void* storage) {
  std::vector<Arrival> due;
  for (const Pending& p : pending_)
    if (p.storage == storage)
      due.push_back(p.arrival);
  if (!due.empty())
    std::erase_if(pending_, [storage](const Pending& p) { return p.storage == storage; });
  return due;
}

std::vector<Arrival> ArrivalBook::take_all() {
  std::vector<Arrival> due;
  due.reserve(pending_.size());
  for (const Pending& p : pending_)
    due.push_back(p.arrival);
  pending_.clear();
  return due;
}

} // namespace cg::detail
