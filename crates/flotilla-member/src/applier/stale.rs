//! Removing from the member what the AppliedWork recorded and the Work no longer carries: each
//! object the core says to delete is deleted (on condition that it is still the same object),
//! each shared one only loses the AppliedWork's owner reference, and objects no longer ours
//! are left alone.

use flotilla_api::placement::applied_work::AppliedResourceMeta;
use kube::Client;
use kube::api::{DeleteParams, Preconditions};

use super::{failure, member_api, send};
use crate::work::{AppliedWorkOwner, KindFamily, Release, release};

/// Releases each of `stale`; returns the ones that could not be released this time, which
/// the AppliedWork keeps recording so that the next pass tries again.
pub(super) async fn release_all(
    member: &Client,
    stale: Vec<&AppliedResourceMeta>,
    owner: &AppliedWorkOwner,
) -> Vec<AppliedResourceMeta> {
    let mut kept = Vec::new();
    for resource in stale {
        if let Err(message) = release_one(member, resource, owner).await {
            tracing::warn!(%message, "work applier: could not remove a left-over object; will retry");
            kept.push(resource.clone());
        }
    }
    kept
}

/// Releases one left-over object (see the module docs).
async fn release_one(
    member: &Client,
    resource: &AppliedResourceMeta,
    owner: &AppliedWorkOwner,
) -> Result<(), String> {
    let id = &resource.identifier;
    let api = member_api(member, id);
    let live = match api.get_opt(&id.name).await {
        Ok(Some(live)) => serde_json::to_value(live).map_err(|e| e.to_string())?,
        Ok(None) => return Ok(()),
        Err(e) => return Err(failure("reading", id, &e)),
    };
    let family = KindFamily::of(&id.group);
    match release(&live, owner, family).map_err(|e| e.to_string())? {
        Release::NotOurs => Ok(()),
        Release::Delete { uid } => {
            let params = DeleteParams {
                preconditions: Some(Preconditions {
                    uid: Some(uid),
                    resource_version: None,
                }),
                ..DeleteParams::default()
            };
            match api.delete(&id.name, &params).await {
                // 404: gone already; 409: the precondition failed, so it is another object.
                Ok(_) => Ok(()),
                Err(kube::Error::Api(e)) if e.code == 404 || e.code == 409 => Ok(()),
                Err(e) => Err(failure("deleting", id, &e)),
            }
        }
        Release::Disown(patch) => send(&api, &id.name, &patch)
            .await
            .map(drop)
            .map_err(|e| failure("disowning", id, &e)),
    }
}
