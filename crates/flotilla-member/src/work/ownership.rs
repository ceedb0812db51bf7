//! Who owns a member object: the AppliedWork of the Work being applied (the fleet placed it
//! through this Work), another AppliedWork (another placement placed it), or anything else.
//!
//! Every object the agent applies carries an owner reference to the AppliedWork named after
//! its Work, so deleting the AppliedWork removes exactly what the Work placed.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use serde_json::{Value, json};

/// API group of AppliedWork.
const APPLIED_WORK_GROUP: &str = "placement.kubernetes-fleet.io";

/// The AppliedWork recording one Work on the member: the owner of what the Work placed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppliedWorkOwner {
    /// Its name (the Work's name).
    pub name: String,
    /// Its UID on the member.
    pub uid: String,
}

impl AppliedWorkOwner {
    /// The owner reference the agent puts on every object it applies. It blocks the
    /// AppliedWork's foreground deletion until the object is gone (KubeFleet's current
    /// setting), so that leaving the fleet waits for the placed objects.
    pub fn owner_reference(&self) -> OwnerReference {
        OwnerReference {
            api_version: format!("{APPLIED_WORK_GROUP}/v1beta1"),
            kind: "AppliedWork".to_owned(),
            name: self.name.clone(),
            uid: self.uid.clone(),
            block_owner_deletion: Some(true),
            controller: None,
        }
    }

    /// [`AppliedWorkOwner::owner_reference`] as JSON, for the objects the agent writes.
    pub(crate) fn owner_reference_json(&self) -> Value {
        let reference = self.owner_reference();
        json!({
            "apiVersion": reference.api_version,
            "kind": reference.kind,
            "name": reference.name,
            "uid": reference.uid,
            "blockOwnerDeletion": reference.block_owner_deletion,
        })
    }
}

/// The owners of a live object, as far as the apply decision cares.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Owners {
    /// This Work's AppliedWork is an owner.
    pub ours: bool,
    /// Name of another AppliedWork owning it (another placement placed the object), if any.
    pub other_applied_work: Option<String>,
    /// How many owner references are not this Work's AppliedWork.
    pub others: usize,
}

impl Owners {
    /// The owners of `live` (its `metadata.ownerReferences`), seen from `owner`'s Work.
    pub fn of(live: &Value, owner: &AppliedWorkOwner) -> Owners {
        let references = live
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let mut owners = Owners::default();
        for reference in references {
            let field = |name: &str| {
                reference
                    .get(name)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
            };
            let applied_work = field("kind") == "AppliedWork"
                && field("apiVersion")
                    .split_once('/')
                    .is_some_and(|(group, _)| group == APPLIED_WORK_GROUP);
            if applied_work && field("uid") == owner.uid {
                owners.ours = true;
                continue;
            }
            owners.others += 1;
            if applied_work && owners.other_applied_work.is_none() {
                owners.other_applied_work = Some(field("name").to_owned());
            }
        }
        owners
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner() -> AppliedWorkOwner {
        AppliedWorkOwner {
            name: "crp-work".into(),
            uid: "uid-1".into(),
        }
    }

    fn with_owners(references: Value) -> Value {
        json!({"metadata": {"name": "x", "ownerReferences": references}})
    }

    fn reference(api_version: &str, kind: &str, name: &str, uid: &str) -> Value {
        json!({"apiVersion": api_version, "kind": kind, "name": name, "uid": uid})
    }

    #[test]
    fn owner_reference_points_at_the_applied_work() {
        let reference = owner().owner_reference();
        assert_eq!(
            serde_json::to_value(&reference).unwrap(),
            owner().owner_reference_json()
        );
        assert_eq!(
            owner().owner_reference_json(),
            json!({"apiVersion": "placement.kubernetes-fleet.io/v1beta1", "kind": "AppliedWork",
                   "name": "crp-work", "uid": "uid-1", "blockOwnerDeletion": true})
        );
    }

    #[test]
    fn classifies_owners() {
        let ours = reference(
            "placement.kubernetes-fleet.io/v1beta1",
            "AppliedWork",
            "crp-work",
            "uid-1",
        );
        let other_work = reference(
            "placement.kubernetes-fleet.io/v1",
            "AppliedWork",
            "other-work",
            "uid-2",
        );
        let deployment = reference("apps/v1", "Deployment", "web", "uid-3");
        let lookalike = reference("example.com/v1", "AppliedWork", "fake", "uid-1");
        let cases = [
            (json!([]), Owners::default()),
            (
                json!([ours]),
                Owners {
                    ours: true,
                    ..Owners::default()
                },
            ),
            (
                json!([ours, deployment]),
                Owners {
                    ours: true,
                    other_applied_work: None,
                    others: 1,
                },
            ),
            (
                json!([deployment, other_work]),
                Owners {
                    ours: false,
                    other_applied_work: Some("other-work".into()),
                    others: 2,
                },
            ),
            (
                json!([lookalike]),
                Owners {
                    ours: false,
                    other_applied_work: None,
                    others: 1,
                },
            ),
        ];
        for (references, expected) in cases {
            assert_eq!(
                Owners::of(&with_owners(references.clone()), &owner()),
                expected,
                "{references}"
            );
        }
        assert_eq!(Owners::of(&json!({}), &owner()), Owners::default());
    }
}
