#!/usr/bin/python3
"""Installs placement-client as a user would, then tests the installed package against a real server.

A fresh virtual environment (seeing Debian's python3-grpcio and python3-protobuf, since nothing is downloaded),
`pip install` of a copy of client/python (stubs generated from proto/ at build time, no network), mypy --strict
over the installed package when python3-mypy is present, then tests/test_client.py run by the environment's
interpreter. Prints "SKIPPED: ..." and exits 0 when python3-grpcio, python3-protobuf or python3-venv is missing.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def run(args, **kwargs):
    result = subprocess.run(args, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        print(f"FAILED: {' '.join(args)} exited {result.returncode}\n{result.stdout}\n{result.stderr}")
        sys.exit(1)
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server-binary", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--test", default="test_client.py", help="the test script in this folder to run")
    parser.add_argument("--placectl", default="", help="passed on to the test")
    args = parser.parse_args()
    args.server_binary, args.source = os.path.abspath(args.server_binary), os.path.abspath(args.source)
    try:
        import grpc  # noqa: F401
        import google.protobuf  # noqa: F401
        import venv  # noqa: F401
        import ensurepip  # noqa: F401
    except ImportError as e:
        print(f"SKIPPED: {e} (scripts/deps.sh installs python3-grpcio, python3-protobuf and python3-venv)")
        return 0
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
               PLACEMENT_PROTO_DIR=os.path.join(args.source, "proto"))
    with tempfile.TemporaryDirectory(prefix="placement_client_") as tmp:
        venv_dir = os.path.join(tmp, "venv")
        run([sys.executable, "-m", "venv", "--system-site-packages", venv_dir])
        python = os.path.join(venv_dir, "bin", "python")
        # A copy, so that the build leaves nothing in the source tree; without the stubs the CMake build generated
        # into the checkout (placement_client/proto), so that the install generates its own.
        package = os.path.join(tmp, "client-python")
        shutil.copytree(os.path.join(args.source, "client", "python"), package,
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "proto"))
        run([python, "-m", "pip", "install", "--no-build-isolation", package], env=env, cwd=tmp)
        try:
            import mypy  # noqa: F401
            typed = run([python, "-m", "mypy", "--config-file", os.path.join(package, "pyproject.toml"), "-p",
                         "placement_client"], env=env, cwd=tmp)
            print(typed.stdout.strip())
        except ImportError:
            print("mypy not installed (python3-mypy): the type check is left out")
        command = [python, os.path.join(HERE, args.test), "--server-binary", args.server_binary, "--source",
                   args.source, "--scripts", os.path.join(venv_dir, "bin")]
        if args.placectl:
            command += ["--placectl", os.path.abspath(args.placectl)]
        test = subprocess.run(command, env=env, cwd=tmp, timeout=600)
        return test.returncode


if __name__ == "__main__":
    sys.exit(main())
