#!/usr/bin/env bash
# usage: tools/bench-placement.sh N (after cargo build --release): seconds from `kubectl apply` of a
# PickAll placement (examples/crp-app.yaml: a namespace with a Deployment and a ConfigMap) to
# its ClusterResourcePlacementAvailable=True on N simulated members, the hub's write counters
# (refused writes show as code 409) and the resident memory.
# WAIT=S waits S seconds after the members joined before applying: the members heartbeat
# together every 60 s from their join, so WAIT=15 puts the first heartbeat wave inside the
# rollout instead of (often) after it.
set -u
source "$(dirname "$0")/lib/watch-column.sh"
N=$1; D=/tmp/bench-place-$N; rm -rf $D; mkdir -p $D
"${BIN:-$(dirname "$0")/../target/release/flotilla}" up --members $N --readiness-delay 1 --listen 127.0.0.1:0 --data-dir $D > $D/out.log 2>&1 &
PID=$!
trap 'kill -INT $PID 2>/dev/null; wait $PID 2>/dev/null' EXIT
for i in $(seq 1 600); do grep -q "joined in" $D/out.log 2>/dev/null && break; sleep 1; done
grep "joined in" $D/out.log
export KUBECONFIG=$D/kubeconfig
kubectl create namespace app >/dev/null
kubectl create deployment web -n app --image=nginx --replicas=1 >/dev/null
kubectl create configmap settings -n app --from-literal=greeting=hello >/dev/null
sleep "${WAIT:-0}"
start=$(date +%s.%N)
kubectl apply -f "$(dirname "$0")/../examples/crp-app.yaml" >/dev/null
# The AVAILABLE column, watched (tools/lib/watch-column.sh): the placement's status lists
# every member, megabytes at 10,000, too much to fetch in a loop.
read -r available end < <(until_column crp app AVAILABLE True)
[ "$available" = "True" ] || { echo "the watch ended before the placement was available:"; kubectl get crp app; exit 1; }
echo "N=$N apply-to-Available: $(echo "$end - $start" | bc) s"
kubectl get crp app
echo "hub writes (verb, resource, code: count):"
kubectl get --raw /metrics | grep -E '^apiserver_request_total\{verb="(POST|PUT|PATCH)",resource="(works|clusterresourcebindings|clusterresourceplacements|internalmemberclusters|memberclusters)"' | sed 's/^apiserver_request_total/  /'
ps -o rss= -p $PID | awk '{printf "resident %.0f MiB\n", $1/1024}'
