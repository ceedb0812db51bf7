//! What each cluster receives of each manifest.

use flotilla_api::placement::{ClusterResourceOverrideSnapshot, ResourceOverrideSnapshot};
use flotilla_placement::overrides::{
    ApplicableOverrides, Deleted, OverrideError, OverrideKind, Rendered, render,
};
use flotilla_placement::placement_key::PlacementKey;
use serde_json::{Value, json};

use crate::fixtures::{
    Member, PLACEMENT, cro, cro_spec, delete_rule, deployment, example_cro, example_ro, member,
    namespace, on, patch_rule, ro, ro_spec, secret_reader,
};

fn run(
    manifest: &Value,
    cluster: &Member,
    cros: &[ClusterResourceOverrideSnapshot],
    ros: &[ResourceOverrideSnapshot],
) -> Result<Rendered, Box<OverrideError>> {
    let applicable = ApplicableOverrides::select(
        &PlacementKey::cluster(PLACEMENT),
        std::slice::from_ref(manifest),
        cros,
        ros,
    );
    render(manifest, cluster.view(), &applicable)
}

fn manifest(rendered: Result<Rendered, Box<OverrideError>>) -> Value {
    match rendered {
        Ok(Rendered::Manifest(value)) => value,
        other => panic!("expected a manifest, got {other:?}"),
    }
}

/// A ResourceOverride of Deployment `app/web` with `rules`.
fn web_ro(name: &str, rules: Value) -> ResourceOverrideSnapshot {
    ro(
        "app",
        name,
        ro_spec(
            json!([{"group": "apps", "version": "v1", "kind": "Deployment", "name": "web"}]),
            rules,
        ),
    )
}

/// A ClusterResourceOverride of namespace `app` (and so of everything in it) with `rules`.
fn app_cro(name: &str, rules: Value) -> ClusterResourceOverrideSnapshot {
    cro(
        name,
        cro_spec(
            json!([{"group": "", "version": "v1", "kind": "Namespace", "name": "app"}]),
            rules,
        ),
    )
}

fn all() -> Value {
    json!({"clusterSelectorTerms": []})
}

#[test]
fn cluster_resource_override_example() {
    let cros = [example_cro()];
    let role = secret_reader();
    let prod = member("prod-east", &[("env", "prod")]);
    let mut expected = role.clone();
    expected["rules"][0]["verbs"] = json!(["get", "watch"]);
    expected["metadata"]["annotations"] = json!({"fleet.example.com/placed-on": "prod-east"});
    assert_eq!(manifest(run(&role, &prod, &cros, &[])), expected);

    let test = member("test-1", &[("env", "test")]);
    assert_eq!(
        run(&role, &test, &cros, &[]),
        Ok(Rendered::Deleted(Deleted {
            kind: OverrideKind::Cluster,
            namespace: None,
            snapshot: "example-cro-0".into(),
            rule: 1
        }))
    );
    // No rule selects a cluster without the env label: the manifest is untouched.
    let bare = member("bare", &[]);
    assert_eq!(manifest(run(&role, &bare, &cros, &[])), role);
}

#[test]
fn resource_override_example() {
    let ros = [example_ro()];
    let web = deployment("test-namespace", "test-nginx");
    let cases = [
        (
            member("prod-east", &[("env", "prod"), ("region", "east")]),
            Some(("nginx:1.20.0", Some("east"))),
        ),
        (
            member("prod-1", &[("env", "prod")]),
            Some(("nginx:1.20.0", None)),
        ),
        (
            member("dev-west", &[("env", "dev"), ("region", "west")]),
            Some(("nginx:1.14.2", Some("west"))),
        ),
        (
            member("test-1", &[("env", "test"), ("region", "west")]),
            None,
        ),
    ];
    for (cluster, want) in cases {
        let got = run(&web, &cluster, &[], &ros);
        match want {
            Some((image, region)) => {
                let mut expected = web.clone();
                expected["spec"]["template"]["spec"]["containers"][0]["image"] = json!(image);
                if let Some(region) = region {
                    expected["metadata"]["labels"]["region"] = json!(region);
                }
                assert_eq!(manifest(got), expected, "{}", cluster.view().name);
            }
            None => assert!(
                matches!(got, Ok(Rendered::Deleted(ref d)) if d.rule == 2 && d.kind == OverrideKind::Namespaced),
                "{got:?}"
            ),
        }
    }
}

#[test]
fn resource_overrides_win_and_later_rules_win() {
    let set = |value: &str| json!([{"op": "add", "path": "/metadata/labels/tier", "value": value}]);
    let cros = [
        app_cro("a-cro", json!([patch_rule(all(), set("a-cro"))])),
        app_cro("b-cro", json!([patch_rule(all(), set("b-cro"))])),
    ];
    let ros = [
        web_ro(
            "first",
            json!([
                patch_rule(all(), set("first")),
                patch_rule(on("env", "prod"), set("first-prod"))
            ]),
        ),
        web_ro("early", json!([patch_rule(all(), set("early"))])),
    ];
    let web = deployment("app", "web");
    let tier = |cluster: &Member, cros, ros| {
        manifest(run(&web, cluster, cros, ros))["metadata"]["labels"]["tier"].clone()
    };
    let prod = member("prod-1", &[("env", "prod")]);
    let dev = member("dev-1", &[("env", "dev")]);
    // ClusterResourceOverrides by name: b-cro has the last word among them.
    assert_eq!(tier(&dev, &cros, &[]), json!("b-cro"));
    // ResourceOverrides come after (by name: early, first), and a later rule wins.
    assert_eq!(tier(&dev, &cros, &ros), json!("first"));
    assert_eq!(tier(&prod, &cros, &ros), json!("first-prod"));
    // The ClusterResourceOverride reaches the namespace object too, the ResourceOverride not.
    let mut ns = namespace("app");
    ns["metadata"]["labels"] = json!({});
    let applicable = ApplicableOverrides::select(
        &PlacementKey::cluster(PLACEMENT),
        &[ns.clone(), web.clone()],
        &cros,
        &ros,
    );
    let rendered = render(&ns, dev.view(), &applicable);
    assert_eq!(
        manifest(rendered)["metadata"]["labels"]["tier"],
        json!("b-cro")
    );
}

#[test]
fn absent_selector_selects_no_cluster_and_empty_selects_all() {
    let label = json!([{"op": "add", "path": "/metadata/labels/x", "value": "y"}]);
    let web = deployment("app", "web");
    let cluster = member("any", &[("env", "prod")]);
    let absent = [web_ro("ro", json!([{"jsonPatchOverrides": label.clone()}]))];
    assert_eq!(manifest(run(&web, &cluster, &[], &absent)), web);
    let empty = [web_ro("ro", json!([patch_rule(all(), label.clone())]))];
    assert_eq!(
        manifest(run(&web, &cluster, &[], &empty))["metadata"]["labels"]["x"],
        json!("y")
    );
    let empty_term = [web_ro(
        "ro",
        json!([patch_rule(
            json!({"clusterSelectorTerms": [{"labelSelector": {}}]}),
            label
        )]),
    )];
    assert_eq!(
        manifest(run(&web, &cluster, &[], &empty_term))["metadata"]["labels"]["x"],
        json!("y")
    );
}

#[test]
fn delete_wins_over_every_other_rule() {
    let failing = json!([{"op": "replace", "path": "/spec/missing", "value": 1}]);
    let cros = [app_cro("patch", json!([patch_rule(all(), failing)]))];
    let ros = [web_ro("delete", json!([delete_rule(on("env", "prod"))]))];
    let web = deployment("app", "web");
    assert_eq!(
        run(&web, &member("prod-1", &[("env", "prod")]), &cros, &ros),
        Ok(Rendered::Deleted(Deleted {
            kind: OverrideKind::Namespaced,
            namespace: Some("app".into()),
            snapshot: "delete-0".into(),
            rule: 0
        }))
    );
    // Where the Delete rule does not apply, the failing patch is reported.
    assert!(run(&web, &member("dev-1", &[("env", "dev")]), &cros, &ros).is_err());
}

#[test]
fn failures_name_the_override_rule_and_path() {
    let web = deployment("app", "web");
    let dev = member("dev-1", &[("env", "dev")]);
    let cases = [
        (
            json!([{"op": "replace", "path": "/spec/paused", "value": true}]),
            Some("/spec/paused"),
            "ResourceOverrideSnapshot \"app/ro-0\" rule 1 at path \"/spec/paused\" failed on Deployment \"web\" in namespace \"app\": replace operation does not apply: path is invalid",
        ),
        (
            json!([{"op": "remove", "path": "/metadata/annotations/a"}]),
            Some("/metadata/annotations/a"),
            "ResourceOverrideSnapshot \"app/ro-0\" rule 1 at path \"/metadata/annotations/a\" failed on Deployment \"web\" in namespace \"app\": remove operation does not apply: path is invalid",
        ),
        (
            json!([{"op": "add", "path": "/metadata/labels/zone", "value": "${MEMBER-CLUSTER-LABEL-KEY-zone}"}]),
            Some("/metadata/labels/zone"),
            "ResourceOverrideSnapshot \"app/ro-0\" rule 1 at path \"/metadata/labels/zone\" failed on Deployment \"web\" in namespace \"app\": label key \"zone\" not found on cluster \"dev-1\"",
        ),
    ];
    for (operations, path, message) in cases {
        let ros = [web_ro(
            "ro",
            json!([
                patch_rule(
                    all(),
                    json!([{"op": "add", "path": "/metadata/labels/ok", "value": "1"}])
                ),
                patch_rule(all(), operations)
            ]),
        )];
        let error = run(&web, &dev, &[], &ros).unwrap_err();
        assert_eq!(error.rule, 1);
        assert_eq!(error.path.as_deref(), path);
        assert_eq!(error.kind, OverrideKind::Namespaced);
        assert_eq!(error.to_string(), message);
    }
}

#[test]
fn manifests_nothing_selects_pass_through() {
    let cros = [example_cro()];
    let ros = [example_ro()];
    let prod = member("prod-1", &[("env", "prod")]);
    for unrelated in [
        deployment("test-namespace", "other"),
        namespace("test-namespace"),
        json!({"kind": "Broken"}),
    ] {
        let applicable = ApplicableOverrides::select(
            &PlacementKey::cluster(PLACEMENT),
            &[secret_reader(), deployment("test-namespace", "test-nginx")],
            &cros,
            &ros,
        );
        assert_eq!(
            render(&unrelated, prod.view(), &applicable),
            Ok(Rendered::Manifest(unrelated.clone()))
        );
    }
}
