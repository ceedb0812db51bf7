//! Differential conformance: the same requests to a real kube-apiserver (built from its Go
//! module by `tools/peers/build`, started by `tools/kube/cluster`), to Flotilla's hub, and to
//! one of the hub's simulated members, answers compared.
//!
//! Every difference must be fixed or listed, with its reason, in `DEPARTURES.md` at the
//! repository root (a line `- \`CASE\`` or `- \`CASE@TARGET\``, then the reason). The test fails
//! on a difference that is not listed, and on a listed departure that no longer differs, so the
//! list stays true.

#[path = "../common/mod.rs"]
#[allow(unused_imports)]
mod common;

mod case;
mod cases;
mod target;

use std::collections::BTreeSet;

use serde_json::Value;

use case::Case;
use target::Target;

/// Departure keys listed in DEPARTURES.md: `case` or `case@target`.
fn departures() -> BTreeSet<String> {
    let path = flotilla_testkit::repo_root().join("DEPARTURES.md");
    let text = std::fs::read_to_string(&path).expect("DEPARTURES.md");
    text.lines()
        .filter_map(|l| l.strip_prefix("- `"))
        .filter_map(|l| l.split('`').next())
        .map(String::from)
        .collect()
}

/// The hub's simulated member's kubeconfig (through the hub's proxy).
fn member_kubeconfig(hub: &common::HubProcess) -> std::path::PathBuf {
    let name = flotilla_testkit::eventually("a simulated member joined", 90, || {
        let out = hub.kubectl(&["get", "memberclusters", "-o", "name"]);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.lines().next().map(|l| {
            l.trim_start_matches("membercluster.cluster.kubernetes-fleet.io/")
                .to_string()
        })
    });
    let path = common::member_kubeconfig(hub, &name);
    flotilla_testkit::eventually("the simulated member serves", 60, || {
        let out = hub.kubectl(&[
            "--kubeconfig",
            path.to_str().unwrap(),
            "get",
            "ns",
            "default",
        ]);
        out.status.success().then_some(())
    });
    path
}

/// Creates namespace `ns` on a target.
async fn namespace(target: &Target, ns: &str) {
    let body =
        serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
    let answer = target
        .request(
            "POST",
            "/api/v1/namespaces",
            "application/json",
            body.to_string().as_bytes(),
            &[],
        )
        .await;
    assert!(
        answer.code == 201 || answer.code == 409,
        "{}: namespace {ns}: {} {}",
        target.name,
        answer.code,
        answer.text
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flotilla_answers_as_kube_apiserver_does() {
    let kube_cluster = flotilla_testkit::RealCluster::start();
    let hub = common::HubProcess::start_with(&["--members", "1", "--readiness-delay", "1"]);
    let member_config = member_kubeconfig(&hub);
    let kube = Target::new("kube", &kube_cluster.kubeconfig()).await;
    let flotilla_hub = Target::new("hub", &hub.kubeconfig()).await;
    let member = Target::new("member", &member_config).await;
    let targets = [&kube, &flotilla_hub, &member];

    let listed = departures();
    let mut differences = Vec::new();
    let mut kept = BTreeSet::new();
    let cases: Vec<Case> = cases::all(&kube).await;
    for (i, case) in cases.iter().enumerate() {
        let ns = format!("diff-{i}");
        let mut observed: Vec<Vec<Value>> = Vec::new();
        for target in targets {
            namespace(target, &ns).await;
            observed.push(case.run(target, &ns).await);
        }
        for (target, seen) in targets.iter().zip(&observed).skip(1) {
            if *seen == observed[0] {
                continue;
            }
            let key = format!("{}@{}", case.id, target.name);
            if listed.contains(&key) || listed.contains(&case.id) {
                kept.insert(if listed.contains(&key) {
                    key
                } else {
                    case.id.clone()
                });
                continue;
            }
            let steps: Vec<String> = seen
                .iter()
                .zip(&observed[0])
                .enumerate()
                .filter(|(_, (a, b))| a != b)
                .map(|(step, (theirs, reference))| {
                    format!(
                        "  step {step}\n    kube:   {reference}\n    {:<7} {theirs}",
                        format!("{}:", target.name)
                    )
                })
                .collect();
            differences.push(format!("{key}:\n{}", steps.join("\n")));
        }
    }
    let stale: Vec<&String> = listed
        .iter()
        .filter(|d| !kept.contains(*d))
        .filter(|d| {
            cases
                .iter()
                .any(|c| c.id == d.split('@').next().unwrap_or_default())
        })
        .collect();
    let report = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("differential-report.txt");
    std::fs::write(&report, differences.join("\n")).expect("write the report");
    eprintln!(
        "differential: {} cases on {} targets; {} departures kept, {} unexplained differences (report: {})",
        cases.len(),
        targets.len(),
        kept.len(),
        differences.len(),
        report.display()
    );
    assert!(
        differences.is_empty(),
        "{} differences from kube-apiserver (fix them, or list them with their reason in DEPARTURES.md):\n{}",
        differences.len(),
        differences.join("\n")
    );
    assert!(
        stale.is_empty(),
        "departures listed in DEPARTURES.md that no longer differ (remove them): {stale:?}"
    );
}
