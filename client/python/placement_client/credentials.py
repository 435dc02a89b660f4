"""The files placectl's security flags name (--tls_ca, --tls_cert, --tls_key, --token_file), read as PlacementClient
takes them and checked as placectl checks them (client/security/channel_credentials.cc): each is read before any
connection, and one that cannot be read, a certificate or key that is not PEM, or a token file that is empty or
holds what a header cannot carry is a ValueError naming the file."""

from __future__ import annotations


def _read(what: str, path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise ValueError(f"{what}: cannot read '{path}': {e.strerror}") from None


def read_pem(what: str, path: str) -> bytes:
    """A certificate or key file: gRPC would otherwise report a file that is not PEM only by failing to connect."""
    data = _read(what, path)
    if b"-----BEGIN " not in data:
        raise ValueError(f"{what}: '{path}' is not PEM (no -----BEGIN line)")
    return data


def read_token_file(path: str) -> str:
    """The bearer token a file holds, without surrounding whitespace: printable ASCII, as an HTTP/2 header."""
    data = _read("token file", path)
    try:
        token = data.decode("ascii").strip()
    except UnicodeDecodeError:
        token = None
    if token == "":
        raise ValueError(f"token file: '{path}' is empty")
    if token is None or not all(" " <= c < "\x7f" for c in token):
        raise ValueError(f"token file: '{path}' holds bytes a token cannot (printable ASCII only)")
    return token
