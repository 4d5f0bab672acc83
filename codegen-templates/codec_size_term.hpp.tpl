cg::encoded_size(value.{field})
