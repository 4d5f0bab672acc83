    cg::Result<{type}> v{result} = {call};
