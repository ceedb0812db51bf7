//! Keeps the built-in roles and bindings ([`super::bootstrap`]) as they should be, while the
//! hub runs: one that is deleted is created again, one whose rules, subjects or role
//! reference were changed is put back, and `fleet-viewer` follows the groups the hub serves.
//! Deleting the binding `fleet-admin` would otherwise lock the administrators out until a
//! restart. An object annotated `rbac.authorization.kubernetes.io/autoupdate: "false"` is
//! left as an administrator made it (deleting it still brings it back), as kube-apiserver
//! treats its bootstrap policy.
//!
//! Every replica reconciles: after any change to the stored RBAC objects, and every few
//! seconds (to see CustomResourceDefinitions come and go). Replicas racing on one repair
//! lose nothing: the loser's write conflicts and the next pass finds nothing to do.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use super::bootstrap::{AUTOUPDATE_ANNOTATION, builtin_objects};
use crate::engine::{DeleteOptions, Engine, WriteOptions};
use crate::registry::ResourceInfo;
use crate::status::ApiResult;

/// How often the built-in objects are checked when nothing has woken the reconciler.
const PERIOD: Duration = Duration::from_secs(5);

/// What one built-in object needs.
#[derive(Debug, Clone, PartialEq)]
pub enum Repair {
    /// It is missing: create it.
    Create(Value),
    /// Its rules or subjects differ: write them back onto the stored object.
    Update(Value),
    /// Its role reference differs, which cannot be changed in place: delete and create.
    Replace(Value),
}

/// What `stored` (the object as it is, if it exists) needs to become `desired`; `None` when
/// it is as it should be, or its administrator opted out of updates.
pub fn repair(desired: &Value, stored: Option<&Value>) -> Option<Repair> {
    let mut desired = desired.clone();
    desired["metadata"]["annotations"][AUTOUPDATE_ANNOTATION] = "true".into();
    let Some(stored) = stored else {
        return Some(Repair::Create(desired));
    };
    if stored["metadata"]["annotations"][AUTOUPDATE_ANNOTATION] == "false" {
        return None;
    }
    if stored["roleRef"] != desired["roleRef"] {
        return Some(Repair::Replace(desired));
    }
    let fields = ["rules", "subjects"];
    let same = |field: &str| normalized(&stored[field]) == normalized(&desired[field]);
    let labelled = desired["metadata"]["labels"]
        .as_object()
        .into_iter()
        .flatten()
        .all(|(k, v)| stored["metadata"]["labels"][k] == *v);
    if fields.iter().all(|f| same(f))
        && labelled
        && stored["metadata"]["annotations"][AUTOUPDATE_ANNOTATION] == "true"
    {
        return None;
    }
    let mut updated = stored.clone();
    for field in fields {
        if !desired[field].is_null() {
            updated[field] = desired[field].clone();
        }
    }
    for key in ["labels", "annotations"] {
        for (k, v) in desired["metadata"][key].as_object().into_iter().flatten() {
            updated["metadata"][key][k] = v.clone();
        }
    }
    Some(Repair::Update(updated))
}

/// `value` with empty lists and nulls dropped from objects, so that a rule stored with an
/// empty `resourceNames` (or none) compares equal to one without.
fn normalized(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(_, v)| !(v.is_null() || v.as_array().is_some_and(Vec::is_empty)))
                .map(|(k, v)| (k.clone(), normalized(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(normalized).collect()),
        other => other.clone(),
    }
}

/// Brings every built-in object in line once; the first error is returned after trying all.
pub async fn reconcile(engine: &Engine) -> ApiResult<()> {
    let snap = engine.registry().snapshot();
    let mut first_error = None;
    for desired in builtin_objects(&snap) {
        let plural = match desired["kind"].as_str() {
            Some("ClusterRole") => "clusterroles",
            _ => "clusterrolebindings",
        };
        let Some(info) = snap.get("rbac.authorization.k8s.io", "v1", plural) else {
            continue;
        };
        if let Err(e) = reconcile_one(engine, &info, &desired).await {
            first_error.get_or_insert(e);
        }
    }
    first_error.map_or(Ok(()), Err)
}

async fn reconcile_one(engine: &Engine, info: &ResourceInfo, desired: &Value) -> ApiResult<()> {
    let name = desired["metadata"]["name"].as_str().unwrap_or_default();
    let stored = match engine.get(info, None, name).await {
        Ok(stored) => Some(stored),
        Err(e) if e.code == 404 => None,
        Err(e) => return Err(e),
    };
    let opts = WriteOptions::default();
    let result = match repair(desired, stored.as_ref()) {
        None => return Ok(()),
        Some(Repair::Create(object)) => engine.create(info, None, object, &opts).await.map(drop),
        Some(Repair::Update(object)) => engine
            .update(info, None, name, object, None, &opts)
            .await
            .map(drop),
        Some(Repair::Replace(object)) => {
            engine
                .delete(info, None, name, &DeleteOptions::default())
                .await?;
            engine.create(info, None, object, &opts).await.map(drop)
        }
    };
    match result {
        Ok(()) => {
            tracing::info!(kind = %info.kind, name, "restored a built-in RBAC object");
            Ok(())
        }
        // Another replica repaired it first; the next pass checks again.
        Err(e) if e.code == 409 => Ok(()),
        Err(e) => Err(e),
    }
}

/// Reconciles whenever `changed` is notified (a stored RBAC object changed) and every few
/// seconds, until the task is aborted.
pub fn spawn(engine: Engine, changed: Arc<Notify>) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = changed.notified() => {}
                () = tokio::time::sleep(PERIOD) => {}
            }
            if let Err(e) = reconcile(&engine).await {
                tracing::warn!(error = %e.message, "reconciling the built-in RBAC objects failed");
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn binding(role: &str, groups: &[&str]) -> Value {
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "fleet-admin", "labels": {"flotilla.dev/bootstrapping": "true"}},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": groups.iter().map(|g| json!({"kind": "Group", "name": g})).collect::<Vec<_>>(),
        })
    }

    fn stored(mut object: Value, autoupdate: &str) -> Value {
        object["metadata"]["annotations"] = json!({AUTOUPDATE_ANNOTATION: autoupdate});
        object["metadata"]["resourceVersion"] = json!("7");
        object
    }

    #[test]
    fn a_missing_object_is_created_marked_for_updates() {
        let desired = binding("fleet-admin", &["system:masters"]);
        let Some(Repair::Create(created)) = repair(&desired, None) else {
            panic!("expected a create");
        };
        assert_eq!(
            created["metadata"]["annotations"][AUTOUPDATE_ANNOTATION],
            "true"
        );
    }

    #[test]
    fn repairs_follow_what_changed_and_respect_the_opt_out() {
        let desired = binding("fleet-admin", &["system:masters", "fleet:admins"]);
        let same = stored(desired.clone(), "true");
        assert_eq!(repair(&desired, Some(&same)), None, "nothing to do");

        let narrowed = stored(binding("fleet-admin", &["system:masters"]), "true");
        let Some(Repair::Update(updated)) = repair(&desired, Some(&narrowed)) else {
            panic!("expected an update");
        };
        assert_eq!(updated["subjects"], desired["subjects"]);
        assert_eq!(
            updated["metadata"]["resourceVersion"], "7",
            "written onto what is stored"
        );
        assert_eq!(
            repair(&desired, Some(&updated)),
            None,
            "one repair suffices"
        );

        let rebound = stored(binding("fleet-viewer", &["system:masters"]), "true");
        assert!(matches!(
            repair(&desired, Some(&rebound)),
            Some(Repair::Replace(_))
        ));

        let kept = stored(binding("fleet-viewer", &["someone"]), "false");
        assert_eq!(
            repair(&desired, Some(&kept)),
            None,
            "autoupdate false is left alone"
        );

        let unmarked = desired.clone();
        assert!(
            matches!(repair(&desired, Some(&unmarked)), Some(Repair::Update(_))),
            "an object from before the annotation is marked"
        );
    }

    #[test]
    fn empty_lists_compare_equal_to_missing_ones() {
        let desired = json!({"kind": "ClusterRole", "metadata": {"name": "r"},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]});
        let mut as_stored = desired.clone();
        as_stored["rules"][0]["resourceNames"] = json!([]);
        as_stored["rules"][0]["nonResourceURLs"] = Value::Null;
        let as_stored = stored(as_stored, "true");
        assert_eq!(repair(&desired, Some(&as_stored)), None);
    }
}
