// SIGTERM, SIGINT and SIGHUP without a signal handler: the signals are blocked in every thread and the main thread
// takes them with sigwait, so what they start (shutdown: locks, RocksDB, gRPC; SIGHUP's policy reload: reading and
// checking weights files) runs in ordinary code, never in a handler.
#pragma once

namespace placement::server {

// Blocks SIGTERM, SIGINT and SIGHUP in the calling thread and every thread it starts afterwards; call first in
// main, before any thread exists. Also ignores SIGPIPE (a client that hangs up must not kill the server).
void BlockServerSignals();

// Waits for SIGTERM, SIGINT or SIGHUP (blocked by BlockServerSignals) and returns its number.
int WaitForServerSignal();

}  // namespace placement::server
