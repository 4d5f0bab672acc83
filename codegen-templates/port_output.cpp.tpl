  auto c{channel} = process.output<{type}>({channel}, "{method}");
