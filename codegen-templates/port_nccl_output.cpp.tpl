  auto c{channel} = process.nccl_output({channel}, "{method}", g{group}{overlap});
