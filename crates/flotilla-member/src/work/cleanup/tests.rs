use super::*;
use crate::work::order::plan;
use flotilla_api::placement::work::WorkResourceIdentifier;
use flotilla_apimachinery::patch::{BuiltinStrategy, merge_patch, strategic_merge_patch};

fn owner() -> AppliedWorkOwner {
    AppliedWorkOwner {
        name: "work".into(),
        uid: "aw-1".into(),
    }
}

fn applied(version: &str, kind: &str, name: &str) -> AppliedResourceMeta {
    AppliedResourceMeta {
        identifier: WorkResourceIdentifier {
            ordinal: 0,
            group: String::new(),
            version: version.into(),
            kind: kind.into(),
            resource: String::new(),
            namespace: "shop".into(),
            name: name.into(),
        },
        uid: format!("uid-{name}"),
    }
}

fn config_map(version: &str, name: &str) -> Value {
    json!({"apiVersion": version, "kind": "ConfigMap",
           "metadata": {"name": name, "namespace": "shop"}})
}

fn live(owners: Value) -> Value {
    json!({"metadata": {"name": "cfg", "uid": "live-uid", "ownerReferences": owners}})
}

fn theirs() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "d-1"})
}

#[test]
fn stale_resources_are_the_ones_no_manifest_names() {
    let previous = vec![
        applied("v1", "ConfigMap", "kept"),
        applied("v1", "ConfigMap", "dropped"),
        applied("v1beta1", "ConfigMap", "moved"),
        applied("v1", "Secret", "kept"),
    ];
    let manifests = vec![config_map("v1", "kept"), config_map("v1", "moved")];
    let plan = plan(&manifests);
    let names: Vec<(&str, &str)> = stale(&previous, &plan)
        .iter()
        .map(|r| (r.identifier.kind.as_str(), r.identifier.name.as_str()))
        .collect();
    assert_eq!(names, vec![("ConfigMap", "dropped"), ("Secret", "kept")]);
}

#[test]
fn releases_only_what_the_applied_work_owns() {
    let ours = owner().owner_reference_json();
    let other_work = json!({"apiVersion": "placement.kubernetes-fleet.io/v1beta1",
                            "kind": "AppliedWork", "name": "other", "uid": "aw-2"});
    assert_eq!(
        release(&live(json!([])), &owner(), KindFamily::Builtin),
        Ok(Release::NotOurs)
    );
    assert_eq!(
        release(&live(json!([other_work])), &owner(), KindFamily::Builtin),
        Ok(Release::NotOurs)
    );
    assert_eq!(
        release(&live(json!([ours])), &owner(), KindFamily::Builtin),
        Ok(Release::Delete {
            uid: "live-uid".into()
        })
    );
}

#[test]
fn a_shared_object_only_loses_our_owner_reference() {
    let object = live(json!([theirs(), owner().owner_reference_json()]));
    for family in [KindFamily::Builtin, KindFamily::Custom] {
        let Ok(Release::Disown(patch)) = release(&object, &owner(), family) else {
            panic!("{family:?}: a co-owned object is disowned");
        };
        let after = match patch {
            MemberPatch::Strategic(p) => {
                strategic_merge_patch(&object, &p, &BuiltinStrategy).unwrap()
            }
            MemberPatch::Merge(p) => merge_patch(&object, &p),
        };
        assert_eq!(
            after["metadata"]["ownerReferences"],
            json!([theirs()]),
            "{family:?}"
        );
        assert_eq!(after["metadata"]["uid"], "live-uid");
    }
}
