    {{.task = {task}, .loc = {location}}},
