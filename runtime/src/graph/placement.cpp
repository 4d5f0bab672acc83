// placement.cpp - Reading a placement file: "<actor> <host>" per line.
#include <cg/errors.hpp>
#include <cg/placement.hpp>

#include <charconv>
#include <fstream>
#include <sstream>

namespace cg {

std::vector<std::uint32_t> actor_hosts(const detail::GraphSpec& spec, const std::string& path) {
  std::vector<std::uint32_t> hosts;
  for (const detail::ActorSpec& actor : spec.actors)
    hosts.push_back(actor.host);
  if (path.empty())
    return hosts;
  std::ifstream file(path, std::ios::binary);
  if (!file)
    throw LaunchError("placement file '" + path + "' cannot be read");
  // Read at most kMaxPlacementBytes (+1 to tell): /dev/zero or a wrong path
  // to a huge file must not make launch() read forever.
  std::string text(kMaxPlacementBytes + 1, '\0');
  file.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(file.gcount()));
  if (text.size() > kMaxPlacementBytes)
    throw LaunchError("placement file '" + path + "' is larger than " +
                      std::to_string(kMaxPlacementBytes) +
                      " bytes; it should hold one '<actor> <host>' line per actor");
  std::istringstream in(text);
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
