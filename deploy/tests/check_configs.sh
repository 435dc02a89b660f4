#!/usr/bin/env bash
# The deployment files are valid for the tools that read them. One check per call, so that ctest reports each:
#   check_configs.sh kustomize | yamllint | promtool | alerts | nginx | metric_names
# Exit 0: valid, 1: not, 77: the tool is not installed (scripts/deps.sh installs it).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DEPLOY="$ROOT/deploy"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/placement_deploy_check.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

need() {
  if ! command -v "$1" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$1" ]; then
    echo "SKIP: $1 is not installed (scripts/deps.sh installs it)"
    exit 77
  fi
}

# Fails unless the rendered manifests hold every expected "kind: X" line.
expect_kinds() {
  local file="$1"
  shift
  for kind in "$@"; do
    grep -q "^kind: $kind\$" "$file" || { echo "FAIL: $file has no $kind" >&2; exit 1; }
  done
}

case "${1:-}" in
  kustomize)
    need kubectl
    kubectl kustomize "$DEPLOY/k8s" > "$WORK/cpu.yaml"
    kubectl kustomize "$DEPLOY/k8s/overlays/gpu" > "$WORK/gpu.yaml"
    kubectl kustomize "$DEPLOY/k8s/monitoring" > "$WORK/monitoring.yaml"
    for f in "$WORK/cpu.yaml" "$WORK/gpu.yaml"; do
      expect_kinds "$f" Namespace ConfigMap Deployment Service Ingress HorizontalPodAutoscaler \
        PodDisruptionBudget NetworkPolicy
      # The operator's kinds stay out of the service, so that it applies where the CRDs are not installed.
      if grep -qE '^kind: (ServiceMonitor|PrometheusRule)$' "$f"; then
        echo "FAIL: $f needs the Prometheus operator's CRDs" >&2; exit 1
      fi
      # The HPA owns the replica count; a fixed one would reset it on every apply.
      if grep -qE '^  replicas:' "$f"; then echo "FAIL: $f fixes the replicas under the HPA" >&2; exit 1; fi
      grep -q 'automountServiceAccountToken: false' "$f" || { echo "FAIL: $f mounts a service account token" >&2; exit 1; }
      grep -q -- '--threads=$(PLACEMENT_CPUS)' "$f" || { echo "FAIL: $f does not size threads by the CPU request" >&2; exit 1; }
    done
    expect_kinds "$WORK/monitoring.yaml" ServiceMonitor PrometheusRule
    grep -q 'nvidia.com/gpu: 1' "$WORK/gpu.yaml" || { echo "FAIL: the GPU overlay asks for no nvidia.com/gpu" >&2; exit 1; }
    if grep -q 'nvidia.com/gpu' "$WORK/cpu.yaml"; then echo "FAIL: the CPU deployment asks for a GPU" >&2; exit 1; fi
    # The device plugin decides which GPU a pod sees; NVIDIA_VISIBLE_DEVICES=all would show it every GPU.
    if grep -q 'NVIDIA_VISIBLE_DEVICES' "$WORK/gpu.yaml"; then echo "FAIL: the GPU overlay sets NVIDIA_VISIBLE_DEVICES" >&2; exit 1; fi
    grep -q 'upstream-hash-by: \$http_x_graph_hash' "$WORK/cpu.yaml" \
      || { echo "FAIL: the ingress does not hash on x-graph-hash" >&2; exit 1; }
    echo "deploy/k8s, overlays/gpu and monitoring render ($(kubectl version --client 2>/dev/null | head -n 1))"
    ;;
  alerts)
    need promtool
    promtool check rules "$DEPLOY/prometheus/alerts.yml"
    (cd "$DEPLOY/prometheus" && promtool test rules alerts_test.yml)
    # The operator's copy says the same as the file compose's Prometheus loads.
    /usr/bin/python3 - "$DEPLOY/prometheus/alerts.yml" "$DEPLOY/k8s/monitoring/prometheusrule.yaml" <<'PY'
import sys, yaml
plain = yaml.safe_load(open(sys.argv[1]))["groups"]
operator = yaml.safe_load(open(sys.argv[2]))["spec"]["groups"]
if plain != operator:
    sys.exit(f"FAIL: {sys.argv[2]} differs from {sys.argv[1]}")
print(f"{sum(len(g['rules']) for g in plain)} alerting rules, the same in both files")
PY
    ;;
  yamllint)
    need yamllint
    yamllint -s -c "$DEPLOY/yamllint.yaml" "$ROOT/docker-compose.yml" "$DEPLOY"
    echo "yamllint: docker-compose.yml and deploy/ are clean"
    ;;
  promtool)
    need promtool
    promtool check config "$DEPLOY/prometheus/prometheus.yml"
    ;;
  nginx)
    need nginx
    nginx="$(command -v nginx || echo /usr/sbin/nginx)"
    # Replica addresses must resolve when nginx reads them; compose's names resolve only inside compose.
    "$DEPLOY/nginx/render.sh" "$WORK/nginx" 127.0.0.1:8080 127.0.0.1:50051 127.0.0.1:50052 127.0.0.1:50053
    "$nginx" -t -p "$WORK/nginx/" -c "$WORK/nginx/nginx.conf" -e stderr
    grep -q 'split_clients "${http_x_graph_hash}" $placement_replica' "$WORK/nginx/balancer.conf" \
      || { echo "FAIL: the balancer does not route by x-graph-hash" >&2; exit 1; }
    ;;
  metric_names)
    # Every placement_* series the dashboard and the HPA name is one server/metrics.cc exports, and every
    # dashboard query parses (promtool checks them as recording rules).
    need promtool
    dashboard="$DEPLOY/grafana/dashboards/placement.json"
    exported="$(grep -o '"placement_[a-z_]*"' "$ROOT/server/metrics.cc" | tr -d '"' | sort -u)"
    used="$( (cat "$dashboard" "$DEPLOY/k8s/base/hpa.yaml"; grep -v '^ *#' "$DEPLOY/prometheus/alerts.yml") \
      | grep -o 'placement_[a-z_]*' | sort -u)"
    status=0
    for name in $used; do
      base="$(sed -E 's/_(bucket|sum|count)$//' <<< "$name")"
      [ "$name" = placement_requests_per_second ] && continue  # prometheus-adapter's name for the rate (hpa.yaml)
      if ! grep -qx "$base" <<< "$exported"; then echo "FAIL: $name is not a metric of server/metrics.cc" >&2; status=1; fi
    done
    /usr/bin/python3 - "$dashboard" "$WORK/rules.yml" <<'PY'
import json, sys
dashboard = json.load(open(sys.argv[1]))
exprs = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
with open(sys.argv[2], "w") as out:
    out.write("groups:\n  - name: dashboard\n    rules:\n")
    for i, e in enumerate(exprs):
        e = e.replace("$__rate_interval", "1m").replace("$instance", ".*")
        out.write(f"      - record: dashboard:expr{i}\n        expr: {json.dumps(e)}\n")
print(f"{len(exprs)} dashboard queries")
PY
    promtool check rules "$WORK/rules.yml" || status=1
    exit "$status"
    ;;
  *)
    echo "usage: $0 kustomize|yamllint|promtool|alerts|nginx|metric_names" >&2
    exit 2
    ;;
esac
