    .communicators = {graph_id}_communicators,
