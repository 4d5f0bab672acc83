// placement.cpp - Reading a placement file: "<actor> <host>" per line.
#include <cg/errors.hpp>
#include <cg/placement.hpp>

#include "graph/graph_path.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <sstream>

namespace cg {
namespace {

// The placement file's text. Opened without blocking and read only if it is
// a regular file: a FIFO without a writer would block the open, and one
// whose writer never closes (or a device) the reads, and launch() with them.
// At most kMaxPlacementBytes (+1 to tell): a wrong path to a huge file must
// not make launch() read for long either.
std::string read_placement(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    throw LaunchError("placement file '" + path + "' cannot be read");
  struct stat status {};
  if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
    ::close(fd);
    throw LaunchError("placement file '" + path +
                      "' is not a regular file (a directory, a pipe or a device); it should hold "
                      "one '<actor> <host>' line per actor");
  }
  std::string text(kMaxPlacementBytes + 1, '\0');
  std::size_t size = 0;
  while (size < text.size()) {
    const ssize_t n = ::read(fd, text.data() + size, text.size() - size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    size += static_cast<std::size_t>(n);
  }
  ::close(fd);
  text.resize(size);
  if (text.size() > kMaxPlacementBytes)
    throw LaunchError("placement file '" + path + "' is larger than " +
                      std::to_string(kMaxPlacementBytes) +
                      " bytes; it should hold one '<actor> <host>' line per actor");
  return text;
}

} // namespace

std::vector<std::uint32_t> actor_hosts(const detail::GraphSpec& spec,
                                       const std::string& path_given) {
  std::vector<std::uint32_t> hosts;
  for (const detail::ActorSpec& actor : spec.actors)
    hosts.push_back(actor.host);
  if (path_given.empty())
    return hosts;
  // A program of several graphs places each from a file of its own.
  const std::string path = detail::with_graph_name(path_given, spec.name);
  std::istringstream in(read_placement(path));
  std::vector<bool> placed(spec.actors.size(), false);
  std::string line;
  for (unsigned number = 1; std::getline(in, line); ++number) {
    const std::string where = "placement file '" + path + "' line " + std::to_string(number) + ": ";
    if (auto hash = line.find('#'); hash != std::string::npos)
      line.erase(hash);
    std::istringstream fields(line);
    std::string name, host, extra;
    if (!(fields >> name))
      continue; // blank or a comment
    if (!(fields >> host) || (fields >> extra))
      throw LaunchError(where + "expected '<actor> <host>', got '" + line + "'");
    std::uint32_t index = 0;
    auto [end, ec] = std::from_chars(host.data(), host.data() + host.size(), index);
    if (ec != std::errc() || end != host.data() + host.size() || index > 65535)
      throw LaunchError(where + "host '" + host + "' is not a number from 0 to 65535");
    std::size_t actor = 0;
    while (actor < spec.actors.size() && name != spec.actors[actor].name)
      ++actor;
    if (actor == spec.actors.size()) {
      std::string known;
      for (const detail::ActorSpec& a : spec.actors)
        known += (known.empty() ? "" : ", ") + std::string(a.name);
      throw LaunchError(where + "graph '" + spec.name + "' has no actor '" + name +
                        "' (its actors: " + known + ")");
    }
    if (placed[actor])
      throw LaunchError(where + "actor '" + name + "' is placed twice");
    placed[actor] = true;
    hosts[actor] = index;
  }
  return hosts;
}

} // namespace cg
