// runtime_memfds.hpp - the runtime's shared memory that a process still maps
// or holds open, as /proc shows it.
//
// Every segment and overflow buffer the runtime makes is an anonymous memfd
// named "cg.<something>" (graph segments "cg.<graph>", overflow buffers
// "cg.overflow"): nothing of it ever appears in /dev/shm, so a leak shows only
// in /proc/<pid>/maps (a mapping of "/memfd:cg.... (deleted)") and in
// /proc/<pid>/fd (a descriptor linking there). The kernel frees a memfd's pages
// with its last mapping and descriptor, so "no process maps or holds it" is
// "its memory is released".
#pragma once

#include <dirent.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <span>
#include <sstream>
#include <string>
#include <vector>

namespace cg_test {

/// What the runtime names its memfds: every name starts with this.
inline constexpr const char* kRuntimeMemfdPrefix = "cg.";

namespace detail {

inline std::string proc_dir(pid_t pid) {
  return pid == 0 ? std::string("/proc/self") : "/proc/" + std::to_string(pid);
}

/// True for a /proc path of a memfd whose name starts with `prefix`.
inline bool names_memfd(const std::string& path, const std::string& prefix) {
  return path.rfind("/memfd:" + prefix, 0) == 0;
}

/// One line of /proc/<pid>/maps: its address range, inode and path (if any).
struct MapsLine {
  std::string range;
  ino_t inode = 0;
  std::string path;
};

inline std::vector<MapsLine> maps_of(pid_t pid) {
  std::vector<MapsLine> lines;
  std::ifstream maps(proc_dir(pid) + "/maps");
  for (std::string text; std::getline(maps, text);) {
    std::istringstream fields(text);
    MapsLine line;
    std::string perms, offset, device;
    fields >> line.range >> perms >> offset >> device >> line.inode;
    std::getline(fields >> std::ws, line.path);
    lines.push_back(line);
  }
  return lines;
}

/// Descriptor numbers of /proc/<pid>/fd, with what each links to and its inode.
struct Descriptor {
  int fd = -1;
  std::string target;
  ino_t inode = 0;
};

inline std::vector<Descriptor> descriptors_of(pid_t pid) {
  std::vector<Descriptor> descriptors;
  const std::string dir = proc_dir(pid) + "/fd";
  DIR* fds = opendir(dir.c_str());
  if (fds == nullptr)
    return descriptors; // gone, or not ours to look into
  while (dirent* entry = readdir(fds)) {
    if (entry->d_name[0] == '.')
      continue;
    const std::string link = dir + "/" + entry->d_name;
    char target[4096];
    const ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
    if (n < 0)
      continue; // closed while we looked (the DIR's own descriptor among them)
    struct stat st {};
    if (::stat(link.c_str(), &st) != 0)
      continue;
    descriptors.push_back(
        {std::atoi(entry->d_name), std::string(target, static_cast<std::size_t>(n)), st.st_ino});
  }
  closedir(fds);
  return descriptors;
}

} // namespace detail

/// The mappings of the runtime's memfds in process `pid` (0: this one), one
/// entry per line of its maps: "<range> /memfd:cg.<name> (deleted)".
inline std::vector<std::string> memfd_mappings(pid_t pid = 0,
                                               const std::string& prefix = kRuntimeMemfdPrefix) {
  std::vector<std::string> found;
  for (const detail::MapsLine& line : detail::maps_of(pid))
    if (detail::names_memfd(line.path, prefix))
      found.push_back(line.range + " " + line.path);
  return found;
}

/// The descriptors of the runtime's memfds that process `pid` (0: this one)
/// holds open: "fd <n> -> /memfd:cg.<name> (deleted)".
inline std::vector<std::string> memfd_descriptors(pid_t pid = 0,
                                                  const std::string& prefix = kRuntimeMemfdPrefix) {
  std::vector<std::string> found;
  for (const detail::Descriptor& d : detail::descriptors_of(pid))
    if (detail::names_memfd(d.target, prefix))
      found.push_back("fd " + std::to_string(d.fd) + " -> " + d.target);
  return found;
}

/// This process's mapping of graph `graph`'s segment (the memfd the runtime
/// names "cg.<graph>"), empty if there is none: for tests that write into a
/// live segment as a stray write would.
inline std::span<std::byte> graph_segment_mapping(const std::string& graph) {
  for (const detail::MapsLine& line : detail::maps_of(0)) {
    if (line.path != "/memfd:" + std::string(kRuntimeMemfdPrefix) + graph + " (deleted)")
      continue;
    const std::uintptr_t start =
        std::stoull(line.range.substr(0, line.range.find('-')), nullptr, 16);
    const std::uintptr_t end =
        std::stoull(line.range.substr(line.range.find('-') + 1), nullptr, 16);
    return {reinterpret_cast<std::byte*>(start), end - start};
  }
  return {};
}

/// The inodes of the runtime's memfds that process `pid` maps or holds open:
/// what identifies them in any other process.
inline std::set<ino_t> memfd_inodes(pid_t pid, const std::string& prefix = kRuntimeMemfdPrefix) {
  std::set<ino_t> inodes;
  for (const detail::MapsLine& line : detail::maps_of(pid))
    if (detail::names_memfd(line.path, prefix))
      inodes.insert(line.inode);
  for (const detail::Descriptor& d : detail::descriptors_of(pid))
    if (detail::names_memfd(d.target, prefix))
      inodes.insert(d.inode);
  return inodes;
}

/// Every process we may look into that still maps or holds one of `inodes`:
/// "pid <p> maps <path>" or "pid <p> holds fd <n> -> <path>". Empty once the
/// kernel has freed them all.
inline std::vector<std::string> holders_of(const std::set<ino_t>& inodes) {
  std::vector<std::string> holders;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos)
      continue;
    const pid_t pid = std::stoi(name);
    std::set<std::string> mapped; // one entry per memfd, however many lines map it
    for (const detail::MapsLine& line : detail::maps_of(pid))
      if (inodes.count(line.inode) != 0 && line.path.rfind("/memfd:", 0) == 0)
        mapped.insert(line.path);
    for (const std::string& path : mapped)
      holders.push_back("pid " + name + " maps " + path);
    for (const detail::Descriptor& d : detail::descriptors_of(pid))
      if (inodes.count(d.inode) != 0 && d.target.rfind("/memfd:", 0) == 0)
        holders.push_back("pid " + name + " holds fd " + std::to_string(d.fd) + " -> " + d.target);
  }
  return holders;
}

} // namespace cg_test
