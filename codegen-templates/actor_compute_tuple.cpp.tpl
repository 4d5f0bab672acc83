    cg::Result<std::tuple<{types}>> r{task} = {call};
