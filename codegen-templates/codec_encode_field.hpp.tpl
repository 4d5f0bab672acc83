    cg::encode(out, value.{field});
