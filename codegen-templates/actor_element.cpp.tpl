    cg::Result<{type}> v{value} = cg::element<{element}>(r{task});
