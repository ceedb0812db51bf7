#!/usr/bin/env bash
# usage: tools/bench-placement.sh N (after cargo build --release): seconds from `kubectl apply` of a
# PickAll placement (examples/crp-app.yaml: a namespace with a Deployment and a ConfigMap) to
# its ClusterResourcePlacementAvailable=True on N simulated members, the hub's write counters
# (refused writes show as code 409) and the resident memory.
set -u
N=$1; D=/tmp/bench-place-$N; rm -rf $D; mkdir -p $D
"$(dirname "$0")/../target/release/flotilla" up --members $N --readiness-delay 1 --listen 127.0.0.1:0 --data-dir $D > $D/out.log 2>&1 &
PID=$!
for i in $(seq 1 600); do grep -q "joined in" $D/out.log 2>/dev/null && break; sleep 1; done
grep "joined in" $D/out.log
export KUBECONFIG=$D/kubeconfig
kubectl create namespace app >/dev/null
kubectl create deployment web -n app --image=nginx --replicas=1 >/dev/null
kubectl create configmap settings -n app --from-literal=greeting=hello >/dev/null
start=$(date +%s.%N)
kubectl apply -f "$(dirname "$0")/../examples/crp-app.yaml" >/dev/null
while true; do
  s=$(kubectl get crp app -o 'jsonpath={.status.conditions[?(@.type=="ClusterResourcePlacementAvailable")].status}' 2>/dev/null)
  [ "$s" = "True" ] && break
  sleep 0.2
done
end=$(date +%s.%N)
echo "N=$N apply-to-Available: $(echo "$end - $start" | bc) s"
kubectl get crp app
echo "hub writes (verb, resource, code: count):"
kubectl get --raw /metrics | grep -E '^apiserver_request_total\{verb="(POST|PUT|PATCH)",resource="(works|clusterresourcebindings|clusterresourceplacements|internalmemberclusters|memberclusters)"' | sed 's/^apiserver_request_total/  /'
ps -o rss= -p $PID | awk '{printf "resident %.0f MiB\n", $1/1024}'
kill -INT $PID; wait $PID 2>/dev/null
