  auto c{channel} = process.device_output({channel}, "{method}");
