  cg::Communicator& g{group} = process.communicator({group});
