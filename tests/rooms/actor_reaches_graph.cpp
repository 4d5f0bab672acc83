// actor_reaches_graph.cpp - an actor/ source that reaches up to the driver's state: must not
// build (the actor side and the driver share only what lies in actor/ and below).
#include "actor/segment.hpp"
#include "graph/runtime_state.hpp"

int room_probe_actor_reaches_graph() { return 0; }
