{{.actors = {graph_id}_g{group}}},
