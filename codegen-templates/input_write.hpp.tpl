    runtime_->write_input({index}, input{index});
