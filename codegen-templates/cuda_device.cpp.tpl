cg::Device{{cg::DeviceKind::cuda, {index}}}
