
// Every program is in {target}.actors.0.cpp: they include {source_name}, so any edit to it
// recompiles them all, and one file compiles them fastest.
