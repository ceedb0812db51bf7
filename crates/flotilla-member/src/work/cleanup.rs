//! Cleaning up after a Work: which objects the AppliedWork recorded that the Work no longer
//! carries, and what to do with each on the member, as KubeFleet's work applier does for
//! left-over manifests.
//!
//! An object is only ever touched if this Work's AppliedWork still owns it: objects someone
//! else took over or recreated are left alone. An object that other owners share is not
//! deleted; the agent only drops its own owner reference, so the object stays for the others.

use flotilla_api::placement::applied_work::AppliedResourceMeta;
use flotilla_apimachinery::patch::PatchError;
use serde_json::{Value, json};

use super::identifier::same_target;
use super::merge::{KindFamily, MemberPatch, three_way_patch};
use super::order::Plan;
use super::ownership::{AppliedWorkOwner, Owners};

/// The resources `previous` (the AppliedWork's `appliedResources`) lists that no manifest of
/// `plan` names any more. Objects are matched by group, kind, namespace and name, so a
/// manifest moving to another version of its kind keeps its object.
pub fn stale<'a>(
    previous: &'a [AppliedResourceMeta],
    plan: &Plan<'_>,
) -> Vec<&'a AppliedResourceMeta> {
    let named = |resource: &AppliedResourceMeta| {
        plan.waves
            .iter()
            .flat_map(|wave| &wave.manifests)
            .any(|m| same_target(&m.identifier, &resource.identifier))
    };
    previous.iter().filter(|r| !named(r)).collect()
}

/// What to do with a member object the Work no longer carries.
#[derive(Debug, Clone, PartialEq)]
pub enum Release {
    /// The AppliedWork does not own it (any more): leave it alone.
    NotOurs,
    /// Only the AppliedWork owns it: delete it, on condition that it is still the object with
    /// this UID.
    Delete {
        /// The object's UID, as a delete precondition.
        uid: String,
    },
    /// Others own it too: remove the AppliedWork's owner reference with this patch.
    Disown(MemberPatch),
}

/// What to do with `live`, an object the Work no longer carries, of a kind of `family`.
/// Fails only if the owner references cannot be merged (an owner reference without a UID).
pub fn release(
    live: &Value,
    owner: &AppliedWorkOwner,
    family: KindFamily,
) -> Result<Release, PatchError> {
    let owners = Owners::of(live, owner);
    if !owners.ours {
        return Ok(Release::NotOurs);
    }
    if owners.others == 0 {
        let uid = live
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .unwrap_or_default();
        return Ok(Release::Delete {
            uid: uid.to_owned(),
        });
    }
    let last = json!({"metadata": {"ownerReferences": [owner.owner_reference_json()]}});
    let desired = json!({"metadata": {"ownerReferences": []}});
    three_way_patch(Some(&last), &desired, live, family).map(Release::Disown)
}

#[cfg(test)]
mod tests;
