  auto c{channel} = process.input<{type}>({channel}, {slot});
