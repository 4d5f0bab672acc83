    cg::Result<{type}> v{result} = process.{collective}(g{group}, v{input}{reduce_op});
