// The graph's constructor arguments, unless launch() was given others.
  auto actor = process.construct<{actor_class}>({tuple}({args}));
