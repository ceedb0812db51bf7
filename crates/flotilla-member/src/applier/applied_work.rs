//! The AppliedWork of a Work on the member: created with the Work's name before anything is
//! applied (every applied object is owned by it), its `appliedResources` kept up to date, and
//! deleted in the foreground when the Work goes, so the member's garbage collector removes
//! what the Work placed before the AppliedWork disappears.

use flotilla_api::placement::AppliedWork;
use flotilla_api::placement::applied_work::AppliedResourceMeta;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::{Api, Client};
use serde_json::json;

/// The AppliedWork `name` recording Work `name` of hub namespace `namespace`, created if
/// missing.
pub(super) async fn ensure(
    member: &Client,
    name: &str,
    namespace: &str,
) -> Result<AppliedWork, kube::Error> {
    let api: Api<AppliedWork> = Api::all(member.clone());
    if let Some(existing) = api.get_opt(name).await? {
        return Ok(existing);
    }
    let applied_work: AppliedWork = serde_json::from_value(json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "AppliedWork",
        "metadata": {"name": name},
        "spec": {"workName": name, "workNamespace": namespace},
    }))
    .map_err(kube::Error::SerdeError)?;
    match api.create(&PostParams::default(), &applied_work).await {
        Err(kube::Error::Api(e)) if e.code == 409 => api.get(name).await,
        other => other,
    }
}

/// Writes `resources` as the AppliedWork's `status.appliedResources`, if they changed.
pub(super) async fn record(
    member: &Client,
    applied_work: &AppliedWork,
    resources: Vec<AppliedResourceMeta>,
) -> Result<(), kube::Error> {
    let recorded = applied_work
        .status
        .as_ref()
        .map(|s| s.applied_resources.as_slice())
        .unwrap_or_default();
    if recorded == resources.as_slice() {
        return Ok(());
    }
    let api: Api<AppliedWork> = Api::all(member.clone());
    let patch = json!({"status": {"appliedResources": resources}});
    let name = applied_work.metadata.name.as_deref().unwrap_or_default();
    api.patch_status(name, &PatchParams::default(), &Patch::Merge(patch))
        .await
        .map(drop)
}

/// Deletes the AppliedWork `name` in the foreground, if it is not already being deleted.
/// Returns whether it still exists (its owned objects are still being removed).
pub(super) async fn delete(member: &Client, name: &str) -> Result<bool, kube::Error> {
    let api: Api<AppliedWork> = Api::all(member.clone());
    let Some(existing) = api.get_opt(name).await? else {
        return Ok(false);
    };
    if existing.metadata.deletion_timestamp.is_some() {
        return Ok(true);
    }
    match api.delete(name, &DeleteParams::foreground()).await {
        // Left: marked for deletion, still there; Right: gone at once.
        Ok(deleted) => Ok(deleted.is_left()),
        Err(kube::Error::Api(e)) if e.code == 404 => Ok(false),
        Err(e) => Err(e),
    }
}
