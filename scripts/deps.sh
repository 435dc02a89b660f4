#!/usr/bin/env bash
# Installs the Debian 12 packages the build and the tests need, only those missing; safe to run again.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git ca-certificates
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libtorch-dev prometheus-cpp-dev librocksdb-dev libonnx-dev
  libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev libssl-dev
  coinor-libcbc-dev coinor-libclp-dev libscotch-dev libmetis-dev
  libopenblas0-openmp  # LibTorch's matrix products: Debian's default libblas3 is the unoptimized reference one
)
# Programs only the tests run. PLACEMENT_DEPS=build (the Dockerfile's build stage) leaves them out.
TEST_PACKAGES=(
  chromium libpng-dev  # the schedule chart's browser test: headless Chromium, and libpng to read its screenshot
  prometheus  # promtool: the server tests check the /metrics exposition with it, deploy/ checks prometheus.yml
  nginx yamllint  # deploy/: the gRPC balancer in front of real replicas, and the YAML lint
  python3-grpcio python3-venv python3-setuptools python3-mypy  # the Python client: installed into a venv, typed, run against a server
  python3-torch python3-torchvision  # placement_client.torch: models split by answers, checked against the unsplit ones
  openssl  # the server tests make their TLS certificates with it
)
# kubectl renders deploy/k8s (Debian's 1.20 has kustomize built in); a kubectl already installed is kept.
command -v kubectl >/dev/null 2>&1 || TEST_PACKAGES+=(kubernetes-client)
if [ "${PLACEMENT_DEPS:-all}" != build ]; then
  PACKAGES+=("${TEST_PACKAGES[@]}")
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "placement: missing packages (${missing[*]}) and not root; install them or run as root" >&2
    exit 1
  fi
fi
echo "placement: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
# The tests start nginx themselves, as a non-root process on 127.0.0.1; the system service the package starts
# on port 80 is not wanted on a build machine.
if [[ " ${missing[*]} " == *" nginx "* ]] && [ -d /run/systemd/system ]; then
  $SUDO systemctl disable --now nginx >/dev/null 2>&1 || true
fi
