//! Seed documents 001 (property-based scheduling) and 004 (rollout strategy) end to end: every
//! YAML example applied with the real kubectl, unchanged but for its `- ...` placeholder, on a
//! fleet whose members carry the document's values, behaves as the document says.
//!
//! - Seed 001 runs on `examples/fleets/seed-001.yaml`: the document's three clusters with its
//!   available CPU (100, 20, 10) and cost per core (1, 0.2, 0.1), plus node counts, regions and
//!   `env` labels chosen so that each example selects a telling set. Every cluster's verdict,
//!   score and reason is read from the ClusterSchedulingPolicySnapshot, and the arithmetic is
//!   redone in the comments.
//! - Seed 004's rolling update runs on the default six-member fleet: changing a Deployment
//!   rolls out one cluster at a time, and every observation of the bindings respects
//!   `maxUnavailable` and `maxSurge`. Its External example places nothing by itself.

mod common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use common::{
    HubProcess, PICK_ALL_APP, app, eventually, examples_dir, get_json, member_kubeconfig,
};
use serde_json::Value;

/// Waits until `count` member clusters are joined and report their properties.
fn wait_joined(hub: &HubProcess, count: usize) {
    eventually(&format!("{count} members joined"), 60, || {
        let list = get_json(hub, &["memberclusters"]);
        let items = list["items"].as_array()?;
        let ready = items
            .iter()
            .filter(|m| {
                let joined = m["status"]["conditions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|c| c["type"] == "Joined" && c["status"] == "True");
                joined && m["status"]["properties"]["kubernetes-fleet.io/node-count"].is_object()
            })
            .count();
        (items.len() == count && ready == count).then_some(())
    });
}

/// One cluster's entry in a policy snapshot's `status.targetClusters`.
#[derive(Debug, Clone, PartialEq)]
struct Verdict {
    selected: bool,
    affinity: Option<i64>,
    reason: String,
}

/// The verdicts of policy snapshot `<crp>-0`, by cluster, once it is scheduled for the
/// placement's current generation; also the `Scheduled` condition's status and message.
fn scheduled(hub: &HubProcess, crp: &str) -> (BTreeMap<String, Verdict>, String, String) {
    eventually(&format!("{crp}-0 scheduled"), 30, || {
        let placement = get_json(hub, &["crp", crp]);
        let generation = placement["metadata"]["generation"].as_i64()?;
        let out = hub.kubectl(&[
            "get",
            "clusterschedulingpolicysnapshots",
            &format!("{crp}-0"),
            "-o",
            "json",
        ]);
        if !out.status.success() {
            return None;
        }
        let snapshot: Value = serde_json::from_slice(&out.stdout).ok()?;
        // The snapshot belongs to this placement object (not a predecessor of the same name).
        let owner = &snapshot["metadata"]["ownerReferences"][0]["uid"];
        if *owner != placement["metadata"]["uid"] {
            return None;
        }
        let status = &snapshot["status"];
        if status["observedCRPGeneration"].as_i64() != Some(generation) {
            return None;
        }
        let condition = status["conditions"]
            .as_array()?
            .iter()
            .find(|c| c["type"] == "Scheduled")?
            .clone();
        let verdicts = status["targetClusters"]
            .as_array()?
            .iter()
            .map(|t| {
                let verdict = Verdict {
                    selected: t["selected"].as_bool().unwrap_or(false),
                    affinity: t["clusterScore"]["affinityScore"].as_i64(),
                    reason: t["reason"].as_str().unwrap_or_default().to_string(),
                };
                (t["clusterName"].as_str().unwrap().to_string(), verdict)
            })
            .collect();
        Some((
            verdicts,
            condition["status"].as_str()?.to_string(),
            condition["message"].as_str()?.to_string(),
        ))
    })
}

/// The clusters of `verdicts` that are selected, sorted.
fn selected(verdicts: &BTreeMap<String, Verdict>) -> Vec<&str> {
    verdicts
        .iter()
        .filter(|(_, v)| v.selected)
        .map(|(name, _)| name.as_str())
        .collect()
}

/// The clusters named in the bindings of placement `crp`, sorted.
fn bound_clusters(hub: &HubProcess, crp: &str) -> Vec<String> {
    let list = get_json(
        hub,
        &[
            "clusterresourcebindings",
            "-l",
            &format!("kubernetes-fleet.io/parent-CRP={crp}"),
        ],
    );
    let mut names: Vec<String> = list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["spec"]["targetCluster"].as_str().map(String::from))
        .collect();
    names.sort();
    names
}

/// Applies `examples/FILE` unchanged.
fn apply_example(hub: &HubProcess, file: &str) {
    let path = examples_dir().join(file);
    hub.kubectl_ok(&["apply", "-f", path.to_str().unwrap()]);
}

/// Deletes placement `crp` and waits until its policy snapshots are gone too.
fn delete_placement(hub: &HubProcess, crp: &str) {
    hub.kubectl_ok(&["delete", "crp", crp, "--timeout=60s"]);
    eventually(&format!("{crp}'s snapshots gone"), 30, || {
        let out = hub.kubectl_ok(&[
            "get",
            "clusterschedulingpolicysnapshots",
            "-l",
            &format!("kubernetes-fleet.io/parent-CRP={crp}"),
            "-o",
            "name",
        ]);
        out.trim().is_empty().then_some(())
    });
}

/// The fleet of seed 001:
///
/// | member     | region | nodes | total CPU | available CPU | cost per core | env  |
/// |------------|--------|-------|-----------|---------------|---------------|------|
/// | bravelion  | east   | 10    | 160       | 100           | 1             |      |
/// | smartfish  | east   | 4     | 32        | 20            | 0.2           | prod |
/// | jumpingcat | west   | 5     | 20        | 10            | 0.1           | prod |
#[test]
fn seed_001_examples_select_and_score_as_the_document_says() {
    let fleet = examples_dir().join("fleets/seed-001.yaml");
    let hub = HubProcess::start_with(&["--fleet", fleet.to_str().unwrap()]);
    wait_joined(&hub, 3);
    hub.create("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: test-namespace\n");

    // The members report the document's values (what the printer columns show).
    let members = get_json(&hub, &["memberclusters"]);
    let reported: BTreeMap<&str, [&str; 3]> = members["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let property = |name: &str| {
                m["status"]["properties"][name]["value"]
                    .as_str()
                    .unwrap_or_default()
            };
            let available_cpu = m["status"]["resourceUsage"]["available"]["cpu"]
                .as_str()
                .unwrap_or_default();
            (
                m["metadata"]["name"].as_str().unwrap(),
                [
                    available_cpu,
                    property("kubernetes.azure.com/per-cpu-core-cost"),
                    property("kubernetes.azure.com/node-count"),
                ],
            )
        })
        .collect();
    assert_eq!(
        reported,
        BTreeMap::from([
            ("bravelion", ["100", "1", "10"]),
            ("smartfish", ["20", "0.2", "4"]),
            ("jumpingcat", ["10", "0.1", "5"]),
        ])
    );

    // 1. PickAll with `kubernetes.azure.com/node-count Ge 5`: 10 ≥ 5 and 5 ≥ 5 pass, 4 does
    //    not. PickAll does not score (every selected cluster records 0).
    apply_example(&hub, "crp-pickall-property-selector.yaml");
    let (verdicts, status, _) = scheduled(&hub, "crp");
    assert_eq!(
        selected(&verdicts),
        ["bravelion", "jumpingcat"],
        "{verdicts:#?}"
    );
    assert_eq!(status, "True");
    assert_eq!(
        verdicts["smartfish"].reason,
        "does not match any required cluster selector term: clusterSelectorTerms[0]: property \
         kubernetes.azure.com/node-count is 4, not >= 5"
    );
    eventually("bindings for the selected clusters", 30, || {
        (bound_clusters(&hub, "crp") == ["bravelion", "jumpingcat"]).then_some(())
    });
    delete_placement(&hub, "crp");

    // 2. PickAll with `region: east` AND `node-count Ge 5` in one term: bravelion (east, 10)
    //    only; smartfish is east but has 4 nodes, jumpingcat has 5 nodes but is west.
    apply_example(&hub, "crp-pickall-label-and-property-selector.yaml");
    let (verdicts, status, _) = scheduled(&hub, "crp");
    assert_eq!(selected(&verdicts), ["bravelion"], "{verdicts:#?}");
    assert_eq!(status, "True");
    assert!(
        verdicts["smartfish"]
            .reason
            .ends_with("property kubernetes.azure.com/node-count is 4, not >= 5"),
        "{verdicts:#?}"
    );
    assert!(
        verdicts["jumpingcat"]
            .reason
            .ends_with(r#"label requirement region=east is not met (region="west")"#),
        "{verdicts:#?}"
    );
    eventually("a binding for bravelion only", 30, || {
        (bound_clusters(&hub, "crp") == ["bravelion"]).then_some(())
    });
    delete_placement(&hub, "crp");

    // 3. PickN 10, node count Descending, weight 20. min 4, max 10, so
    //    bravelion (10−4)/(10−4)·20 = 20, jumpingcat (5−4)/6·20 = 3.33 → 3, smartfish 0.
    //    All three pass and 3 < 10 are found: the policy is not fulfilled.
    apply_example(&hub, "crp-pickn-metric-sorter.yaml");
    let (verdicts, status, message) = scheduled(&hub, "crp");
    assert_eq!(
        scores(&verdicts),
        [("bravelion", 20), ("jumpingcat", 3), ("smartfish", 0)]
    );
    assert_eq!(selected(&verdicts).len(), 3);
    assert_eq!(status, "False");
    assert!(message.contains("found 3 cluster(s)"), "{message}");
    delete_placement(&hub, "crp");

    // 4. PickN 10, total CPU Descending, weight 20, only for `env: prod`. The range spans every
    //    cluster: min 20 (jumpingcat), max 160 (bravelion). smartfish (32−20)/(160−20)·20 =
    //    1.71 → 2; jumpingcat (20−20)/140·20 = 0; bravelion is not prod, so it gets nothing
    //    although its CPU is the largest (it would get 20).
    apply_example(&hub, "crp-pickn-label-and-metric-sorter.yaml");
    let (verdicts, _, _) = scheduled(&hub, "crp");
    assert_eq!(
        scores(&verdicts),
        [("bravelion", 0), ("jumpingcat", 0), ("smartfish", 2)]
    );
    delete_placement(&hub, "crp");

    // 5. The document's first table: available CPU Descending, weight 100, two clusters wanted.
    //    min 10, max 100: bravelion (100−10)/(100−10)·100 = 100, smartfish (20−10)/90·100 =
    //    11.11 → 11, jumpingcat (10−10)/90·100 = 0. The best two are picked; jumpingcat's
    //    verdict says why, with its score, and keeps saying it (later cycles evaluate nothing).
    apply_example(&hub, "crp-pickn-available-cpu.yaml");
    let (verdicts, status, _) = scheduled(&hub, "crp");
    assert_eq!(
        scores(&verdicts),
        [("bravelion", 100), ("jumpingcat", 0), ("smartfish", 11)]
    );
    assert_eq!(selected(&verdicts), ["bravelion", "smartfish"]);
    assert_eq!(status, "True");
    let lost = "Cluster \"jumpingcat\" does not score high enough (affinity score: 0, topology \
                spread score: 0)";
    assert_eq!(verdicts["jumpingcat"].reason, lost);
    eventually("both picked clusters bound", 30, || {
        (bound_clusters(&hub, "crp") == ["bravelion", "smartfish"]).then_some(())
    });
    wait_placement_available(&hub, "crp");
    let (later, _, _) = scheduled(&hub, "crp");
    assert_eq!(
        later, verdicts,
        "the verdicts changed once the placement was full"
    );
    delete_placement(&hub, "crp");

    // 6. The document's second table: cost per core Ascending, weight 100, two wanted.
    //    min 0.1, max 1: bravelion 1 − (1−0.1)/(1−0.1) = 0 → 0, smartfish 1 − (0.2−0.1)/0.9 =
    //    0.8889 → 89, jumpingcat 1 − 0 = 1 → 100. jumpingcat and smartfish are picked.
    apply_example(&hub, "crp-pickn-cpu-cost.yaml");
    let (verdicts, _, _) = scheduled(&hub, "crp");
    assert_eq!(
        scores(&verdicts),
        [("bravelion", 0), ("jumpingcat", 100), ("smartfish", 89)]
    );
    assert_eq!(selected(&verdicts), ["jumpingcat", "smartfish"]);
    assert!(
        verdicts["bravelion"]
            .reason
            .contains("does not score high enough"),
        "{verdicts:#?}"
    );
    delete_placement(&hub, "crp");

    // Seed 004's External strategy: the placement is scheduled, but nothing is rolled out
    // ("when the CRP is submitted, no placement happens"): bindings stay Scheduled, no Work
    // is written, and the placement says an external controller is in charge.
    apply_example(&hub, "crp-staged-update.yaml");
    let (verdicts, _, _) = scheduled(&hub, "crp-staged-update-sample");
    assert_eq!(
        selected(&verdicts),
        ["bravelion", "jumpingcat", "smartfish"]
    );
    let reason = eventually("RolloutStarted reported", 30, || {
        let crp = get_json(&hub, &["crp", "crp-staged-update-sample"]);
        crp["status"]["conditions"]
            .as_array()?
            .iter()
            .find(|c| c["type"] == "ClusterResourcePlacementRolloutStarted")
            .and_then(|c| c["reason"].as_str().map(String::from))
    });
    assert_eq!(reason, "RolloutControlledByExternalController");
    let bindings = get_json(&hub, &["clusterresourcebindings"]);
    let states: Vec<&str> = bindings["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["spec"]["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["Scheduled"; 3]);
    let works = hub.kubectl_ok(&["get", "works", "-A", "-o", "name"]);
    assert!(works.trim().is_empty(), "works written: {works}");
    // The staged strategy and run of the same document are accepted as written.
    apply_example(&hub, "staged-update-strategy.yaml");
    apply_example(&hub, "staged-update-run.yaml");
    hub.kubectl_ok(&[
        "get",
        "clusterstagedupdatestrategy",
        "example-staged-strategy",
    ]);
    hub.kubectl_ok(&["get", "clusterstagedupdaterun", "example-staged-update-run"]);
}

/// Every cluster's affinity score (missing scores fail the test), by name.
fn scores(verdicts: &BTreeMap<String, Verdict>) -> Vec<(&str, i64)> {
    verdicts
        .iter()
        .map(|(name, v)| {
            let score = v
                .affinity
                .unwrap_or_else(|| panic!("{name} has no score: {verdicts:#?}"));
            (name.as_str(), score)
        })
        .collect()
}

/// Waits until placement `name` is Available for its current generation.
fn wait_placement_available(hub: &HubProcess, name: &str) {
    eventually(&format!("{name} Available"), 60, || {
        let crp = get_json(hub, &["crp", name]);
        let generation = &crp["metadata"]["generation"];
        crp["status"]["conditions"]
            .as_array()?
            .iter()
            .any(|c| {
                c["type"] == "ClusterResourcePlacementAvailable"
                    && c["status"] == "True"
                    && c["observedGeneration"] == *generation
            })
            .then_some(())
    });
}

/// What one look at a placement's bindings found.
#[derive(Debug, Default)]
struct BindingsView {
    /// Scheduled + Bound bindings: the clusters the scheduler targets.
    targeted: usize,
    /// Bound + Unscheduled bindings not yet deleted: the clusters holding the resources.
    holding: usize,
    /// Holding bindings whose `Available` condition is True for their current generation:
    /// the rollout's "ready" (KubeFleet's `isBindingReady`; a Deployment's availability is
    /// tracked, so no unavailable period applies).
    available: usize,
    /// Resource indexes of the Bound bindings, by cluster.
    index_by_cluster: BTreeMap<String, String>,
}

/// The bindings of placement `crp`, in one consistent list.
fn look_at_bindings(hub: &HubProcess, crp: &str) -> BindingsView {
    let list = get_json(
        hub,
        &[
            "clusterresourcebindings",
            "-l",
            &format!("kubernetes-fleet.io/parent-CRP={crp}"),
        ],
    );
    let mut view = BindingsView::default();
    for binding in list["items"].as_array().into_iter().flatten() {
        let state = binding["spec"]["state"].as_str().unwrap_or_default();
        let deleting = binding["metadata"]["deletionTimestamp"].is_string();
        let generation = &binding["metadata"]["generation"];
        let available = binding["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| {
                c["type"] == "Available"
                    && c["status"] == "True"
                    && c["observedGeneration"] == *generation
            });
        if matches!(state, "Scheduled" | "Bound") {
            view.targeted += 1;
        }
        if matches!(state, "Bound" | "Unscheduled") && !deleting {
            view.holding += 1;
            view.available += usize::from(available);
        }
        if state == "Bound" {
            // `<crp>-<index>-snapshot` (or `<crp>-<index>-<sub>` for later chunks).
            let snapshot = binding["spec"]["resourceSnapshotName"]
                .as_str()
                .unwrap_or_default();
            let index = snapshot
                .strip_prefix(&format!("{crp}-"))
                .and_then(|rest| rest.split('-').next())
                .unwrap_or_default()
                .to_string();
            let cluster = binding["spec"]["targetCluster"]
                .as_str()
                .unwrap_or_default();
            view.index_by_cluster.insert(cluster.to_string(), index);
        }
    }
    view
}

/// The rolling update of one placement, observed from outside.
struct Rollout<'a> {
    hub: &'a HubProcess,
    crp: &'a str,
    /// The target number N: Scheduled + Bound for PickAll, numberOfClusters for PickN.
    target: usize,
    /// maxUnavailable as a count (percentages of N rounded up).
    max_unavailable: usize,
    /// maxSurge as a count.
    max_surge: usize,
}

/// What [`Rollout::observe`] saw.
#[derive(Debug, Default)]
struct Observed {
    /// Looks at the bindings.
    looks: usize,
    /// Looks at the bindings while the rollout was unfinished.
    in_progress: usize,
    /// Looks at which some clusters held the old index and others the new one.
    mixed: usize,
    /// Looks at the placement in which a cluster waited with `RolloutStarted` False.
    held_back: usize,
}

impl Rollout<'_> {
    /// Polls the bindings and the placement's per-cluster statuses as fast as kubectl allows
    /// until every cluster is Available at `new_index`, asserting at every look that at most
    /// `maxUnavailable` of the N targeted clusters are unavailable and at most N + `maxSurge`
    /// hold the resources.
    fn observe(&self, old_index: &str, new_index: &str) -> Observed {
        let mut seen = Observed::default();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let view = look_at_bindings(self.hub, self.crp);
            seen.looks += 1;
            let context = format!("look {} at {}: {view:?}", seen.looks, self.crp);
            assert_eq!(view.targeted, self.target, "{context}");
            assert!(
                self.target - view.available.min(self.target) <= self.max_unavailable,
                "more than maxUnavailable {} of {} clusters unavailable; {context}",
                self.max_unavailable,
                self.target
            );
            assert!(
                view.holding <= self.target + self.max_surge,
                "more than N + maxSurge = {} clusters hold the resources; {context}",
                self.target + self.max_surge
            );
            let indexes: Vec<&str> = view.index_by_cluster.values().map(String::as_str).collect();
            assert!(
                indexes.iter().all(|i| *i == old_index || *i == new_index),
                "{context}"
            );
            let at_new = indexes.iter().filter(|i| **i == new_index).count();
            if at_new > 0 && at_new < indexes.len() {
                seen.mixed += 1;
            }

            // The placement's per-cluster view: a cluster whose rollout started and is not
            // Available yet is one of the (at most maxUnavailable) clusters in flight; one
            // whose rollout has not started still runs the old resources.
            let crp = get_json(self.hub, &["crp", self.crp]);
            let statuses = crp["status"]["placementStatuses"].as_array().cloned();
            let mut in_flight = 0;
            for status in statuses.iter().flatten() {
                let condition = |type_: &str| {
                    status["conditions"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .find(|c| c["type"] == type_)
                        .cloned()
                        .unwrap_or_default()
                };
                let started = condition("RolloutStarted");
                if started["status"] == "True" && condition("Available")["status"] != "True" {
                    in_flight += 1;
                }
                if started["status"] == "False" && started["reason"] == "RolloutNotStartedYet" {
                    seen.held_back += 1;
                }
            }
            assert!(
                in_flight <= self.max_unavailable,
                "{in_flight} clusters in flight at once: {}",
                serde_json::to_string_pretty(&crp["status"]["placementStatuses"]).unwrap()
            );

            let finished = at_new == self.target && view.available == self.target;
            let placement_done = crp["status"]["observedResourceIndex"] == new_index
                && crp["status"]["conditions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|c| {
                        c["type"] == "ClusterResourcePlacementAvailable"
                            && c["status"] == "True"
                            && c["observedGeneration"] == crp["metadata"]["generation"]
                    });
            if finished && placement_done {
                return seen;
            }
            if !finished {
                seen.in_progress += 1;
            }
            assert!(
                Instant::now() < deadline,
                "the rollout did not finish in 60 s; {context}"
            );
        }
    }
}

/// The image of Deployment `web` in `namespace` on `member`.
fn member_image(hub: &HubProcess, member: &str, namespace: &str) -> String {
    let config = member_kubeconfig(hub, member);
    hub.kubectl_ok(&[
        "--kubeconfig",
        config.to_str().unwrap(),
        "get",
        "deployment",
        "web",
        "-n",
        namespace,
        "-o",
        "jsonpath={.spec.template.spec.containers[0].image}",
    ])
}

/// Seed 004: changing the Deployment rolls out respecting maxUnavailable and maxSurge, on the
/// default six members (pods become Ready 2 simulated seconds after scheduling, so each
/// cluster takes a moment to become Available again and the rollout can be watched).
#[test]
fn seed_004_rolling_updates_respect_max_unavailable_and_max_surge() {
    let hub = HubProcess::start_with(&["--readiness-delay", "2"]);
    wait_joined(&hub, 6);
    let members: Vec<String> = (1..=6).map(|i| format!("member-cluster-0{i}")).collect();

    // A PickAll placement: N = 6 targeted clusters, maxUnavailable 1, maxSurge 1. At least
    // 6 − 1 = 5 clusters are available at every moment and at most 6 + 1 = 7 hold the
    // resources; with nothing added or removed, the update goes one cluster at a time.
    hub.create(&app("app", 1));
    hub.create(PICK_ALL_APP);
    wait_placement_available(&hub, "app");
    assert_eq!(bound_clusters(&hub, "app"), members);
    hub.kubectl_ok(&[
        "set",
        "image",
        "-n",
        "app",
        "deployment/web",
        "web=nginx:1.28",
    ]);
    let rollout = Rollout {
        hub: &hub,
        crp: "app",
        target: 6,
        max_unavailable: 1,
        max_surge: 1,
    };
    let seen = rollout.observe("0", "1");
    // Six clusters one at a time: many looks in between, some with both versions placed, and
    // clusters visibly held back by maxUnavailable.
    assert!(seen.in_progress >= 2, "{seen:?}");
    assert!(seen.mixed >= 2, "{seen:?}");
    assert!(seen.held_back >= 1, "{seen:?}");
    for member in &members {
        assert_eq!(member_image(&hub, member, "app"), "nginx:1.28", "{member}");
    }

    // Seed 004's example as published selects on `fleet.azure.com/___location`, the page's
    // garbled `fleet.azure.com/location`: it applies, but that is not a valid label key, so no
    // cluster can match it, and every cluster's verdict says so.
    hub.create(&app("test-namespace", 1));
    apply_example(&hub, "crp-rolling-update.yaml");
    let (verdicts, status, message) = scheduled(&hub, "crp-example");
    assert!(selected(&verdicts).is_empty(), "{verdicts:#?}");
    assert_eq!(status, "False");
    assert!(message.contains("found 0 cluster(s)"), "{message}");
    assert!(
        verdicts
            .values()
            .all(|v| v.reason.contains("label selector is invalid")
                && v.reason.contains("fleet.azure.com/___location")),
        "{verdicts:#?}"
    );
    delete_placement(&hub, "crp-example");

    // With the placeholder filled in (the label Flotilla sets from each member's region), it
    // picks the two members in westus. N = numberOfClusters = 2, maxUnavailable 1, maxSurge
    // 50% of 2 = 1: one cluster at a time again, at most 3 holding the resources.
    let path = examples_dir().join("crp-rolling-update.yaml");
    let filled = std::fs::read_to_string(path)
        .unwrap()
        .replace("fleet.azure.com/___location", "fleet.azure.com/location");
    let out = hub.kubectl_stdin(&["apply", "-f", "-"], &filled);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (verdicts, status, _) = scheduled(&hub, "crp-example");
    assert_eq!(
        selected(&verdicts),
        ["member-cluster-02", "member-cluster-05"],
        "{verdicts:#?}"
    );
    assert_eq!(status, "True");
    wait_placement_available(&hub, "crp-example");
    hub.kubectl_ok(&[
        "set",
        "image",
        "-n",
        "test-namespace",
        "deployment/web",
        "web=nginx:1.28",
    ]);
    let rollout = Rollout {
        hub: &hub,
        crp: "crp-example",
        target: 2,
        max_unavailable: 1,
        max_surge: 1,
    };
    let seen = rollout.observe("0", "1");
    assert!(seen.in_progress >= 2, "{seen:?}");
    assert!(seen.mixed >= 1, "{seen:?}");
    for member in ["member-cluster-02", "member-cluster-05"] {
        assert_eq!(
            member_image(&hub, member, "test-namespace"),
            "nginx:1.28",
            "{member}"
        );
    }
}
