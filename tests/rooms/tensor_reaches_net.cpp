// tensor_reaches_net.cpp - a tensor/ source that reaches up to net/: must not build.
#include "net/socket.hpp"
#include "tensor/arrivals.hpp"

int room_probe_tensor_reaches_net() { return 0; }
