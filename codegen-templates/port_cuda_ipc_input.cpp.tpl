  auto c{channel} = process.cuda_ipc_input({channel}, {slot}, "{method}"{overlap});
