//===- Graph.cpp - Names of the graph IR's enumerations ------------------===//
#include "ir/Graph.h"
#include "support/InternalError.h"

#include <stdexcept>
#include <string>

namespace cg::ir {

std::string_view toString(Transport transport) {
  switch (transport) {
  case Transport::Shm:
    return "shm";
  case Transport::Nccl:
    return "nccl";
  case Transport::Cpu:
    return "cpu";
  case Transport::Cuda:
    return "cuda";
  case Transport::CudaIpc:
    return "cuda_ipc";
  }
  internalError("no transport numbered " + std::to_string(static_cast<int>(transport)));
}

std::string_view toString(Collective::Kind kind) {
  switch (kind) {
  case Collective::Kind::AllReduce:
    return "allreduce";
  case Collective::Kind::AllGather:
    return "allgather";
  case Collective::Kind::ReduceScatter:
    return "reducescatter";
  }
  internalError("no collective kind numbered " + std::to_string(static_cast<int>(kind)));
}

} // namespace cg::ir
