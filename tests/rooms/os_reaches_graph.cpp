// os_reaches_graph.cpp - an os/ source that reaches up to the driver's room: must not build.
#include "graph/launch.hpp"
#include "os/process.hpp"

int room_probe_os_reaches_graph() { return 0; }
