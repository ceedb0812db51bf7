//! The Work applier's pure core end to end against a simulated member (a map of objects):
//! plan a Work, decide each manifest, write what the decision says, judge availability and
//! roll up the Work status, pass after pass, as the agent's shell will.

use std::collections::BTreeMap;

use flotilla_api::placement::applied_work::AppliedResourceMeta;
use flotilla_api::placement::strategy::{ApplyStrategyType, WhenToApply};
use flotilla_api::placement::work::{ManifestCondition, WorkResourceIdentifier, WorkStatus};
use flotilla_apimachinery::patch::{BuiltinStrategy, merge_patch};
use flotilla_member::work::{
    AppliedWorkOwner, Decision, Input, ManifestResult, ProcessingResult, Strategy, applied,
    availability, decide, plan, work_status,
};
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use serde_json::{Value, json};

/// A member cluster reduced to what the applier sees: objects by kind, namespace and name.
#[derive(Default)]
struct Member {
    objects: BTreeMap<(String, String, String), Value>,
    /// Kinds in the order they were written.
    writes: Vec<String>,
    next_uid: u32,
}

fn key(id: &WorkResourceIdentifier) -> (String, String, String) {
    (id.kind.clone(), id.namespace.clone(), id.name.clone())
}

impl Member {
    fn get(&self, id: &WorkResourceIdentifier) -> Option<&Value> {
        self.objects.get(&key(id))
    }

    /// Creates or merges `object`, as an API server would: UID on create, generation bumped
    /// when the spec or data changes.
    fn write(&mut self, id: &WorkResourceIdentifier, object: &Value) -> Value {
        self.writes.push(id.kind.clone());
        let stored = match self.objects.get(&key(id)) {
            Some(existing) => {
                let mut merged = merge_patch(existing, object);
                let changed = merged.get("spec") != existing.get("spec")
                    || merged.get("data") != existing.get("data");
                let generation = existing["metadata"]["generation"].as_i64().unwrap_or(1);
                merged["metadata"]["generation"] = json!(generation + i64::from(changed));
                merged
            }
            None => {
                self.next_uid += 1;
                let mut created = object.clone();
                created["metadata"]["uid"] = json!(format!("uid-{}", self.next_uid));
                created["metadata"]["generation"] = json!(1);
                created
            }
        };
        self.objects.insert(key(id), stored.clone());
        stored
    }

    fn edit(&mut self, kind: &str, name: &str, edit: impl FnOnce(&mut Value)) {
        let object = self
            .objects
            .get_mut(&(kind.to_owned(), "shop".to_owned(), name.to_owned()))
            .unwrap();
        edit(object);
    }
}

fn owner() -> AppliedWorkOwner {
    AppliedWorkOwner {
        name: "shop-work".into(),
        uid: "aw-uid".into(),
    }
}

/// One pass of the applier over `manifests`.
fn pass(
    member: &mut Member,
    manifests: &[Value],
    strategy: Strategy,
    previous: &WorkStatus,
    now: Timestamp,
) -> (WorkStatus, Vec<AppliedResourceMeta>) {
    let owner = owner();
    let plan = plan(manifests);
    let mut results: Vec<ManifestResult> =
        plan.rejected.iter().map(ManifestResult::rejected).collect();
    for wave in &plan.waves {
        for planned in &wave.manifests {
            let live = member.get(&planned.identifier).cloned();
            let input = Input {
                manifest: planned.manifest,
                live: live.as_ref(),
                strategy,
                owner: &owner,
                lists: &BuiltinStrategy,
            };
            let (outcome, object) = match decide(&input) {
                Decision::Create { object, .. } | Decision::Apply { object, .. } => {
                    let written = member.write(&planned.identifier, &object);
                    (applied(&input, &written), Some(written))
                }
                Decision::Skip { outcome, take_over } => {
                    if let Some(reference) = take_over {
                        let patch = json!({"metadata": {"ownerReferences": [reference]}});
                        member.write(&planned.identifier, &patch);
                    }
                    (outcome, member.get(&planned.identifier).cloned())
                }
                Decision::Fail(outcome) => (outcome, live),
            };
            let field = |name: &str| object.as_ref().map(|o| o["metadata"][name].clone());
            results.push(ManifestResult {
                identifier: planned.identifier.clone(),
                availability: object
                    .as_ref()
                    .filter(|_| outcome.result.is_applied())
                    .map(availability),
                live_generation: field("generation").and_then(|g| g.as_i64()),
                live_uid: field("uid").and_then(|u| u.as_str().map(str::to_owned)),
                outcome,
            });
        }
    }
    let resources = flotilla_member::work::applied_resources(&[], &results);
    (work_status(previous, 1, strategy, &results, now), resources)
}

fn at(minute: u32) -> Timestamp {
    format!("2026-03-01T10:{minute:02}:00Z").parse().unwrap()
}

fn condition<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// (status, reason) of the condition `type_`, if set.
fn state(conditions: &[Condition], type_: &str) -> Option<(String, String)> {
    condition(conditions, type_).map(|c| (c.status.clone(), c.reason.clone()))
}

fn is(status: &str, reason: &str) -> Option<(String, String)> {
    Some((status.to_owned(), reason.to_owned()))
}

fn entry<'a>(status: &'a WorkStatus, name: &str) -> &'a ManifestCondition {
    status
        .manifest_conditions
        .iter()
        .find(|m| m.identifier.name == name)
        .unwrap()
}

fn shop(config: &str) -> Vec<Value> {
    vec![
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "web", "namespace": "shop"},
               "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                        "template": {"metadata": {"labels": {"app": "web"}},
                                     "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}}),
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "cfg", "namespace": "shop"}, "data": {"mode": config}}),
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}),
    ]
}

#[test]
fn applies_waits_for_availability_guards_drift_and_follows_the_hub() {
    let strategy = Strategy {
        when_to_apply: WhenToApply::IfNotDrifted,
        ..Strategy::default()
    };
    let mut member = Member::default();

    // Pass 1: everything is created, namespace first; the Deployment is not rolled out yet.
    let (status, resources) = pass(
        &mut member,
        &shop("a"),
        strategy,
        &WorkStatus::default(),
        at(0),
    );
    assert_eq!(member.writes, vec!["Namespace", "ConfigMap", "Deployment"]);
    assert_eq!(
        state(&status.conditions, "Applied"),
        is("True", "AllManifestsApplied")
    );
    assert_eq!(
        state(&status.conditions, "Available"),
        is("False", "SomeManifestsAreNotAvailable")
    );
    let web = &entry(&status, "web").conditions;
    assert_eq!(
        state(web, "Available"),
        is("False", "ManifestNotAvailableYet")
    );
    assert!(
        condition(web, "Available")
            .unwrap()
            .message
            .contains("0/2 replicas available")
    );
    assert_eq!(resources.len(), 3);
    assert_eq!(
        member.get(&entry(&status, "cfg").identifier).unwrap()["metadata"]["ownerReferences"][0]["uid"],
        "aw-uid"
    );

    // The member's deployment controller rolls it out: pass 2 finds the Work available.
    member.edit("Deployment", "web", |d| {
        d["status"] = json!({"observedGeneration": 1, "replicas": 2, "updatedReplicas": 2,
                             "availableReplicas": 2, "readyReplicas": 2});
    });
    let (status, _) = pass(&mut member, &shop("a"), strategy, &status, at(1));
    assert_eq!(
        state(&status.conditions, "Available"),
        is("True", "AllManifestsAvailable")
    );
    assert_eq!(
        condition(&status.conditions, "Applied")
            .unwrap()
            .last_transition_time
            .0,
        at(0)
    );

    // Someone edits the ConfigMap on the member: IfNotDrifted leaves it alone and reports it.
    member.edit("ConfigMap", "cfg", |c| c["data"]["mode"] = json!("edited"));
    let (status, _) = pass(&mut member, &shop("a"), strategy, &status, at(2));
    let cfg = entry(&status, "cfg");
    assert_eq!(
        state(&cfg.conditions, "Applied"),
        is("False", "FoundDrifts")
    );
    let drift = cfg.drift_details.as_ref().unwrap();
    assert_eq!(drift.observed_drifts[0].path, "/data/mode");
    assert_eq!(
        drift.observed_drifts[0].value_in_member.as_deref(),
        Some("edited")
    );
    assert_eq!(drift.observed_drifts[0].value_in_hub.as_deref(), Some("a"));
    assert_eq!(
        state(&status.conditions, "Applied"),
        is("False", "SomeManifestsAreNotApplied")
    );
    assert_eq!(state(&status.conditions, "Available"), None);

    // The hub changes the manifest: a new manifest is not drift, so it is applied.
    let (status, _) = pass(&mut member, &shop("b"), strategy, &status, at(3));
    let cfg = entry(&status, "cfg");
    assert_eq!(state(&cfg.conditions, "Applied"), is("True", "Applied"));
    assert!(cfg.drift_details.is_none());
    assert_eq!(member.get(&cfg.identifier).unwrap()["data"]["mode"], "b");
    assert_eq!(
        state(&status.conditions, "Available"),
        is("True", "AllManifestsAvailable")
    );
}

#[test]
fn refuses_objects_of_other_placements_and_reports_diffs_without_writing() {
    let mut member = Member::default();
    let manifests = shop("a");
    let plan = plan(&manifests);
    let cfg_id = plan
        .waves
        .iter()
        .flat_map(|w| &w.manifests)
        .find(|m| m.identifier.kind == "ConfigMap")
        .unwrap()
        .identifier
        .clone();
    member.write(
        &cfg_id,
        &json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "cfg", "namespace": "shop",
                             "ownerReferences": [{"apiVersion": "placement.kubernetes-fleet.io/v1beta1",
                                                  "kind": "AppliedWork", "name": "other", "uid": "x"}]},
                "data": {"mode": "theirs"}}),
    );
    member.writes.clear();

    let (status, _) = pass(
        &mut member,
        &manifests,
        Strategy::default(),
        &WorkStatus::default(),
        at(0),
    );
    assert_eq!(
        state(&entry(&status, "cfg").conditions, "Applied"),
        is("False", "FailedToTakeOver")
    );
    assert_eq!(member.get(&cfg_id).unwrap()["data"]["mode"], "theirs");

    let report_diff = Strategy {
        type_: ApplyStrategyType::ReportDiff,
        ..Strategy::default()
    };
    let mut fresh = Member::default();
    let (status, resources) = pass(
        &mut fresh,
        &manifests,
        report_diff,
        &WorkStatus::default(),
        at(0),
    );
    assert!(fresh.writes.is_empty() && resources.is_empty());
    assert_eq!(
        state(&status.conditions, "DiffReported"),
        is("True", "AllManifestsDiffReported")
    );
    assert_eq!(state(&status.conditions, "Applied"), None);
    let web = entry(&status, "web");
    assert_eq!(
        state(&web.conditions, "DiffReported"),
        is("True", "FoundDiff")
    );
    assert_eq!(
        web.diff_details.as_ref().unwrap().observed_diffs[0].path,
        "/"
    );
    assert_eq!(
        ProcessingResult::FoundDiff.reason(),
        state(&web.conditions, "DiffReported").unwrap().1
    );
}

#[test]
fn malformed_manifests_are_reported_and_the_rest_applied() {
    let mut manifests = shop("a");
    manifests
        .push(json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"namespace": "shop"}}));
    let mut member = Member::default();
    let (status, resources) = pass(
        &mut member,
        &manifests,
        Strategy::default(),
        &WorkStatus::default(),
        at(0),
    );
    assert_eq!(resources.len(), 3);
    assert_eq!(
        state(&status.conditions, "Applied"),
        is("False", "SomeManifestsAreNotApplied")
    );
    let secret = &status.manifest_conditions[3];
    assert_eq!(secret.identifier.ordinal, 3);
    let applied = condition(&secret.conditions, "Applied").unwrap();
    assert_eq!(applied.reason, "DecodingErred");
    assert!(applied.message.contains("metadata.name is missing"));
}
