//! Seed 003's NodePools on a simulated member, with the real kubectl: every example applies
//! unchanged, the pools show their node class, nodes and allowed disruptions per reason, say
//! where their node lifetime comes from, publish the figures as a metric, and bad pools are refused with the field named while
//! the stored pool stays as it was.

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

    let dir = examples_dir().join("nodes");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
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
}
