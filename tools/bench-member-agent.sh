#!/usr/bin/env bash
# usage: tools/bench-member-agent.sh [OBJECTS] (after cargo build --release): the member agent's
# CPU and resident memory on a real member cluster (tools/kube/cluster: kube-apiserver, one kwok
# node) holding OBJECTS placed objects (default 200: a namespace and OBJECTS-1 ConfigMaps, one
# PickAll placement), once the placement is Available. CPU is read from /proc/PID/stat over three
# windows of WINDOW seconds (default 60) and the median is printed, in millicores; memory is VmRSS
# at the end. The agent heartbeats every 60 s (the default) and rechecks each applied Work every
# minute, as in production.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
objects="${1:-200}"
window="${WINDOW:-60}"
bin="${BIN:-$here/../target/release/flotilla}"
dir="$(mktemp -d /tmp/bench-agent-XXXXXX)"
hub_pid="" agent_pid=""
cleanup() {
  [ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null
  [ -n "$hub_pid" ] && kill -INT "$hub_pid" 2>/dev/null && wait "$hub_pid" 2>/dev/null
  "$here/kube/cluster" down "$dir/member" 2>/dev/null
  true
}
trap cleanup EXIT

"$bin" up --members 0 --listen 127.0.0.1:0 --data-dir "$dir/hub" >"$dir/hub.log" 2>&1 &
hub_pid=$!
"$here/kube/cluster" up "$dir/member" --nodes 1 2>/dev/null
for _ in $(seq 60); do [ -f "$dir/hub/kubeconfig" ] && break; sleep 1; done
hub() { kubectl --kubeconfig "$dir/hub/kubeconfig" "$@"; }
until hub get --raw /readyz >/dev/null 2>&1; do sleep 0.5; done

hub apply -f - >/dev/null <<EOF
apiVersion: cluster.kubernetes-fleet.io/v1
kind: MemberCluster
metadata: {name: bench}
spec:
  identity: {kind: ServiceAccount, name: fleet-member-agent, namespace: fleet-system}
EOF
# As the Deployment `flotilla join` prints runs it.
export MIMALLOC_ARENA_EAGER_COMMIT=0
token="$("$bin" token issue bench --kubeconfig "$dir/hub/kubeconfig" 2>/dev/null)"
server="$(sed -n 's/^ *server: //p' "$dir/hub/kubeconfig" | head -1)"
"$bin" member --name bench --hub "$server" --token "$token" --hub-ca "$dir/hub/ca.crt" \
  --kubeconfig "$dir/member/kubeconfig" --metrics-bind-address 0 >"$dir/agent.log" 2>&1 &
agent_pid=$!

{
  echo "apiVersion: v1"; echo "kind: Namespace"; echo "metadata: {name: bench}"
  for i in $(seq 1 $((objects - 1))); do
    echo "---"; echo "apiVersion: v1"; echo "kind: ConfigMap"
    echo "metadata: {name: cm-$i, namespace: bench}"; echo "data: {index: \"$i\"}"
  done
  echo "---"
  cat <<EOF
apiVersion: placement.kubernetes-fleet.io/v1
kind: ClusterResourcePlacement
metadata: {name: bench}
spec:
  resourceSelectors: [{group: '', version: v1, kind: Namespace, name: bench}]
  policy: {placementType: PickAll}
EOF
} | hub apply -f - >/dev/null
hub wait --for=condition=ClusterResourcePlacementAvailable crp/bench --timeout=300s >/dev/null
placed="$(kubectl --kubeconfig "$dir/member/kubeconfig" get configmaps -n bench -o name | grep -c cm-)"
echo "placed: namespace bench and $placed ConfigMaps on the member; measuring $((3 * window)) s"

ticks="$(getconf CLK_TCK)"
cpu_of() { awk '{print $14 + $15}' "/proc/$agent_pid/stat"; }
samples=()
for _ in 1 2 3; do
  before="$(cpu_of)"; sleep "$window"; after="$(cpu_of)"
  samples+=("$(echo "scale=2; ($after - $before) * 1000 / $ticks / $window" | bc)")
done
median="$(printf '%s\n' "${samples[@]}" | sort -n | sed -n 2p)"
rss="$(awk '/^VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$agent_pid/status")"
echo "member agent, $objects placed objects: CPU ${samples[*]} mCPU per window, median $median mCPU; resident $rss MiB"
