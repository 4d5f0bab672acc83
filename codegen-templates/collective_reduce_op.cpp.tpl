, cg::ReduceOp::{op}
