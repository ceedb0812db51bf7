//! End-to-end: the metric families an operator scrapes from `flotilla up` exist, move with the
//! fleet, and are each listed in the README: controllers' reconciles and queues, fleet gauges,
//! the in-process member agents', and (on a member's /metrics) Karpenter's.

mod common;

use common::{HubProcess, eventually, fleet};
use flotilla_testkit::repo_root;

/// The value of `series` (name and labels, exactly) in `text`.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
}

fn scrape(hub: &HubProcess, path: &str) -> String {
    hub.kubectl_ok(&["get", "--raw", path])
}

/// The family names `text` declares.
fn families(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

const PLACEMENT: &str = r#"
apiVersion: v1
kind: Namespace
metadata: {name: metrics-app}
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata: {name: metrics-app}
spec:
  resourceSelectors:
    - {group: "", kind: Namespace, version: v1, name: metrics-app}
  policy: {placementType: PickAll}
"#;

#[test]
fn fleet_controller_and_agent_families_move_with_the_fleet_and_are_documented() {
    let hub = fleet("1");
    eventually("six members joined and healthy in the gauge", 60, || {
        let text = scrape(&hub, "/metrics");
        (sample(
            &text,
            r#"flotilla_member_clusters{joined="True",healthy="True"}"#,
        ) == Some(6.0))
        .then_some(())
    });
    let text = scrape(&hub, "/metrics");
    assert!(
        sample(
            &text,
            r#"controller_runtime_reconcile_total{controller="membercluster",result="success"}"#
        )
        .is_some_and(|n| n >= 6.0),
        "{text}"
    );
    assert!(
        sample(
            &text,
            r#"flotilla_agent_last_heartbeat_timestamp_seconds{member="member-cluster-01"}"#
        )
        .is_some_and(|t| t > 1.0e9),
        "{text}"
    );
    let placed_before = sample(
        &text,
        r#"controller_runtime_reconcile_total{controller="clusterresourceplacement",result="success"}"#,
    )
    .unwrap_or(0.0);

    let applied = hub.kubectl_stdin(&["apply", "-f", "-"], PLACEMENT);
    assert!(applied.status.success(), "{applied:?}");
    let text = eventually("the placement available in the gauges", 90, || {
        let text = scrape(&hub, "/metrics");
        let available = sample(
            &text,
            r#"flotilla_placements{kind="ClusterResourcePlacement",condition="ClusterResourcePlacementAvailable",status="True"}"#,
        );
        let bound = sample(
            &text,
            r#"flotilla_bindings{kind="ClusterResourceBinding",state="Bound"}"#,
        );
        (available == Some(1.0) && bound == Some(6.0)).then_some(text)
    });
    let placed = sample(
        &text,
        r#"controller_runtime_reconcile_total{controller="clusterresourceplacement",result="success"}"#,
    )
    .unwrap_or(0.0);
    assert!(placed > placed_before, "{placed} > {placed_before}");
    for series in [
        r#"controller_runtime_reconcile_time_seconds_count{controller="clusterresourceplacement"}"#,
        r#"workqueue_queue_duration_seconds_count{name="clusterresourceplacement"}"#,
        r#"workqueue_adds_total{name="work-generator-clusterresourcebinding"}"#,
        r#"flotilla_agent_work_applies_total{result="applied"}"#,
    ] {
        assert!(
            sample(&text, series).is_some_and(|n| n >= 1.0),
            "{series}:\n{text}"
        );
    }
    assert!(sample(&text, r#"workqueue_depth{name="clusterresourceplacement"}"#).is_some());

    // Every family the hub and a member publish is documented in the README.
    let member = scrape(&hub, "/clusters/member-cluster-01/metrics");
    let readme = std::fs::read_to_string(repo_root().join("README.md")).expect("README");
    let mut missing: Vec<String> = families(&text)
        .into_iter()
        .chain(families(&member))
        .filter(|name| !readme.contains(&format!("`{name}`")))
        .collect();
    missing.sort();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "families not in the README: {missing:?}"
    );
    assert!(
        member.contains("# TYPE karpenter_nodepools_usage gauge"),
        "{member}"
    );

    // The Grafana dashboard queries only families that exist.
    let dashboard: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("deploy/grafana/flotilla-fleet.json"))
            .expect("the dashboard"),
    )
    .expect("dashboard JSON");
    let known: Vec<String> = families(&text)
        .into_iter()
        .chain(families(&member))
        .collect();
    let exprs: Vec<&str> = dashboard["panels"]
        .as_array()
        .expect("panels")
        .iter()
        .flat_map(|p| p["targets"].as_array().into_iter().flatten())
        .filter_map(|t| t["expr"].as_str())
        .collect();
    assert!(exprs.len() >= 30, "{} queries", exprs.len());
    let prefixes = [
        "flotilla_",
        "controller_runtime_",
        "workqueue_",
        "karpenter_",
        "operator_",
        "apiserver_",
    ];
    for expr in exprs {
        let names = expr
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| prefixes.iter().any(|p| w.starts_with(p)));
        for name in names {
            let family = ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|s| {
                    name.strip_suffix(s)
                        .filter(|f| known.iter().any(|k| k == f))
                })
                .unwrap_or(name);
            assert!(
                known.iter().any(|k| k == family),
                "{name} in {expr:?} is not published"
            );
        }
    }
}
