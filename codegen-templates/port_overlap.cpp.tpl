, cg::Overlap::on
