//! Behaviour specific to a few built-in kinds that the generic engine must honour:
//! CustomResourceDefinitions (registration, status, cleanup finalizer), Namespaces (phase and
//! the `kubernetes` spec finalizer) and Secrets (`stringData` folded into `data`).

use flotilla_apimachinery::FieldError;
use serde_json::{Value, json};

use crate::engine::{Engine, decode};
use crate::object::meta_str;
use crate::registry::ResourceInfo;
use crate::status::{ApiError, ApiResult};

/// Finalizer that keeps a CRD until all its custom resources are deleted.
pub const CRD_CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";
/// The spec finalizer a namespace carries until the namespace controller has emptied it.
pub const NAMESPACE_FINALIZER: &str = "kubernetes";

/// Whether `info` is the CustomResourceDefinition resource.
pub fn is_crd_resource(info: &ResourceInfo) -> bool {
    info.group == "apiextensions.k8s.io" && info.plural == "customresourcedefinitions"
}

/// Namespaces that may not be deleted: kube-apiserver's own (`default`, `kube-system`,
/// `kube-public`) and the hub's (`fleet-system`, where member tokens and the controllers'
/// lease live).
pub const SYSTEM_NAMESPACES: &[&str] = &["default", "kube-system", "kube-public", "fleet-system"];

/// Whether `info` is the core Namespace resource.
pub fn is_namespace_resource(info: &ResourceInfo) -> bool {
    info.group.is_empty() && info.plural == "namespaces"
}

/// Whether an immediate delete answers with the deleted object (kube's `ReturnDeletedObject`:
/// pods, services, service accounts, namespaces, resource quotas, pod templates, volumes and
/// their claims, replication controllers) rather than a `Success` Status.
pub fn returns_deleted_object(info: &ResourceInfo) -> bool {
    info.group.is_empty()
        && matches!(
            info.plural.as_str(),
            "pods"
                | "services"
                | "serviceaccounts"
                | "namespaces"
                | "resourcequotas"
                | "podtemplates"
                | "persistentvolumeclaims"
                | "persistentvolumes"
                | "replicationcontrollers"
        )
}

/// Whether `info` is the core Pod resource.
pub fn is_pod_resource(info: &ResourceInfo) -> bool {
    info.group.is_empty() && info.plural == "pods"
}

/// Whether `info` is the core Secret resource.
pub fn is_secret_resource(info: &ResourceInfo) -> bool {
    info.group.is_empty() && info.plural == "secrets"
}

/// Folds a Secret's write-only `stringData` into `data` (base64, a `stringData` key winning
/// over the same `data` key) and drops it, as kube-apiserver's conversion does on every write:
/// `stringData` is never stored nor returned.
pub fn fold_string_data(secret: &mut Value) {
    use base64::Engine as _;
    let Some(fields) = secret.as_object_mut() else {
        return;
    };
    let Some(string_data) = fields.shift_remove("stringData") else {
        return;
    };
    let Value::Object(strings) = string_data else {
        return;
    };
    if strings.is_empty() {
        return;
    }
    let data = fields.entry("data").or_insert_with(|| json!({}));
    if !data.is_object() {
        *data = json!({});
    }
    let data = data.as_object_mut().expect("made an object");
    for (key, value) in strings {
        let text = value.as_str().unwrap_or_default();
        data.insert(
            key,
            json!(base64::engine::general_purpose::STANDARD.encode(text)),
        );
    }
}

/// Kind-specific preparation of an object about to be written (after defaulting, before
/// validation): CRD status and collision checks, namespace phase and finalizer, Secret
/// `stringData`, the Go-side defaults of built-in kinds (`flotilla_api::apply_builtin_defaults`).
pub fn prepare_write(
    engine: &Engine,
    info: &ResourceInfo,
    old: Option<&Value>,
    obj: &mut Value,
) -> ApiResult<()> {
    if is_crd_resource(info) {
        prepare_crd(engine, info, old, obj)
    } else if is_namespace_resource(info) {
        if old.is_none() {
            if obj.pointer("/spec/finalizers").is_none() {
                obj["spec"] = json!({"finalizers": [NAMESPACE_FINALIZER]});
            }
            obj["status"] = json!({"phase": "Active"});
        }
        Ok(())
    } else {
        if is_secret_resource(info) {
            fold_string_data(obj);
        }
        flotilla_api::apply_builtin_defaults(&info.group, &info.kind, obj);
        Ok(())
    }
}

fn prepare_crd(
    engine: &Engine,
    info: &ResourceInfo,
    old: Option<&Value>,
    obj: &mut Value,
) -> ApiResult<()> {
    let group = obj
        .pointer("/spec/group")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let plural = obj
        .pointer("/spec/names/plural")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if old.is_none() && engine.registry.is_builtin_resource(&group, &plural) {
        let name = meta_str(obj, "name").unwrap_or_default().to_string();
        let errs = [FieldError::invalid(
            "spec.names.plural",
            json!(plural),
            format!("{plural}.{group} is already served by a built-in kind"),
        )];
        return Err(ApiError::invalid(
            &info.qualified_kind(),
            &crate::engine::target(info, &name),
            &errs,
        ));
    }
    let mut names = obj
        .pointer("/spec/names")
        .cloned()
        .unwrap_or_else(|| json!({}));
    if let Some(kind) = names["kind"].as_str().map(String::from) {
        if names.get("singular").is_none() {
            names["singular"] = json!(kind.to_lowercase());
        }
        if names.get("listKind").is_none() {
            names["listKind"] = json!(format!("{kind}List"));
        }
    }
    let storage: Vec<Value> = obj
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .map(|vs| {
            vs.iter()
                .filter(|v| v["storage"].as_bool() == Some(true))
                .map(|v| v["name"].clone())
                .collect()
        })
        .unwrap_or_default();
    let mut stored: Vec<Value> = old
        .and_then(|o| o.pointer("/status/storedVersions"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for v in storage {
        if !stored.contains(&v) {
            stored.push(v);
        }
    }
    let now = engine.now();
    let since = old
        .and_then(|o| o.pointer("/status/conditions/0/lastTransitionTime"))
        .cloned()
        .unwrap_or_else(|| json!(now));
    let mut conditions = vec![
        json!({"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": "no conflicts found", "lastTransitionTime": since}),
        json!({"type": "Established", "status": "True", "reason": "InitialNamesAccepted", "message": "the initial names have been accepted", "lastTransitionTime": since}),
    ];
    if meta_str(obj, "deletionTimestamp").is_some() {
        conditions.push(terminating_condition(&now));
    }
    obj["status"] =
        json!({"conditions": conditions, "acceptedNames": names, "storedVersions": stored});
    Ok(())
}

fn terminating_condition(now: &str) -> Value {
    json!({"type": "Terminating", "status": "True", "reason": "InstanceDeletionInProgress",
        "message": "CustomResource deletion is in progress", "lastTransitionTime": now})
}

/// Finalizers the engine adds when an object of this kind is deleted.
pub fn deletion_finalizers(info: &ResourceInfo) -> Vec<String> {
    if is_crd_resource(info) {
        vec![CRD_CLEANUP_FINALIZER.to_string()]
    } else {
        vec![]
    }
}

/// Spec-level finalizers that also block deletion (a namespace's `spec.finalizers`).
pub fn spec_finalizers(info: &ResourceInfo, obj: &Value) -> Vec<String> {
    if !is_namespace_resource(info) {
        return vec![];
    }
    crate::object::string_list(obj.pointer("/spec/finalizers"))
}

/// Marks an object whose deletion has started: namespaces become `Terminating`, CRDs get a
/// `Terminating` condition.
pub fn mark_terminating(info: &ResourceInfo, obj: &mut Value) {
    if is_namespace_resource(info) {
        obj["status"] = json!({"phase": "Terminating"});
    } else if is_crd_resource(info) {
        let now = meta_str(obj, "deletionTimestamp")
            .unwrap_or_default()
            .to_string();
        if let Some(conds) = obj
            .pointer_mut("/status/conditions")
            .and_then(Value::as_array_mut)
            && !conds.iter().any(|c| c["type"] == "Terminating")
        {
            conds.push(terminating_condition(&now));
        }
    }
}

/// Runs just before an object leaves storage for good: a CRD's kind stops being served first,
/// so a client that saw the CRD deleted never finds its kind still served.
pub fn before_final_delete(engine: &Engine, info: &ResourceInfo, obj: &Value) {
    if is_crd_resource(info)
        && let Some(name) = meta_str(obj, "name")
    {
        engine.registry.withdraw(name);
    }
}

/// The CustomResourceDefinition resource, when the engine serves it.
pub fn crd_info(engine: &Engine) -> Option<std::sync::Arc<ResourceInfo>> {
    engine
        .registry
        .snapshot()
        .get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
}

/// Re-reads every stored CRD and swaps the registry snapshot, so a created CRD is served (and
/// a deleted one withdrawn) as soon as the write is acknowledged.
pub async fn refresh_registry(engine: &Engine) {
    let Some(info) = crd_info(engine) else {
        return;
    };
    let Ok(list) = engine
        .store
        .list(flotilla_store::ListRequest {
            prefix: info.prefix(),
            ..Default::default()
        })
        .await
    else {
        return;
    };
    let crds: Vec<Value> = list
        .items
        .iter()
        .filter_map(|kv| decode(&info, kv).ok())
        .collect();
    engine.registry.set_user_crds(&crds);
}

/// Follows CRD writes made through *any* hub replica sharing the store (the local write path
/// already refreshes at once), so every replica serves the same kinds.
pub async fn follow_crds(engine: Engine) {
    use futures::StreamExt;
    let Some(info) = crd_info(&engine) else {
        return;
    };
    loop {
        let from = engine.store.current_revision();
        refresh_registry(&engine).await;
        let mut events = engine.store.watch(&info.prefix(), from);
        while let Some(Ok(_)) = events.next().await {
            // Coalesce a burst of CRD writes into one refresh.
            while let Some(Some(Ok(_))) = futures::FutureExt::now_or_never(events.next()) {}
            refresh_registry(&engine).await;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_data_folds_into_data_and_wins() {
        let mut secret = json!({"metadata": {"name": "s"}, "data": {"a": "b2xk", "keep": "eA=="},
            "stringData": {"a": "new", "b": "two"}});
        fold_string_data(&mut secret);
        assert_eq!(
            secret,
            json!({"metadata": {"name": "s"}, "data": {"a": "bmV3", "keep": "eA==", "b": "dHdv"}})
        );
    }

    #[test]
    fn string_data_alone_makes_data_and_empty_string_data_vanishes() {
        let mut secret = json!({"stringData": {"token": "t0k"}});
        fold_string_data(&mut secret);
        assert_eq!(secret, json!({"data": {"token": "dDBr"}}));
        let mut empty = json!({"stringData": {}});
        fold_string_data(&mut empty);
        assert_eq!(empty, json!({}));
    }
}
