    &cg_generated::{target_ns}::{graph_id}_spec,
