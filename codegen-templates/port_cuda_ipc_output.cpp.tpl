  auto c{channel} = process.cuda_ipc_output({channel}, "{method}");
