  auto c{channel} = process.device_input({channel}, {slot}, {device}, "{method}");
