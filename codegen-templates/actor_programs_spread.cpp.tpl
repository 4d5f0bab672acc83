
// Program k of the graphs, in order, is in file k mod {shards}: a changed program
// recompiles its own file only.{none}
