use super::*;
use crate::work::manifest::LAST_APPLIED_ANNOTATION;

/// What the member stores after the patch (as its API server would apply it).
fn result(live: &Value, patch: &MemberPatch) -> Value {
    let family = match patch {
        MemberPatch::Strategic(_) => KindFamily::Builtin,
        MemberPatch::Merge(_) => KindFamily::Custom,
    };
    merged(live, patch, family).unwrap()
}

fn owner(uid: &str) -> Value {
    json!({"apiVersion": "placement.kubernetes-fleet.io/v1beta1", "kind": "AppliedWork",
           "name": uid, "uid": uid})
}

#[test]
fn families_of_groups() {
    for (group, family) in [
        ("", KindFamily::Builtin),
        ("apps", KindFamily::Builtin),
        ("networking.k8s.io", KindFamily::Builtin),
        ("gateway.networking.k8s.io", KindFamily::Custom),
        ("cluster.x-k8s.io", KindFamily::Custom),
        ("example.com", KindFamily::Custom),
    ] {
        assert_eq!(KindFamily::of(group), family, "{group:?}");
    }
}

#[test]
fn three_way_merges() {
    // (what, last applied, desired, live, expected result)
    let cases = [
        (
            "a map key applied before and dropped now is deleted; others' keys stay",
            Some(json!({"data": {"a": "1", "b": "2"}})),
            json!({"data": {"a": "1"}}),
            json!({"data": {"a": "1", "b": "2", "c": "theirs"}}),
            json!({"data": {"a": "1", "c": "theirs"}}),
        ),
        (
            "without a last-applied configuration nothing is deleted",
            None,
            json!({"data": {"a": "9"}}),
            json!({"data": {"a": "1", "b": "2"}}),
            json!({"data": {"a": "9", "b": "2"}}),
        ),
        (
            "a whole map dropped is deleted",
            Some(json!({"metadata": {"name": "x", "labels": {"x": "1"}}, "data": {"a": "1"}})),
            json!({"metadata": {"name": "x"}, "data": {"a": "1"}}),
            json!({"metadata": {"name": "x", "labels": {"x": "1"}}, "data": {"a": "1"}}),
            json!({"metadata": {"name": "x"}, "data": {"a": "1"}}),
        ),
        (
            "keyed lists: a dropped container goes, a sidecar stays, a dropped env var goes",
            Some(json!({"spec": {"template": {"spec": {"containers": [
                {"name": "web", "image": "nginx:1", "env": [{"name": "A", "value": "1"},
                                                             {"name": "B", "value": "2"}]},
                {"name": "old", "image": "old:1"}]}}}})),
            json!({"spec": {"template": {"spec": {"containers": [
                {"name": "web", "image": "nginx:2", "env": [{"name": "A", "value": "1"}]}]}}}}),
            json!({"spec": {"template": {"spec": {"containers": [
                {"name": "web", "image": "nginx:1", "imagePullPolicy": "IfNotPresent",
                 "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]},
                {"name": "old", "image": "old:1"},
                {"name": "sidecar", "image": "proxy:1"}]}}}}),
            json!({"spec": {"template": {"spec": {"containers": [
                {"name": "web", "image": "nginx:2", "imagePullPolicy": "IfNotPresent",
                 "env": [{"name": "A", "value": "1"}]},
                {"name": "sidecar", "image": "proxy:1"}]}}}}),
        ),
        (
            "set lists: a dropped finalizer goes, others' stay",
            Some(json!({"metadata": {"finalizers": ["a", "b"]}})),
            json!({"metadata": {"finalizers": ["a"]}}),
            json!({"metadata": {"finalizers": ["a", "b", "theirs"]}}),
            json!({"metadata": {"finalizers": ["a", "theirs"]}}),
        ),
        (
            "merged lists the manifest dropped lose only what was applied",
            Some(json!({"metadata": {"name": "x", "finalizers": ["a"]},
                        "spec": {"template": {"spec": {"containers": [{"name": "web"}]}}}})),
            json!({"metadata": {"name": "x"}, "spec": {"template": {"spec": {}}}}),
            json!({"metadata": {"name": "x", "finalizers": ["a", "theirs"]},
                   "spec": {"template": {"spec": {"containers": [{"name": "web"},
                                                                 {"name": "sidecar"}]}}}}),
            json!({"metadata": {"name": "x", "finalizers": ["theirs"]},
                   "spec": {"template": {"spec": {"containers": [{"name": "sidecar"}]}}}}),
        ),
        (
            "atomic lists are replaced whole",
            Some(json!({"spec": {"template": {"spec": {"tolerations": [{"key": "a"}]}}}})),
            json!({"spec": {"template": {"spec": {"tolerations": [{"key": "b"}]}}}}),
            json!({"spec": {"template": {"spec": {"tolerations": [{"key": "a"}, {"key": "c"}]}}}}),
            json!({"spec": {"template": {"spec": {"tolerations": [{"key": "b"}]}}}}),
        ),
    ];
    for (what, last, desired, live, expected) in cases {
        let patch = three_way_patch(last.as_ref(), &desired, &live, KindFamily::Builtin).unwrap();
        assert!(matches!(patch, MemberPatch::Strategic(_)), "{what}");
        assert_eq!(result(&live, &patch), expected, "{what}");
    }
}

#[test]
fn custom_resources_get_merge_patches_that_keep_co_owners_and_finalizers() {
    let last = json!({"metadata": {"ownerReferences": [owner("ours")], "finalizers": ["ours"]},
                      "spec": {"items": [{"name": "a"}, {"name": "b"}], "mode": "x"}});
    let desired = json!({"metadata": {"ownerReferences": [owner("ours")]},
                         "spec": {"items": [{"name": "a"}]}});
    let live = json!({"metadata": {"ownerReferences": [owner("theirs"), owner("ours")],
                                   "finalizers": ["theirs", "ours"]},
                      "spec": {"items": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
                               "mode": "x", "extra": true}});
    let patch = three_way_patch(Some(&last), &desired, &live, KindFamily::Custom).unwrap();
    let MemberPatch::Merge(body) = &patch else {
        panic!("custom resources take merge patches: {patch:?}");
    };
    assert!(
        !body.to_string().contains('$'),
        "no strategic directives: {body}"
    );
    assert_eq!(
        result(&live, &patch),
        json!({"metadata": {"ownerReferences": [owner("theirs"), owner("ours")],
                            "finalizers": ["theirs"]},
               "spec": {"items": [{"name": "a"}], "extra": true}})
    );
}

#[test]
fn adding_an_owner_reference_alone_keeps_the_others() {
    let live = json!({"metadata": {"ownerReferences": [owner("theirs")]}, "data": {"a": "1"}});
    let desired = json!({"metadata": {"ownerReferences": [owner("ours")]}});
    for family in [KindFamily::Builtin, KindFamily::Custom] {
        let patch = three_way_patch(None, &desired, &live, family).unwrap();
        let after = result(&live, &patch);
        let mut uids: Vec<&str> = elements(after.pointer("/metadata/ownerReferences"))
            .iter()
            .filter_map(|r| r["uid"].as_str())
            .collect();
        uids.sort_unstable();
        assert_eq!(uids, vec!["ours", "theirs"], "{family:?}");
        assert_eq!(after["data"], json!({"a": "1"}), "{family:?}");
    }
}

#[test]
fn reads_the_last_applied_annotation() {
    let with = |text: &str| json!({"metadata": {"annotations": {LAST_APPLIED_ANNOTATION: text}}});
    assert_eq!(
        last_applied(&with(r#"{"data":{"a":"1"}}"#)),
        Some(json!({"data": {"a": "1"}}))
    );
    assert_eq!(last_applied(&with("")), None);
    assert_eq!(last_applied(&with("[1]")), None);
    assert_eq!(last_applied(&json!({"metadata": {}})), None);
}

#[test]
fn a_patch_that_changes_nothing_is_known_before_it_is_sent() {
    let applied = json!({"metadata": {"labels": {"app": "web"}}, "data": {"a": "1"}});
    let live = json!({"metadata": {"labels": {"app": "web", "theirs": "x"}, "resourceVersion": "7"},
                      "data": {"a": "1", "c": "theirs"}});
    // (what, last applied, desired, live unchanged by the patch)
    let cases = [
        (
            "the same configuration again",
            Some(&applied),
            &applied,
            true,
        ),
        (
            "applied for the first time, already there",
            None,
            &applied,
            true,
        ),
        (
            "a value changed",
            Some(&applied),
            &json!({"metadata": {"labels": {"app": "web"}}, "data": {"a": "2"}}),
            false,
        ),
        (
            "a key dropped since last time",
            Some(&applied),
            &json!({"metadata": {"labels": {"app": "web"}}}),
            false,
        ),
        (
            "a key added",
            Some(&applied),
            &json!({"metadata": {"labels": {"app": "web"}}, "data": {"a": "1", "b": "2"}}),
            false,
        ),
    ];
    for (what, last, desired, unchanged) in cases {
        for family in [KindFamily::Builtin, KindFamily::Custom] {
            let patch = three_way_patch(last, desired, &live, family).unwrap();
            assert_eq!(
                changes_nothing(&patch, &live, family),
                unchanged,
                "{what}, {family:?}"
            );
            assert_eq!(
                result(&live, &patch) == live,
                unchanged,
                "{what}, {family:?}: the member agrees"
            );
        }
    }
}
