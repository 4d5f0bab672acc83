// cg/placement.hpp - which host each actor of a graph runs on, and how channels travel.
//
// An actor's logical host is 0 (the driver's) unless the graph says
// `g.actor<C>("b").host(1)` or a placement file given at launch says
// otherwise:
//
//   # pipeline.placement: "<actor> <host>" per line; '#' starts a comment
//   b 1
//   c 1
//
//   cg::LaunchOptions options;
//   options.placement = "pipeline.placement";   // or CG_PLACEMENT=pipeline.placement
//   auto graph = cg::launch<&pipeline>(options);
//
// Actors on host 0 are the driver's processes (or threads) and share its
// memory. The actors of each other host run in one process per host (or per
// actor, when a launcher starts them), which finds the driver through the
// rendezvous (CG_RENDEZVOUS=host:port, net/rendezvous.hpp). A channel between
// processes that share no memory is a TCP stream (net/tcp_channel.hpp);
// channels within one process group stay in shared memory. With
// `cgc --transport=tcp`, LaunchOptions::tcp_everywhere or CG_TRANSPORT=tcp,
// every actor is a process of its own and every channel between processes is
// TCP, on one host too. When the driver itself was started by mpirun or srun
// (os/launcher.hpp finds a rank), it starts no actor: the launcher
// does, and every channel is TCP.
//
// Errors: a placement file that cannot be read or is larger than
// kMaxPlacementBytes, names an actor the graph does not have, gives one actor
// twice or a host that is not a number 0..65535 is a cg::LaunchError naming
// the file and line, e.g.
//   "placement file 'p.txt' line 2: graph 'pipeline' has no actor 'x' (its actors: a, b, c)"
#pragma once

#include <cg/detail/graph_spec.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cg {

/// The most a placement file may hold (a line per actor fits many thousands).
inline constexpr std::size_t kMaxPlacementBytes = 1 << 20;

/// The environment variables read at launch when LaunchOptions leaves them unset.
inline constexpr const char* placement_variable = "CG_PLACEMENT";
inline constexpr const char* transport_variable = "CG_TRANSPORT";

/// The logical host of every actor of `spec`: the graph's actor.host(i),
/// replaced for the actors a placement file names. `path` empty: no file.
/// Throws LaunchError (see above).
std::vector<std::uint32_t> actor_hosts(const detail::GraphSpec& spec, const std::string& path);

} // namespace cg
