"""PlacementClient: one channel to a placement server, with deadlines, retries on UNAVAILABLE, health checks,
the x-graph-hash routing header, TLS and bearer tokens."""

from __future__ import annotations

import ipaddress
import os
import random
import time
from typing import Any, Callable, Iterator, Optional, Tuple, cast

import grpc

from placement_client.proto import health_pb2
from placement_client.proto import health_pb2_grpc
from placement_client.proto import placement_pb2 as pb
from placement_client.proto import placement_pb2_grpc as pb_grpc
from placement_client.requests import GraphRequest, routing_metadata

READINESS_SERVICE = "placement.v1.PlacementService"
_MAX_MESSAGE_BYTES = 1 << 30
Metadata = Tuple[Tuple[str, str], ...]


class InsecureTokenError(ValueError):
    """A bearer token was given for a plaintext channel to another host, where anyone on the path can read it."""


def is_loopback(address: str) -> bool:
    """Whether HOST:PORT (or [V6]:PORT, or unix:PATH) names this machine."""
    if address.startswith("unix:"):
        return True
    host = address.rsplit(":", 1)[0] if ":" in address else address
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _health_name(status: int) -> str:
    return str(health_pb2.HealthCheckResponse.ServingStatus.Name(status))


class PlacementClient:
    """One channel to a server. Methods return the response messages and raise grpc.RpcError on failure.

    Every call has a deadline (`timeout` seconds unless the call gives its own) that covers its retries: a call
    answered UNAVAILABLE (the server starting, stopping, or not reachable yet) is tried again up to `retries`
    times with exponential backoff while the deadline allows. Every call is safe to repeat: a Place repeated is
    answered from the server's cache.

    TLS when `root_certificates` (PEM bytes of the CA) is given, or with the system's root certificates when `tls`
    is true; mutual TLS with `certificate_chain` and `private_key` as well. `server_name` is the name the server's
    certificate must carry, where it is not the host of `address`.

    `token` (default: $PLACEMENT_AUTH_TOKEN) is sent as "authorization: Bearer <token>"; over a plaintext channel to
    another host it is refused (InsecureTokenError) unless `allow_insecure_token=True`, since anyone on the path
    could read it. Loopback is allowed.
    """

    def __init__(self, address: str, *, timeout: float = 60.0, retries: int = 3, retry_backoff: float = 0.1,
                 token: Optional[str] = None, root_certificates: Optional[bytes] = None,
                 certificate_chain: Optional[bytes] = None, private_key: Optional[bytes] = None,
                 server_name: Optional[str] = None, allow_insecure_token: bool = False,
                 channel: Optional[grpc.Channel] = None, tls: bool = False) -> None:
        if timeout <= 0:
            raise ValueError(f"timeout must be positive, not {timeout}")
        if retries < 0:
            raise ValueError(f"retries must be 0 or more, not {retries}")
        if (certificate_chain is None) != (private_key is None):
            raise ValueError("mutual TLS needs both certificate_chain and private_key")
        self.address = address
        self.timeout = timeout
        self.retries = retries
        self.retry_backoff = retry_backoff
        secure = tls or root_certificates is not None or certificate_chain is not None
        token = token if token is not None else os.environ.get("PLACEMENT_AUTH_TOKEN", "")
        token = token.strip()
        if token and not secure and channel is None and not allow_insecure_token and not is_loopback(address):
            raise InsecureTokenError(
                f"refusing to send the bearer token to {address} over plaintext; give root_certificates for TLS, "
                "or allow_insecure_token=True if the network is trusted")
        self._auth: Metadata = (("authorization", "Bearer " + token),) if token else ()
        self.channel = channel or self._open_channel(secure, root_certificates, certificate_chain, private_key,
                                                     server_name)
        # The generated stubs are untyped: each call below says what it returns.
        self.stub: Any = pb_grpc.PlacementServiceStub(self.channel)  # type: ignore[no-untyped-call]
        self.health_stub: Any = health_pb2_grpc.HealthStub(self.channel)  # type: ignore[no-untyped-call]

    def _open_channel(self, secure: bool, root_certificates: Optional[bytes], certificate_chain: Optional[bytes],
                      private_key: Optional[bytes], server_name: Optional[str]) -> grpc.Channel:
        options: list[Tuple[str, Any]] = [("grpc.max_receive_message_length", _MAX_MESSAGE_BYTES),
                                          ("grpc.max_send_message_length", _MAX_MESSAGE_BYTES)]
        if not secure:
            return grpc.insecure_channel(self.address, options=options)
        if server_name:
            options.append(("grpc.ssl_target_name_override", server_name))
        credentials = grpc.ssl_channel_credentials(root_certificates=root_certificates, private_key=private_key,
                                                   certificate_chain=certificate_chain)
        return grpc.secure_channel(self.address, credentials, options=options)

    def close(self) -> None:
        self.channel.close()

    def __enter__(self) -> "PlacementClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- calls ------------------------------------------------------------------------------------------------

    def _metadata(self, request: Optional[GraphRequest] = None) -> Metadata:
        return self._auth + (routing_metadata(request) if request is not None else ())

    def _with_retries(self, call: Callable[[float], Any], timeout: Optional[float]) -> Any:
        """Runs call(remaining seconds) until it succeeds, fails with another code, or the deadline is near."""
        deadline = time.monotonic() + (timeout if timeout is not None else self.timeout)
        attempt = 0
        while True:
            remaining = deadline - time.monotonic()
            try:
                return call(max(remaining, 0.001))
            except grpc.RpcError as e:
                if e.code() != grpc.StatusCode.UNAVAILABLE or attempt >= self.retries:
                    raise
                pause = self.retry_backoff * (2 ** attempt) * (0.5 + random.random())
                if time.monotonic() + pause >= deadline:
                    raise
                time.sleep(pause)
                attempt += 1

    def place(self, request: pb.PlaceRequest, timeout: Optional[float] = None) -> pb.PlaceResponse:
        metadata = self._metadata(request)
        return cast(pb.PlaceResponse,
                    self._with_retries(lambda t: self.stub.Place(request, timeout=t, metadata=metadata), timeout))

    def place_stream(self, request: pb.PlaceRequest, timeout: Optional[float] = None) -> Iterator[pb.PlaceProgress]:
        """Yields PlaceProgress messages; the last one (KIND_RESULT) holds the answer. Retried on UNAVAILABLE only
        before the first message arrives."""
        metadata = self._metadata(request)
        deadline = time.monotonic() + (timeout if timeout is not None else self.timeout)

        def first(t: float) -> Tuple[Any, Optional[pb.PlaceProgress]]:
            stream = self.stub.PlaceStream(request, timeout=max(deadline - time.monotonic(), 0.001), metadata=metadata)
            return stream, next(stream, None)

        stream, message = self._with_retries(first, timeout)
        if message is not None:
            yield message
            yield from stream

    def place_answer(self, request: pb.PlaceRequest, timeout: Optional[float] = None,
                     on_progress: Optional[Callable[[pb.PlaceProgress], None]] = None) -> pb.PlaceResponse:
        """PlaceStream's final answer; on_progress sees every message before it."""
        answer: Optional[pb.PlaceResponse] = None
        for progress in self.place_stream(request, timeout):
            if progress.kind == pb.PlaceProgress.KIND_RESULT:
                answer = progress.answer
            elif on_progress is not None:
                on_progress(progress)
        if answer is None:
            raise RuntimeError("the server ended the stream without an answer")
        return answer

    def simulate(self, request: pb.SimulateRequest, timeout: Optional[float] = None) -> pb.SimulateResponse:
        metadata = self._metadata(request)
        return cast(pb.SimulateResponse,
                    self._with_retries(lambda t: self.stub.Simulate(request, timeout=t, metadata=metadata), timeout))

    def algorithms(self, timeout: Optional[float] = None) -> pb.ListAlgorithmsResponse:
        metadata = self._metadata()
        return cast(pb.ListAlgorithmsResponse, self._with_retries(
            lambda t: self.stub.ListAlgorithms(pb.ListAlgorithmsRequest(), timeout=t, metadata=metadata), timeout))

    def info(self, timeout: Optional[float] = None) -> pb.GetServerInfoResponse:
        metadata = self._metadata()
        return cast(pb.GetServerInfoResponse, self._with_retries(
            lambda t: self.stub.GetServerInfo(pb.GetServerInfoRequest(), timeout=t, metadata=metadata), timeout))

    def reload_policy(self, name: str = "", weights: Optional[bytes] = None,
                      timeout: Optional[float] = None) -> pb.ReloadPolicyResponse:
        """Swaps the server's learned-policy weights while it serves (needs its admin token): `weights` (a weights
        file's bytes) for the policy `name` ("" the default one), or without them every policy (or the one named)
        read again from its file. A bad file raises with DATA_LOSS and leaves the old weights serving."""
        request = pb.ReloadPolicyRequest(name=name, weights=weights or b"")
        metadata = self._metadata()
        return cast(pb.ReloadPolicyResponse, self._with_retries(
            lambda t: self.stub.ReloadPolicy(request, timeout=t, metadata=metadata), timeout))

    # ---- health -----------------------------------------------------------------------------------------------

    def health(self, service: str = READINESS_SERVICE, timeout: Optional[float] = None) -> str:
        """The grpc.health.v1 status of `service`: "SERVING", "NOT_SERVING", ... The default asks readiness (the
        policy loaded, the cache open); "" asks liveness."""
        request = health_pb2.HealthCheckRequest(service=service)
        response = cast(health_pb2.HealthCheckResponse,
                        self._with_retries(lambda t: self.health_stub.Check(request, timeout=t), timeout))
        return _health_name(response.status)

    def wait_until_ready(self, timeout: float = 60.0, poll: float = 0.1) -> None:
        """Returns once the server answers SERVING for readiness; TimeoutError after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        last = "no answer"
        while time.monotonic() < deadline:
            try:
                last = self.health(timeout=max(min(deadline - time.monotonic(), 5.0), 0.001))
                if last == "SERVING":
                    return
            except grpc.RpcError as e:
                last = f"{e.code().name}: {e.details()}"
            time.sleep(poll)
        raise TimeoutError(f"{self.address} not ready after {timeout} s (last: {last})")


def secure_client(address: str, ca_file: str, cert_file: Optional[str] = None, key_file: Optional[str] = None,
                  **kwargs: Any) -> PlacementClient:
    """A client over TLS from PEM files (mutual TLS with cert_file and key_file)."""
    def read(path: Optional[str]) -> Optional[bytes]:
        if path is None:
            return None
        with open(path, "rb") as f:
            return f.read()

    return PlacementClient(address, root_certificates=read(ca_file), certificate_chain=read(cert_file),
                           private_key=read(key_file), **kwargs)
