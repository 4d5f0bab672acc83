    runtime_->write_input({index}, input{index}.to(cg::device::cpu));
