  /// {actor} ({actor_class}, {location}); the graph passes ({args}).
  std::optional<{tuple}> {member};
