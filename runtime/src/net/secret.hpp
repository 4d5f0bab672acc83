// net/secret.hpp - the launch's secret: what every peer of a graph on several
// hosts proves it knows before anything else is said.
//
// Each launch whose actors live in other processes that reach it over TCP
// makes a fresh 32-byte secret (libsodium's randombytes). It travels to the
// actor processes and never through a command line, a log or an error:
//   - processes the driver starts itself (TCP forced on one host):
//     CG_SECRET in their environment;
//   - LaunchOptions::host_commands (ssh and the like): written to the
//     command's standard input, which the actor process reads when started
//     with CG_SECRET=stdin;
//   - processes a launcher starts (mpirun, srun), and the driver under it:
//     CG_SECRET in the environment the launcher passes on (the recipes cgc
//     writes make one when it is unset and pass it with `mpirun -x` and
//     `srun --export=ALL`), or CG_SECRET_FILE, the path of a file holding
//     it that only its owner can read or write (mode 0600 or stricter).
// Peers prove it by challenge and response: each side sends a fresh random
// nonce, and answers the other's with HMAC-SHA-256 (libsodium) over both
// nonces and what the connection is for, so a recorded handshake replayed
// on a new connection fails (the nonce it answers is not the new one). What
// the connection then carries is authenticated under keys derived from the
// secret and both nonces (net/frame_auth.hpp).
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace cg::detail {

inline constexpr const char* secret_variable = "CG_SECRET";
inline constexpr const char* secret_file_variable = "CG_SECRET_FILE";

class Secret {
public:
  static constexpr std::size_t bytes = 32;

  // A fresh random secret.
  static Secret generate();
  // From 64 hexadecimal digits; nullopt otherwise.
  static std::optional<Secret> from_hex(std::string_view hex);
  // An actor process's (or a driver's under a launcher): CG_SECRET, or
  // CG_SECRET_FILE, or (CG_SECRET=stdin) a line of standard input. nullopt
  // with `why` saying what is missing or wrong (never the secret itself).
  static std::optional<Secret> from_environment(std::string& why);

  Secret(const Secret&) = default;
  Secret& operator=(const Secret&) = default;
  ~Secret();

  // The secret in hexadecimal, to hand to a child process (never to print).
  std::string hex() const;
  // HMAC-SHA-256 of `message` under the secret, in hexadecimal.
  std::string prove(std::string_view message) const;
  // Whether `proof` is prove(message), compared in constant time.
  bool verify(std::string_view message, std::string_view proof) const;
  // A key for `purpose` (keyed BLAKE2b of it under the secret): one that only
  // holders of the secret can make, and that says nothing of the secret.
  std::array<unsigned char, bytes> derive(std::string_view purpose) const;

private:
  Secret() = default;
  std::array<unsigned char, bytes> key_{};
};

// 16 random bytes in hexadecimal: one side's challenge.
std::string fresh_nonce();

} // namespace cg::detail
