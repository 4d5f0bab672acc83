process.call({break}"{method}", [&] {{ return actor.{method}({args}); }}{guards})
