    encoded[{actor}] = cg::detail::encode_constructor_args(constructors.{member});
