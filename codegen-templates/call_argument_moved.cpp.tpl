cg::pass(v{value})
