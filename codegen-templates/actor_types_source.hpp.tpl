All of {source_name}, as it declares {needed_for}: an edit to it
// recompiles every actor program. With the actor classes and the types
// they exchange in headers of their own, it would not.
