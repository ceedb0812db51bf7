//! The differential suite of bad objects: a real kube-apiserver with `flotilla crds` installed
//! refuses what Flotilla's own hub refuses, naming the same fields with the same reasons
//! (`tests/fixtures/hub_refusals.yaml`, one rule per case). Where a kube-apiserver cannot say
//! exactly what Flotilla says, the comparison allows only the differences
//! `flotilla_api`'s CEL export documents: an `Invalid value` from a CEL rule quotes no value, a
//! `Duplicate value` carries no explanation, and (for cases marked `parent`) the list item is
//! named instead of its field. A kube-apiserver also adds a cause without a field when a
//! schema error made it skip the CEL rules; that note is left out.

mod common;

use flotilla_testkit::RealCluster;
use kube::api::{ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams};
use serde::Deserialize;
use serde_json::Value;

/// One case of the fixture.
#[derive(Deserialize)]
struct Case {
    /// The kind's plural.
    plural: String,
    /// The object created: refused, or accepted when `update` follows.
    object: Value,
    /// Merged into the created object's status before `update`.
    #[serde(default)]
    status: Option<Value>,
    /// A JSON merge patch both hubs must refuse.
    #[serde(default)]
    update: Option<Value>,
    /// The kube-apiserver names the list item where Flotilla names a field of it.
    #[serde(default)]
    parent: bool,
}

/// One cause of a refusal: field, reason, message.
type Cause = (String, String, String);

/// The API of `object`'s kind.
fn api(client: kube::Client, plural: &str, object: &Value) -> kube::Api<DynamicObject> {
    let (group, version) = object["apiVersion"]
        .as_str()
        .and_then(|v| v.split_once('/'))
        .expect("a group's apiVersion");
    let gvk = GroupVersionKind::gvk(group, version, object["kind"].as_str().expect("kind"));
    let resource = ApiResource::from_gvk_with_plural(&gvk, plural);
    match object["metadata"]["namespace"].as_str() {
        Some(namespace) => kube::Api::namespaced_with(client, namespace, &resource),
        None => kube::Api::all_with(client, &resource),
    }
}

/// The causes of `result`'s refusal, sorted; empty when it succeeded.
fn causes<T>(what: &str, result: kube::Result<T>) -> Vec<Cause> {
    match result {
        Ok(_) => Vec::new(),
        Err(kube::Error::Api(status)) => {
            let mut causes: Vec<Cause> = status
                .details
                .iter()
                .flat_map(|d| d.causes.iter())
                // A kube-apiserver's note that it skipped CEL rules after a schema error.
                .filter(|c| c.field != "<nil>")
                .map(|c| (c.field.clone(), c.reason.clone(), c.message.clone()))
                .collect();
            assert!(
                !causes.is_empty(),
                "{what}: a refusal without causes: {status:?}"
            );
            causes.sort();
            causes
        }
        Err(e) => panic!("{what}: {e}"),
    }
}

/// What the hub at `client` answers to `case`: the causes of its refusal.
async fn refusal(client: kube::Client, case: &Case) -> Vec<Cause> {
    let api = api(client, &case.plural, &case.object);
    let object: DynamicObject = serde_json::from_value(case.object.clone()).expect("an object");
    let name = object.metadata.name.clone().expect("a name");
    let created = api.create(&PostParams::default(), &object).await;
    let Some(update) = &case.update else {
        return causes(&name, created);
    };
    assert_eq!(
        causes(&name, created),
        Vec::<Cause>::new(),
        "{name}: created"
    );
    if let Some(status) = &case.status {
        let patch = serde_json::json!({ "status": status });
        api.patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .unwrap_or_else(|e| panic!("{name}: status written: {e}"));
    }
    causes(
        &name,
        api.patch(&name, &PatchParams::default(), &Patch::Merge(update))
            .await,
    )
}

/// Whether the kube-apiserver's `kube` cause says what Flotilla's `flotilla` cause says, up to
/// the differences the CEL export documents.
fn same(kube: &Cause, flotilla: &Cause, parent: bool) -> bool {
    let (kube_field, kube_reason, kube_message) = kube;
    let (field, reason, message) = flotilla;
    let field_matches = kube_field == field
        || (parent && field.starts_with(kube_field.as_str()) && field.len() > kube_field.len());
    let message_matches = match reason.as_str() {
        // A CEL rule's failure quotes no value.
        "FieldValueInvalid" => {
            kube_message == message
                || kube_message
                    .strip_prefix("Invalid value: ")
                    .is_some_and(|detail| message.ends_with(&format!(": {detail}")))
        }
        "FieldValueDuplicate" => {
            kube_message.starts_with("Duplicate value: ")
                && message.starts_with("Duplicate value: ")
        }
        "FieldValueTooLong" => message.starts_with(kube_message.as_str()),
        _ => kube_message == message,
    };
    field_matches && kube_reason == reason && message_matches
}

#[test]
fn a_kubernetes_hub_with_flotilla_s_crds_refuses_what_flotilla_s_hub_refuses() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hub_refusals.yaml"),
    )
    .expect("the fixture");
    let cases: Vec<Case> = serde_saphyr::from_str(&text).expect("the fixture parses");
    assert!(cases.len() > 80, "the fixture has its cases");

    let kube_hub = RealCluster::start();
    let crds = std::process::Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .arg("crds")
        .output()
        .expect("flotilla crds");
    assert!(crds.status.success(), "flotilla crds");
    let applied = kube_hub.kubectl_stdin(
        &["apply", "--server-side", "-f", "-"],
        std::str::from_utf8(&crds.stdout).expect("YAML"),
    );
    assert!(
        applied.status.success(),
        "a kube-apiserver takes every CRD `flotilla crds` prints:\n{}",
        String::from_utf8_lossy(&applied.stderr)
    );
    common::eventually("the fleet kinds served", 30, || {
        kube_hub
            .kubectl(&["get", "updateruns,memberclusters,resourceplacements"])
            .status
            .success()
            .then_some(())
    });
    let flotilla_hub = common::HubProcess::start();

    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let mut differences = Vec::new();
    for case in &cases {
        let name = format!(
            "{}/{}",
            case.plural,
            case.object["metadata"]["name"].as_str().unwrap_or_default()
        );
        let (on_kube, on_flotilla) = runtime.block_on(async {
            (
                refusal(kube_hub.client().await, case).await,
                refusal(flotilla_hub.client().await, case).await,
            )
        });
        let agree = !on_flotilla.is_empty()
            && on_kube.len() == on_flotilla.len()
            && on_kube
                .iter()
                .zip(&on_flotilla)
                .all(|(kube, flotilla)| same(kube, flotilla, case.parent));
        if !agree {
            differences.push(format!(
                "{name}:\n  kube-apiserver: {on_kube:?}\n  Flotilla:       {on_flotilla:?}"
            ));
        }
    }
    assert!(
        differences.is_empty(),
        "{} of {} cases differ:\n{}",
        differences.len(),
        cases.len(),
        differences.join("\n")
    );
}
