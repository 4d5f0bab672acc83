// frame_auth.cpp - per-connection keys and per-frame Poly1305 tags, with libsodium.
#include "net/frame_auth.hpp"

#include "net/frame.hpp"
#include "net/secret.hpp"

#include <sodium.h>

#include <cstring>

namespace cg::detail {

namespace {

static_assert(sizeof(crypto_onetimeauth_state) <= 256, "FrameTag's state is too small");
static_assert(crypto_onetimeauth_BYTES == frame_tag_bytes);
static_assert(crypto_onetimeauth_KEYBYTES == crypto_kdf_KEYBYTES);
static_assert(FrameKey::bytes == crypto_kdf_KEYBYTES);

// crypto_kdf's context: 8 characters naming what the subkeys are for.
constexpr char frame_context[crypto_kdf_CONTEXTBYTES + 1] = "cg-frame";

crypto_onetimeauth_state* state_of(unsigned char* storage) noexcept {
  return reinterpret_cast<crypto_onetimeauth_state*>(storage);
}

} // namespace

FrameKey::~FrameKey() { sodium_memzero(key_.data(), key_.size()); }

ConnectionKeys connection_keys(const Secret& secret, std::string_view handshake) {
  const std::string context(handshake);
  return {FrameKey(secret.derive("cg-frames writer->reader " + context)),
          FrameKey(secret.derive("cg-frames reader->writer " + context))};
}

void FrameTag::begin(const FrameKey& key, std::uint64_t sequence) noexcept {
  keyed_ = key.set();
  if (!keyed_)
    return;
  unsigned char once[crypto_onetimeauth_KEYBYTES];
  crypto_kdf_derive_from_key(once, sizeof once, sequence, frame_context, key.data());
  crypto_onetimeauth_init(state_of(state_), once);
  sodium_memzero(once, sizeof once);
}

void FrameTag::update(const std::byte* bytes, std::size_t size) noexcept {
  if (keyed_ && size > 0)
    crypto_onetimeauth_update(state_of(state_), reinterpret_cast<const unsigned char*>(bytes),
                              size);
}

void FrameTag::finish(std::byte* tag) noexcept {
  if (!keyed_) {
    std::memset(tag, 0, frame_tag_bytes);
    return;
  }
  crypto_onetimeauth_final(state_of(state_), reinterpret_cast<unsigned char*>(tag));
  keyed_ = false;
}

void frame_tag(const FrameKey& key, std::uint64_t sequence, const std::byte* header,
               const std::byte* payload, std::size_t size, std::byte* tag) noexcept {
  FrameTag t;
  t.begin(key, sequence);
  t.update(header, frame_header_bytes);
  t.update(payload, size);
  t.finish(tag);
}

bool tags_equal(const std::byte* a, const std::byte* b) noexcept {
  return sodium_memcmp(a, b, frame_tag_bytes) == 0;
}

} // namespace cg::detail
