#!/usr/bin/env bash
# usage: tools/bench-staged-run.sh N (after cargo build --release): seconds from `kubectl apply`
# of a ClusterStagedUpdateRun to its Succeeded=True, for a 3-stage strategy (staging, canary,
# production, by the `environment` label of the generated fleet, canary and production sorted by
# their `name`/`order` labels) with maxConcurrency 25% and no waits or approvals, over N simulated
# members; the placed resources (a namespace with a ConfigMap) are available as soon as applied.
# The placement (strategy External) is applied and scheduled first, so the figure is the
# orchestration: initialization, N bindings bound stage by stage, Works applied, bindings
# Available, the run's status written after each pass.
set -u
source "$(dirname "$0")/lib/watch-column.sh"
N=$1; D=/tmp/bench-staged-$N; rm -rf $D; mkdir -p $D
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
"${BIN:-$ROOT/target/release/flotilla}" up --members $N --readiness-delay 0 --listen 127.0.0.1:0 --data-dir $D > $D/out.log 2>&1 &
PID=$!
trap 'kill -INT $PID 2>/dev/null; wait $PID 2>/dev/null' EXIT
for i in $(seq 1 900); do grep -q "joined in" $D/out.log 2>/dev/null && break; sleep 1; done
grep "joined in" $D/out.log
export KUBECONFIG=$D/kubeconfig
kubectl create namespace bench >/dev/null
kubectl create configmap settings -n bench --from-literal=greeting=hello >/dev/null
kubectl apply -f - >/dev/null <<YAML
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata:
  name: bench
spec:
  resourceSelectors:
    - {group: "", version: v1, kind: Namespace, name: bench}
  policy:
    placementType: PickAll
  strategy:
    type: External
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterStagedUpdateStrategy
metadata:
  name: bench
spec:
  stages:
    - name: staging
      labelSelector: {matchLabels: {environment: staging}}
      maxConcurrency: 25%
    - name: canary
      labelSelector: {matchLabels: {environment: canary}}
      sortingLabelKey: name
      maxConcurrency: 25%
    - name: production
      labelSelector: {matchLabels: {environment: production}}
      sortingLabelKey: order
      maxConcurrency: 25%
YAML
while [ "$(kubectl get crp bench -o 'jsonpath={.status.conditions[?(@.type=="ClusterResourcePlacementScheduled")].status}' 2>/dev/null)" != "True" ]; do sleep 0.5; done
while [ "$(kubectl get clusterresourcebindings -o name 2>/dev/null | wc -l)" -lt "$N" ]; do sleep 0.5; done
start=$(date +%s.%N)
kubectl apply -f - >/dev/null <<YAML
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterStagedUpdateRun
metadata:
  name: bench
spec:
  placementName: bench
  stagedRolloutStrategyName: bench
YAML
# The run's SUCCEEDED column, watched (tools/lib/watch-column.sh): its status is a few hundred
# bytes per cluster, too much to fetch in a loop.
read -r succeeded end < <(until_column csur bench SUCCEEDED True False)
[ "$succeeded" = "True" ] || { echo "the run ended ${succeeded:-unseen}:"; kubectl get csur bench -o 'jsonpath={.status.conditions}'; echo; exit 1; }
echo "N=$N run apply-to-Succeeded: $(echo "$end - $start" | bc) s"
kubectl get csur bench
ps -o rss= -p $PID | awk '{printf "resident %.0f MiB\n", $1/1024}'
