
template <> struct cg::Codec<{type}> {{
  static std::size_t size([[maybe_unused]] const {type}& value) {{ return {size_terms}; }}
  static void encode([[maybe_unused]] cg::Encoder& out, [[maybe_unused]] const {type}& value) {{
{encode_fields}  }}
  static {type} decode([[maybe_unused]] cg::Decoder& in) {{
    // Braced initialisation decodes the fields left to right.
    return {type}{{{decode_fields}}};
  }}
}};
