//! Seed 003's NodePools on a simulated member, with the real kubectl: every example applies
//! unchanged, the pools show their node class, nodes and allowed disruptions per reason, say
//! where their node lifetime comes from, publish the figures as a metric, and bad pools are
//! refused with the field named while the stored pool stays as it was; NodeOverlays apply and
//! report Ready.

mod common;

use common::{examples_dir, fleet, member_kubeconfig, on_member};

#[test]
fn seed_node_pools_apply_to_a_member_and_explain_themselves() {
    let hub = fleet("1");
    let member = member_kubeconfig(&hub, "member-cluster-01");
    let kubectl = |args: &[&str]| {
        on_member(&hub, &member, args).unwrap_or_else(|| panic!("kubectl {args:?} failed"))
    };

    // AKS node auto-provisioning's default node class is there from the start.
    let classes = kubectl(&["get", "aksnodeclasses"]);
    assert!(classes.contains("default"), "{classes}");

    let dir = examples_dir().join("nodes/seed-003");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 11, "{files:?}");
    for file in &files {
        kubectl(&["apply", "-f", file.to_str().unwrap()]);
    }
    // The last `default` applied is nodepool-three-budgets.yaml (files sort by name).
    let status = |pool: &str, path: &str| {
        kubectl(&["get", "nodepool", pool, "-o", &format!("jsonpath={path}")])
    };
    common::eventually("the pools' status", 30, || {
        (!status("gradual", "{.status.allowedDisruptionsSummary}").is_empty()).then_some(())
    });
    let table = kubectl(&["get", "nodepools"]);
    let header = table.lines().next().unwrap();
    for column in [
        "NAME",
        "NODECLASS",
        "NODES",
        "READY",
        "ALLOWED-DISRUPTIONS",
        "AGE",
    ] {
        assert!(header.contains(column), "{table}");
    }
    assert!(
        table.contains("Underutilized=0 Empty=0 Drifted=0"),
        "{table}"
    );
    assert_eq!(
        status(
            "expire-daily",
            "{.status.expireAfter} {.status.expireAfterSource}"
        ),
        "24h spec.disruption.expireAfter"
    );
    assert_eq!(
        status(
            "business-hours",
            "{.status.expireAfter} {.status.expireAfterSource}"
        ),
        "720h default"
    );
    assert_eq!(
        status(
            "default",
            r#"{.status.conditions[?(@.type=="Ready")].status}"#
        ),
        "True"
    );
    let reasons = status(
        "weekend-only",
        r#"{range .status.allowedDisruptions[*]}{.reason}={.allowed}: {.message}{"\n"}{end}"#,
    );
    assert_eq!(reasons.lines().count(), 3, "{reasons}");
    assert!(reasons.starts_with("Underutilized=0: "), "{reasons}");

    // The same figures as a metric, on the member's /metrics (`--raw` paths are absolute, so
    // they name the member's path on the hub).
    common::eventually("the allowed-disruptions metric", 30, || {
        kubectl(&["get", "--raw", "/clusters/member-cluster-01/metrics"])
            .contains(
                "karpenter_nodepools_allowed_disruptions{nodepool=\"weekend-only\",reason=\"Drifted\"} 0",
            )
            .then_some(())
    });

    // Bad pools are refused with the field named; the stored pool is untouched.
    let before = status(
        "default",
        "{.metadata.resourceVersion} {.spec.disruption.budgets}",
    );
    let bad = [
        (r#"{"nodes": "1000%"}"#, "spec.disruption.budgets[0].nodes"),
        (
            r#"{"nodes": "0", "duration": "8h"}"#,
            "spec.disruption.budgets[0].schedule: Required value",
        ),
        (
            r#"{"nodes": "0", "schedule": "0 9 * * 8", "duration": "8h"}"#,
            "spec.disruption.budgets[0].schedule: Invalid value: \"0 9 * * 8\"",
        ),
    ];
    let refused = |patch: &str| {
        let out = hub.kubectl(&[
            "--kubeconfig",
            member.to_str().unwrap(),
            "patch",
            "nodepool",
            "default",
            "--type=merge",
            "-p",
            patch,
        ]);
        assert!(!out.status.success(), "{patch} was accepted");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    for (budget, field) in bad {
        let stderr = refused(&format!(
            r#"{{"spec":{{"disruption":{{"budgets":[{budget}]}}}}}}"#
        ));
        assert!(stderr.contains(field), "{budget}: {stderr}");
    }
    let stderr =
        refused(r#"{"spec":{"template":{"spec":{"terminationGracePeriod":"half an hour"}}}}"#);
    assert!(
        stderr.contains("spec.template.spec.terminationGracePeriod"),
        "{stderr}"
    );
    assert_eq!(
        status(
            "default",
            "{.metadata.resourceVersion} {.spec.disruption.budgets}"
        ),
        before
    );

    // AKSNodeClass is also served at the AKS provider's deprecated v1alpha2, with its warning.
    let old = hub.kubectl_stdin(
        &["--kubeconfig", member.to_str().unwrap(), "apply", "-f", "-"],
        "apiVersion: karpenter.azure.com/v1alpha2\nkind: AKSNodeClass\nmetadata: {name: older}\nspec: {imageFamily: AzureLinux}\n",
    );
    assert!(
        old.status.success(),
        "{}",
        String::from_utf8_lossy(&old.stderr)
    );
    assert!(
        String::from_utf8_lossy(&old.stderr).contains("use v1beta1.AKSNodeClass instead"),
        "{}",
        String::from_utf8_lossy(&old.stderr)
    );
    assert_eq!(
        kubectl(&[
            "get",
            "aksnodeclasses.v1beta1.karpenter.azure.com",
            "older",
            "-o",
            "jsonpath={.apiVersion} {.spec.imageFamily}"
        ]),
        "karpenter.azure.com/v1beta1 AzureLinux"
    );

    // A kubelet block is stored with the provider's defaults; swap without failSwapOn: false
    // is refused in the provider's words, and nothing stored changes.
    let tuned = hub.kubectl_stdin(
        &["--kubeconfig", member.to_str().unwrap(), "apply", "-f", "-"],
        "apiVersion: karpenter.azure.com/v1beta1\nkind: AKSNodeClass\nmetadata: {name: tuned}\n\
         spec:\n  kubelet: {podPidsLimit: 4096}\n  linuxOSConfig: {sysctls: {vmMaxMapCount: 262144}}\n",
    );
    assert!(
        tuned.status.success(),
        "{}",
        String::from_utf8_lossy(&tuned.stderr)
    );
    assert_eq!(
        kubectl(&[
            "get",
            "aksnodeclass",
            "tuned",
            "-o",
            "jsonpath={.spec.kubelet.cpuManagerPolicy} {.spec.kubelet.cpuCFSQuotaPeriod} \
             {.spec.kubelet.containerLogMaxSize} {.spec.kubelet.containerLogMaxFiles}"
        ]),
        "none 100ms 50Mi 5"
    );
    let swap = hub.kubectl(&[
        "--kubeconfig",
        member.to_str().unwrap(),
        "patch",
        "aksnodeclass",
        "tuned",
        "--type=merge",
        "-p",
        r#"{"spec":{"linuxOSConfig":{"swapFileSize":"2Gi"}}}"#,
    ]);
    assert!(!swap.status.success());
    assert!(
        String::from_utf8_lossy(&swap.stderr).contains(
            "kubelet.failSwapOn must be set to false when linuxOSConfig.swapFileSize is specified"
        ),
        "{}",
        String::from_utf8_lossy(&swap.stderr)
    );

    // The node class example applies as written, and its local DNS proxy is resolved.
    let example = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/nodes/aksnodeclass-tuned.yaml"
    );
    let applied = hub.kubectl(&[
        "--kubeconfig",
        member.to_str().unwrap(),
        "apply",
        "-f",
        example,
    ]);
    assert!(
        applied.status.success(),
        "{}",
        String::from_utf8_lossy(&applied.stderr)
    );
    common::eventually("the example's local DNS state", 30, || {
        (kubectl(&[
            "get",
            "aksnodeclass",
            "low-latency",
            "-o",
            "jsonpath={.status.localDNSState}",
        ]) == "Enabled")
            .then_some(())
    });

    // NodeOverlay (karpenter.sh/v1alpha1) applies, reports Ready, and shows its weight wide;
    // a capacity overlay is refused saying why.
    let overlay = hub.kubectl_stdin(
        &["--kubeconfig", member.to_str().unwrap(), "apply", "-f", "-"],
        "apiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata: {name: savings-plan}\n\
         spec:\n  requirements:\n  - {key: karpenter.azure.com/sku-family, operator: In, values: [D]}\n\
         \x20 priceAdjustment: \"-20%\"\n  weight: 10\n",
    );
    assert!(
        overlay.status.success(),
        "{}",
        String::from_utf8_lossy(&overlay.stderr)
    );
    common::eventually("the overlay Ready", 30, || {
        on_member(&hub, &member, &["get", "overlays", "-o", "wide"])
            .filter(|table| table.contains("savings-plan") && table.contains("True"))
            .filter(|table| table.contains("WEIGHT") && table.contains("10"))
    });
    let refused = hub.kubectl_stdin(
        &["--kubeconfig", member.to_str().unwrap(), "apply", "-f", "-"],
        "apiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata: {name: gpus}\n\
         spec:\n  requirements: []\n  capacity: {example.com/gpu: \"1\"}\n",
    );
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr)
            .contains("spec.capacity: Forbidden: extended resources are not modelled"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
}

const WEB_WITH_BUDGET: &str = r#"
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx, resources: {requests: {cpu: 100m}}}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: default}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: web}}
"#;

/// `kubectl drain` on a simulated member goes through the `pods/eviction` subresource: pods
/// leave within their PodDisruptionBudget (the member's disruption controller keeps its
/// status), an eviction the budget does not allow is refused with kube's 429, and the drained
/// node ends cordoned with the workload running elsewhere.
#[test]
fn kubectl_drain_evicts_within_the_pod_disruption_budget() {
    let hub = fleet("1");
    let member = member_kubeconfig(&hub, "member-cluster-01");
    let kubectl = |args: &[&str]| on_member(&hub, &member, args);
    let apply = ["--kubeconfig", member.to_str().unwrap(), "apply", "-f", "-"];
    let out = hub.kubectl_stdin(&apply, WEB_WITH_BUDGET);
    assert!(out.status.success(), "{out:?}");
    let ready = |what: &str| {
        common::eventually(what, 60, || {
            let out = kubectl(&[
                "get",
                "pods",
                "-l",
                "app=web",
                "-o",
                r#"jsonpath={range .items[*]}{.spec.nodeName} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}"#,
            ])?;
            let pods: Vec<(String, String)> = out
                .lines()
                .filter_map(|l| l.split_once(' '))
                .map(|(n, r)| (n.to_string(), r.to_string()))
                .collect();
            (pods.len() == 2 && pods.iter().all(|(_, r)| r == "True")).then_some(pods)
        })
    };
    let pods = ready("two web pods ready");
    let allowing = |n: &'static str| {
        common::eventually(&format!("the budget allowing {n}"), 30, || {
            let allowed = kubectl(&[
                "get",
                "pdb",
                "web",
                "-o",
                "jsonpath={.status.disruptionsAllowed}",
            ])?;
            (allowed == n).then_some(())
        })
    };
    allowing("1");
    let node = pods[0].0.clone();

    // While the budget allows nothing, an eviction is refused with kube's 429.
    let budget = |min: &str| {
        let patch = format!(r#"{{"spec":{{"minAvailable":{min}}}}}"#);
        assert!(kubectl(&["patch", "pdb", "web", "--type=merge", "-p", &patch]).is_some());
    };
    budget("2");
    allowing("0");
    let pod = kubectl(&[
        "get",
        "pods",
        "-l",
        "app=web",
        "-o",
        "jsonpath={.items[0].metadata.name}",
    ])
    .expect("a web pod");
    let eviction = format!(
        r#"{{"apiVersion":"policy/v1","kind":"Eviction","metadata":{{"name":"{pod}","namespace":"default"}}}}"#
    );
    // `--raw` paths are absolute: the member's API is under its path on the hub.
    let path = format!("/clusters/member-cluster-01/api/v1/namespaces/default/pods/{pod}/eviction");
    let raw = [
        "--kubeconfig",
        member.to_str().unwrap(),
        "create",
        "--raw",
        &path,
        "-f",
        "-",
    ];
    let refused = hub.kubectl_stdin(&raw, &eviction);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "evicted past a zero budget");
    assert!(
        stderr.contains("Cannot evict pod as it would violate the pod's disruption budget"),
        "{stderr}"
    );
    assert!(kubectl(&["get", "pod", &pod]).is_some(), "the pod stays");
    budget("1");
    allowing("1");

    let drained = kubectl(&[
        "drain",
        &node,
        "--ignore-daemonsets",
        "--delete-emptydir-data",
        "--timeout=120s",
    ])
    .expect("kubectl drain succeeds");
    assert!(drained.contains("evicting pod default/"), "{drained}");
    assert!(drained.contains("drained"), "{drained}");
    let pods = ready("the web pods ready again");
    assert!(
        pods.iter().all(|(n, _)| *n != node),
        "a pod still on the drained node: {pods:?}"
    );
    assert_eq!(
        kubectl(&["get", "node", &node, "-o", "jsonpath={.spec.unschedulable}"]).as_deref(),
        Some("true")
    );
}

/// `flotilla up --feature-gates` takes Karpenter's own syntax and refuses a gate the
/// simulator does not model, naming the ones it does.
#[test]
fn up_refuses_a_feature_gate_it_does_not_model() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(["up", "--members", "0", "--listen", "127.0.0.1:0"])
        .args(["--feature-gates", "NodeRepair=true", "--data-dir"])
        .arg(dir.path())
        .output()
        .expect("flotilla up");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "--feature-gates: feature gate NodeRepair is not modelled by Flotilla's simulated \
             Karpenter (supported: SpotToSpotConsolidation)"
        ),
        "{stderr}"
    );
}
