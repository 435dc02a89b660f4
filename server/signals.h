// SIGTERM and SIGINT without a signal handler: the signals are blocked in every thread and one thread takes
// them with sigwait, so shutdown work (locks, RocksDB, gRPC) runs in ordinary code, never in a handler.
#pragma once

namespace placement::server {

// Blocks SIGTERM and SIGINT in the calling thread and every thread it starts afterwards; call first in main,
// before any thread exists. Also ignores SIGPIPE (a client that hangs up must not kill the server).
void BlockTerminationSignals();

// Waits for SIGTERM or SIGINT (blocked by BlockTerminationSignals) and returns its number.
int WaitForTerminationSignal();

}  // namespace placement::server
