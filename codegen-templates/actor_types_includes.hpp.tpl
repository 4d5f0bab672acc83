The #includes of {source_name}, not {source_name} itself: an edit to a graph function
// leaves this file, and every program it does not change, as they are.
