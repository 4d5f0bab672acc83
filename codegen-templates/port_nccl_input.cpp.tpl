  auto c{channel} = process.nccl_input({channel}, {slot}, g{group}{overlap});
