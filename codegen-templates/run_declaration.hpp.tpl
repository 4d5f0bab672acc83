int {function}(cg::ActorProcess& process);
