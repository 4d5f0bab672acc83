
private:
  /// Per actor, the constructor arguments launch() was given for it, encoded.
  static std::vector<std::optional<std::vector<std::byte>>>
  encode(const Constructors& constructors) {{
    std::vector<std::optional<std::vector<std::byte>>> encoded({actor_count});
{encodes}    return encoded;
  }}
