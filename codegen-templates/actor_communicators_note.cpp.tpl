
// Each `gN` is this actor's rank of synchronous group N (the schedule's
// `# synchronous groups`), a communicator: NCCL, or the host communicator.
