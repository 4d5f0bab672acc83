{{.writer = {writer}, .reader_actors = {graph_id}_r{channel}{fields}}},
