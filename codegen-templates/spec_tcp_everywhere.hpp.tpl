    .tcp_everywhere = true,
