// graph/runtime_scale_out.hpp - The actors that share no memory with the driver: RuntimeScaleOut.
//
// A part of GraphRuntime::Impl (graph/runtime_state.hpp), apart so that the
// files that reach other hosts (launch_remote.cpp, and teardown.cpp that
// stops them) hold the net/ room's rendezvous, listener and relays in one
// place, and the files that never do need not know them.
#pragma once

#include "actor/segment.hpp"
#include "net/rendezvous.hpp"
#include "net/scale_out.hpp"
#include "net/tcp_setup.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace cg::detail {

// Set up by launch() before any execution and only read after it, until
// teardown stops the server and releases the relays, so no mutex guards it;
// the server, the listener and the relays guard their own state (they serve
// other hosts on threads of their own).
struct RuntimeScaleOut {
  std::vector<bool> local; // per actor: in this segment
  std::uint32_t local_count = 0;
  std::uint32_t remote_count = 0;
  RendezvousServer server;
  // Per actor in a process of its own, the constructor arguments launch()
  // was given for it: what the rendezvous answers to its ARGS.
  std::map<std::string, std::vector<std::byte>> remote_constructor_args;
  // CommunicatorKind::nccl: the unique id of each communicator group (in the
  // segment, and served to other hosts by the rendezvous).
  std::vector<NcclIdBytes> nccl_ids;
  // Per actor: the NCCL_HOSTID its process is started with, "" for none
  // (LaunchOptions::nccl_ranks_share_gpus; graph/launch.hpp).
  std::vector<std::string> nccl_host_ids;
  TcpChannelListener listener;
  // Owned apart so that teardown can release their channel ends (and the
  // overflow buffers those map) with the rest of the graph's memory.
  std::unique_ptr<Relays> relays = std::make_unique<Relays>();
  HostTransport host_transport = HostTransport::tcp; // what carries the streams between hosts
  Participants participants;
  std::vector<std::string> transports; // per channel: "shm", "tcp" or "ucx"
};

} // namespace cg::detail
