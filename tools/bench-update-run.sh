#!/usr/bin/env bash
# usage: tools/bench-update-run.sh N (after cargo build --release): the orchestration overhead of
# a cluster update run over N simulated members, per member transition.
#
# The fleet (written to $D/fleet.yaml): N members round-robin over eastus, westus and
# westeurope, update groups a, b, c, d round-robin, Kubernetes 1.31.2, one node pool of one
# node, upgrades that take no simulated time (controlPlaneMinutes 0, nodeMinutes 0), and on
# every second member a daily 24-hour maintenance window for Kubernetes upgrades (always
# open, so every member's window is evaluated and none waits). The catalog has 1.32.0 and a
# node image that reached the three regions at different times, so the Consistent selection
# has work to do.
#
# The run: Full to 1.32.0 with Consistent node images, two stages of two groups each
# (maxConcurrency 50 per stage, AKS's cap; 25 per group). Every member goes NotStarted →
# Running → Completed: 2N transitions, each one a MemberUpgrade created by the run controller,
# carried out by the member agent, and observed back. The figure is the wall time from
# `state: Run` to `Completed` divided by 2N: what orchestration costs per transition when the
# upgrades themselves take no time.
set -u
source "$(dirname "$0")/lib/watch-column.sh"
N=$1; D=/tmp/bench-update-run-$N; rm -rf $D; mkdir -p $D
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
python3 - "$N" > $D/fleet.yaml <<'PY'
import sys
n = int(sys.argv[1])
regions = ["eastus", "westus", "westeurope"]
width = len(str(n))
print("members:")
for i in range(1, n + 1):
    print(f"  - name: member-{i:0{width}d}")
    print(f"    region: {regions[(i - 1) % 3]}")
    print(f"    labels: {{updates.flotilla.dev/group: \"{'abcd'[(i - 1) % 4]}\"}}")
    print("    kubernetesVersion: 1.31.2")
    print("    upgrade: {controlPlaneMinutes: 0, nodeMinutes: 0}")
    print("    nodePools:")
    print("      - {name: system, instanceType: Standard_D2s_v5, count: 1, nodeImageVersion: AKSUbuntu-2204gen2containerd-202510.13.0}")
    if i % 2 == 0:
        print("    maintenanceWindows:")
        print("      - name: aksManagedAutoUpgradeSchedule")
        print("        schedule: {daily: {intervalDays: 1}}")
        print("        durationHours: 24")
        print("        startTime: \"00:00\"")
print("""catalog:
  kubernetesVersions:
    - version: 1.31.2
      availability: [{region: eastus, availableAfterHours: -1000}, {region: westus, availableAfterHours: -1000}, {region: westeurope, availableAfterHours: -1000}]
    - version: 1.32.0
      availability: [{region: eastus, availableAfterHours: -48}, {region: westus, availableAfterHours: -48}, {region: westeurope, availableAfterHours: -48}]
  nodeImages:
    - family: AKSUbuntu-2204gen2containerd
      version: 202510.13.0
      availability: [{region: eastus, availableAfterHours: -1000}, {region: westus, availableAfterHours: -1000}, {region: westeurope, availableAfterHours: -1000}]
    - family: AKSUbuntu-2204gen2containerd
      version: 202510.20.0
      availability: [{region: eastus, availableAfterHours: -100}, {region: westus, availableAfterHours: -100}, {region: westeurope, availableAfterHours: -100}]
    - family: AKSUbuntu-2204gen2containerd
      version: 202510.27.0
      availability: [{region: eastus, availableAfterHours: -10}, {region: westus, availableAfterHours: -10}, {region: westeurope, availableAfterHours: 1000}]""")
PY
"${BIN:-$ROOT/target/release/flotilla}" up --fleet $D/fleet.yaml --listen 127.0.0.1:0 --data-dir $D > $D/out.log 2>&1 &
PID=$!
trap 'kill -INT $PID 2>/dev/null; wait $PID 2>/dev/null' EXIT
for i in $(seq 1 900); do grep -q "joined in" $D/out.log 2>/dev/null && break; sleep 1; done
grep "joined in" $D/out.log
export KUBECONFIG=$D/kubeconfig
# Every member has reported its versions before the run starts.
while [ "$(kubectl get memberclusters --no-headers 2>/dev/null | awk '$8 != "" && $8 != "<none>"' | wc -l)" -lt "$N" ]; do sleep 1; done
kubectl apply -f - >/dev/null <<YAML
apiVersion: updates.flotilla.dev/v1beta1
kind: UpdateRun
metadata:
  name: bench
spec:
  managedClusterUpdate:
    upgrade: {type: Full, kubernetesVersion: 1.32.0}
    nodeImageSelection: {type: Consistent}
  strategy:
    stages:
      - name: first
        maxConcurrency: "50"
        groups: [{name: a, maxConcurrency: "25"}, {name: b, maxConcurrency: "25"}]
      - name: second
        maxConcurrency: "50"
        groups: [{name: c, maxConcurrency: "25"}, {name: d, maxConcurrency: "25"}]
YAML
# Planned (NotStarted, every member placed) before the clock starts.
while [ "$(kubectl get updaterun bench --no-headers 2>/dev/null | awk '{print $6}')" != "0/$N" ]; do sleep 0.5; done
start=$(date +%s.%N)
kubectl patch updaterun bench --type=merge -p '{"spec":{"state":"Run"}}' >/dev/null
# The run's STATE column, watched (tools/lib/watch-column.sh): the object lists every member.
read -r state end < <(until_column updaterun bench STATE Completed Failed)
[ "$state" = "Completed" ] || { echo "the run ended ${state:-unseen}:"; kubectl get updaterun bench -o 'jsonpath={.status.error}'; echo; exit 1; }
secs=$(echo "$end - $start" | bc)
echo "N=$N run start-to-Completed: $secs s; per member transition: $(echo "scale=3; $secs * 1000 / (2 * $N)" | bc) ms"
kubectl get updaterun bench
# How many times the run's status was written, and the hub's writes overall.
kubectl get --raw /metrics | grep -E '^apiserver_request_total\{verb="(PUT|PATCH|POST)",resource="(updateruns|memberupgrades|internalmemberclusters|memberclusters)"' | sed 's/^apiserver_request_total/  /'
ps -o rss= -p $PID | awk '{printf "resident %.0f MiB\n", $1/1024}'
