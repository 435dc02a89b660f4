#!/usr/bin/python3
"""The package as a checkout holds it after the build: imported with PYTHONPATH=client/python (no pip install),
its generated stubs beside it, and `python3 -m placement_client.cli --help` answering. Prints "SKIPPED: ..." and
exits 0 when python3-grpcio or python3-protobuf is missing."""

import os
import subprocess
import sys

CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    try:
        import grpc  # noqa: F401
        import google.protobuf  # noqa: F401
    except ImportError as e:
        print(f"SKIPPED: {e} (scripts/deps.sh installs python3-grpcio and python3-protobuf)")
        return 0
    import placement_client
    from placement_client.proto import placement_pb2, placement_pb2_grpc  # noqa: F401
    where = os.path.dirname(os.path.abspath(placement_client.__file__))
    if where != os.path.join(CHECKOUT, "placement_client"):
        print(f"FAILED: placement_client was imported from {where}, not from the checkout {CHECKOUT}")
        return 1
    usage = subprocess.run([sys.executable, "-m", "placement_client.cli", "--help"], capture_output=True, text=True,
                           timeout=60)
    if usage.returncode != 0 or "--global_batch" not in usage.stdout:
        print(f"FAILED: python3 -m placement_client.cli --help exited {usage.returncode}\n{usage.stdout}{usage.stderr}")
        return 1
    print(f"PASSED: placement_client from {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
