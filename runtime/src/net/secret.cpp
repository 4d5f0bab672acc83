// secret.cpp - the launch's secret, with libsodium (randombytes, HMAC-SHA-256, BLAKE2b).
#include "net/secret.hpp"

#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <stdexcept>

namespace cg::detail {

namespace {

void ensure_sodium() {
  static const bool ready = sodium_init() >= 0;
  if (!ready)
    throw std::runtime_error("libsodium failed to initialize");
}

std::string to_hex(const unsigned char* data, std::size_t size) {
  std::string out(size * 2 + 1, '\0');
  sodium_bin2hex(out.data(), out.size(), data, size);
  out.pop_back();
  return out;
}

// A line of hexadecimal, without the line's end and surrounding blanks.
std::string trimmed(std::string text) {
  const auto blank = [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; };
  while (!text.empty() && blank(text.back()))
    text.pop_back();
  std::size_t first = 0;
  while (first < text.size() && blank(text[first]))
    ++first;
  return text.substr(first);
}

} // namespace

Secret::~Secret() { sodium_memzero(key_.data(), key_.size()); }

Secret Secret::generate() {
  ensure_sodium();
  Secret secret;
  randombytes_buf(secret.key_.data(), secret.key_.size());
  return secret;
}

std::optional<Secret> Secret::from_hex(std::string_view hex) {
  ensure_sodium();
  if (hex.size() != 2 * bytes)
    return std::nullopt;
  Secret secret;
  std::size_t decoded = 0;
  if (sodium_hex2bin(secret.key_.data(), secret.key_.size(), hex.data(), hex.size(), nullptr,
                     &decoded, nullptr) != 0 ||
      decoded != bytes)
    return std::nullopt;
  return secret;
}

std::optional<Secret> Secret::from_environment(std::string& why) {
  const char* value = std::getenv(secret_variable);
  const char* file = std::getenv(secret_file_variable);
  std::string text;
  if (value != nullptr && std::string_view(value) == "stdin") {
    if (!std::getline(std::cin, text)) {
      why = std::string(secret_variable) + "=stdin, but standard input ended before a line";
      return std::nullopt;
    }
  } else if (value != nullptr) {
    text = value;
  } else if (file != nullptr) {
    struct stat status {};
    if (::stat(file, &status) != 0 || !S_ISREG(status.st_mode)) {
      why = std::string(secret_file_variable) + " names '" + file + "', which is not a file";
      return std::nullopt;
    }
    if ((status.st_mode & (S_IRWXG | S_IRWXO)) != 0 || status.st_uid != ::getuid()) {
      why = std::string(secret_file_variable) + " names '" + file +
            "', which others than its owner (you) may read or write: chmod 600 it";
      return std::nullopt;
    }
    std::ifstream in(file);
    std::getline(in, text);
  } else {
    why = std::string("neither ") + secret_variable + " nor " + secret_file_variable +
          " is set: this process cannot prove it belongs to the launch (see net/secret.hpp, or "
          "the README on several hosts)";
    return std::nullopt;
  }
  std::optional<Secret> secret = from_hex(trimmed(text));
  if (!secret)
    why = std::string("the launch's secret (") +
          (file && !value ? secret_file_variable : secret_variable) + ") is not " +
          std::to_string(2 * bytes) + " hexadecimal digits";
  return secret;
}

std::string Secret::hex() const { return to_hex(key_.data(), key_.size()); }

std::string Secret::prove(std::string_view message) const {
  unsigned char mac[crypto_auth_hmacsha256_BYTES];
  crypto_auth_hmacsha256(mac, reinterpret_cast<const unsigned char*>(message.data()),
                         message.size(), key_.data());
  return to_hex(mac, sizeof mac);
}

bool Secret::verify(std::string_view message, std::string_view proof) const {
  unsigned char mac[crypto_auth_hmacsha256_BYTES];
  std::size_t decoded = 0;
  if (proof.size() != 2 * sizeof mac ||
      sodium_hex2bin(mac, sizeof mac, proof.data(), proof.size(), nullptr, &decoded, nullptr) !=
          0 ||
      decoded != sizeof mac)
    return false;
  return crypto_auth_hmacsha256_verify(mac, reinterpret_cast<const unsigned char*>(message.data()),
                                       message.size(), key_.data()) == 0;
}

std::array<unsigned char, Secret::bytes> Secret::derive(std::string_view purpose) const {
  static_assert(bytes >= crypto_generichash_KEYBYTES_MIN && bytes <= crypto_generichash_BYTES_MAX);
  std::array<unsigned char, bytes> key{};
  crypto_generichash(key.data(), key.size(), reinterpret_cast<const unsigned char*>(purpose.data()),
                     purpose.size(), key_.data(), key_.size());
  return key;
}

std::string fresh_nonce() {
  ensure_sodium();
  unsigned char nonce[16];
  randombytes_buf(nonce, sizeof nonce);
  return to_hex(nonce, sizeof nonce);
}

} // namespace cg::detail
