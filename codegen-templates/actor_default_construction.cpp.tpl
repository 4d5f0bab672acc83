{actor_class} actor;
