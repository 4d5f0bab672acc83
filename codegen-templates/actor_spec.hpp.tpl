{{.name = "{name}", .run = &{run}{fields}}},
