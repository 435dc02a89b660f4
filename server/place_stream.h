// PlaceStream: Place with progress. The work runs on the pool like Place; meanwhile the client gets
// KIND_STARTED when the work begins, a KIND_HEARTBEAT with the elapsed time every heartbeat period (and one per
// phase: decoded, placing), KIND_IMPROVED whenever the placer reports a better answer through the Budget's
// listener, and KIND_RESULT with the final answer. An error ends the stream with the status Place would give.
//
// Messages are queued and written one at a time (the callback API allows one write in flight). A client that
// reads slowly gets fewer heartbeats, never an unbounded queue: a heartbeat is dropped while another message
// waits. A broken stream drops what is queued and the work is cancelled through the call's cancelled flag.
#pragma once

#include <memory>

#include <grpcpp/grpcpp.h>

#include "placement/v1/placement.pb.h"
#include "server/placement_engine.h"
#include "server/placement_service.h"

namespace placement::server {

// `engine` null: the server is not ready and the stream ends with UNAVAILABLE. The stream holds it until it ends.
grpc::ServerWriteReactor<placement::v1::PlaceProgress>* StartPlaceStream(grpc::CallbackServerContext* context,
                                                                         const placement::v1::PlaceRequest* request,
                                                                         const ServiceDeps& deps,
                                                                         std::shared_ptr<const PlacementEngine> engine);

}  // namespace placement::server
