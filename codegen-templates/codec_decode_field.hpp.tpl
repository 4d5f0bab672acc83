cg::decode<{type}>(in)
