"""Messages and stubs generated from placement/v1/placement.proto and grpc/health/v1."""
