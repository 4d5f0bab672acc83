// graph_reaches_down.cpp - the control: a graph/ source including a header of its own room and
// of every room below it builds, so the probes above fail for the include alone.
#include "actor/segment.hpp"
#include "comm/host_reduce.hpp"
#include "graph/launch.hpp"
#include "net/socket.hpp"
#include "os/process.hpp"
#include "shm/shm.hpp"
#include "support/deadline.hpp"
#include "tensor/arrivals.hpp"

int room_probe_graph_reaches_down() { return 0; }
