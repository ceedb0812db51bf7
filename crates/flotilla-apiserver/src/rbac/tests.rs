//! Table and property tests of RBAC decisions.

use std::collections::HashMap;

use http::Method;
use proptest::prelude::*;
use serde_json::{Value, json};

use super::bootstrap::member_objects;
use super::*;
use crate::auth::UserInfo;

/// The built-in roles and bindings of a hub serving the built-in kinds.
fn builtin_objects() -> Vec<Value> {
    let registry = crate::registry::Registry::new(crate::hub::builtin_definitions());
    super::bootstrap::builtin_objects(&registry.snapshot())
}

fn kind_of(obj: &Value) -> RbacKind {
    match obj["kind"].as_str().unwrap() {
        "Role" => RbacKind::Role,
        "ClusterRole" => RbacKind::ClusterRole,
        "RoleBinding" => RbacKind::RoleBinding,
        _ => RbacKind::ClusterRoleBinding,
    }
}

fn policy(objects: &[Value]) -> Policy {
    let mut p = Policy::default();
    for o in objects {
        p.upsert(kind_of(o), o);
    }
    p
}

fn user(name: &str, groups: &[&str]) -> UserInfo {
    UserInfo::new(name, groups.iter().map(|g| g.to_string()))
}

/// The attributes of an HTTP request, as the server derives them.
fn req(method: &str, path: &str, query: &[(&str, &str)]) -> Attributes {
    let q: HashMap<String, String> = query
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Attributes::of(&Method::from_bytes(method.as_bytes()).unwrap(), path, &q)
}

fn role(kind: &str, ns: Option<&str>, name: &str, rules: Value) -> Value {
    json!({"kind": kind, "metadata": {"name": name, "namespace": ns}, "rules": rules})
}

fn bind(kind: &str, ns: Option<&str>, name: &str, role: (&str, &str), subjects: Value) -> Value {
    json!({"kind": kind, "metadata": {"name": name, "namespace": ns},
           "roleRef": {"kind": role.0, "name": role.1}, "subjects": subjects})
}

#[test]
fn request_attributes_follow_kube_request_info() {
    let r = |a: Attributes| match a {
        Attributes::Resource(r) => r,
        other => panic!("{other:?}"),
    };
    let list = r(req("GET", "/api/v1/namespaces/a/pods", &[]));
    assert_eq!(
        (list.verb.as_str(), list.namespace.as_deref()),
        ("list", Some("a"))
    );
    let watch = r(req("GET", "/api/v1/pods", &[("watch", "true")]));
    assert_eq!((watch.verb.as_str(), watch.namespace), ("watch", None));
    let status = r(req(
        "PATCH",
        "/apis/cluster.kubernetes-fleet.io/v1/memberclusters/m1/status",
        &[],
    ));
    assert_eq!(status.verb, "patch");
    assert_eq!(status.subresource.as_deref(), Some("status"));
    assert_eq!(status.name.as_deref(), Some("m1"));
    let pinned = r(req(
        "GET",
        "/apis/cluster.kubernetes-fleet.io/v1/memberclusters",
        &[("fieldSelector", "metadata.name=m1"), ("watch", "1")],
    ));
    assert_eq!(
        (pinned.verb.as_str(), pinned.name.as_deref()),
        ("watch", Some("m1"))
    );
    let ns = r(req("GET", "/api/v1/namespaces/team", &[]));
    assert_eq!(
        ns.namespace.as_deref(),
        Some("team"),
        "a namespace is inside itself"
    );
    assert_eq!(
        r(req("DELETE", "/api/v1/namespaces/a/pods", &[])).verb,
        "deletecollection"
    );
    assert_eq!(
        req("GET", "/apis", &[]),
        Attributes::NonResource {
            verb: "get".into(),
            path: "/apis".into()
        }
    );
}

#[test]
fn bindings_grant_in_their_scope_only() {
    let p = policy(&[
        role(
            "ClusterRole",
            None,
            "reader",
            json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]),
        ),
        role(
            "Role",
            Some("a"),
            "writer",
            json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create"]}]),
        ),
        bind(
            "RoleBinding",
            Some("a"),
            "read-a",
            ("ClusterRole", "reader"),
            json!([{"kind": "User", "name": "ann"}]),
        ),
        bind(
            "RoleBinding",
            Some("a"),
            "write-a",
            ("Role", "writer"),
            json!([{"kind": "Group", "name": "devs"}]),
        ),
        bind(
            "ClusterRoleBinding",
            None,
            "read-all",
            ("ClusterRole", "reader"),
            json!([{"kind": "ServiceAccount", "name": "bot", "namespace": "ci"}]),
        ),
    ]);
    let ann = user("ann", &[]);
    let dev = user("dan", &["devs"]);
    let bot = user("system:serviceaccount:ci:bot", &[]);
    let cases = [
        (&ann, "GET", "/api/v1/namespaces/a/configmaps/x", true),
        (&ann, "GET", "/api/v1/namespaces/b/configmaps/x", false),
        (&ann, "GET", "/api/v1/configmaps", false),
        (&ann, "POST", "/api/v1/namespaces/a/configmaps", false),
        (&dev, "POST", "/api/v1/namespaces/a/configmaps", true),
        (&dev, "POST", "/api/v1/namespaces/b/configmaps", false),
        (&bot, "GET", "/api/v1/configmaps", true),
        (&bot, "GET", "/api/v1/namespaces/z/configmaps/x", true),
        (&bot, "GET", "/api/v1/namespaces/z/secrets/x", false),
        (&bot, "DELETE", "/api/v1/namespaces/z/configmaps/x", false),
    ];
    for (who, method, path, allowed) in cases {
        let d = p.authorize(who, &req(method, path, &[]));
        assert_eq!(d.allowed, allowed, "{} {method} {path}: {d:?}", who.name);
        assert_eq!(d.reason.is_empty(), !allowed);
    }
    let d = p.authorize(&ann, &req("GET", "/api/v1/namespaces/a/configmaps/x", &[]));
    assert_eq!(
        d.reason,
        r#"RBAC: allowed by RoleBinding "read-a" of namespace "a" of ClusterRole "reader" to User "ann""#
    );
}

#[test]
fn subresources_names_and_paths_match_like_kube() {
    let p = policy(&[
        role(
            "ClusterRole",
            None,
            "r",
            json!([
                {"apiGroups": ["g"], "resources": ["things"], "verbs": ["get", "list"]},
                {"apiGroups": ["g"], "resources": ["*/status"], "verbs": ["patch"]},
                {"apiGroups": ["g"], "resources": ["others"], "resourceNames": ["one"], "verbs": ["get", "watch"]},
                {"nonResourceURLs": ["/metrics", "/apis/*"], "verbs": ["get"]},
            ]),
        ),
        bind(
            "ClusterRoleBinding",
            None,
            "b",
            ("ClusterRole", "r"),
            json!([{"kind": "User", "name": "u"}]),
        ),
        bind(
            "RoleBinding",
            Some("ns"),
            "rb",
            ("ClusterRole", "r"),
            json!([{"kind": "User", "name": "v"}]),
        ),
    ]);
    let u = user("u", &[]);
    let v = user("v", &[]);
    type Case<'a> = (
        &'a UserInfo,
        &'a str,
        &'a str,
        &'a [(&'a str, &'a str)],
        bool,
    );
    let cases: [Case; 12] = [
        (&u, "GET", "/apis/g/v1/things/a", &[], true),
        (&u, "GET", "/apis/g/v1/things/a/status", &[], false),
        (&u, "PATCH", "/apis/g/v1/things/a/status", &[], true),
        (&u, "PATCH", "/apis/g/v1/things/a", &[], false),
        (&u, "GET", "/apis/g/v1/others/one", &[], true),
        (&u, "GET", "/apis/g/v1/others/two", &[], false),
        (&u, "GET", "/apis/g/v1/others", &[("watch", "true")], false),
        (
            &u,
            "GET",
            "/apis/g/v1/others",
            &[("watch", "true"), ("fieldSelector", "metadata.name=one")],
            true,
        ),
        (&u, "GET", "/metrics", &[], true),
        (&u, "GET", "/apis/g/v1", &[], true),
        (&u, "GET", "/api", &[], false),
        (&v, "GET", "/metrics", &[], false),
    ];
    for (who, method, path, query, allowed) in cases {
        let d = p.authorize(who, &req(method, path, query));
        assert_eq!(d.allowed, allowed, "{} {method} {path} {query:?}", who.name);
    }
}

#[test]
fn builtin_roles_admin_viewer_and_basic_user() {
    let p = policy(&builtin_objects());
    let admin = user("root", &["system:masters"]);
    let viewer = user("val", &["fleet:viewers"]);
    let nobody = user("nobody", &[]);
    let crp = "/apis/placement.kubernetes-fleet.io/v1/clusterresourceplacements";
    let ssar = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
    let cases = [
        (&admin, "POST", crp, true),
        (&admin, "GET", "/metrics", true),
        (&viewer, "GET", crp, true),
        (&viewer, "POST", crp, false),
        (&viewer, "DELETE", "/api/v1/namespaces/a/secrets/s", false),
        (&viewer, "GET", "/api/v1/namespaces/a/secrets/s", false),
        (&viewer, "GET", "/api/v1/secrets", false),
        (&viewer, "GET", "/api/v1/namespaces/a/configmaps/c", true),
        (&viewer, "GET", "/api/v1/namespaces/a/pods/p/status", true),
        (
            &viewer,
            "GET",
            "/apis/apps/v1/namespaces/a/deployments/d/scale",
            true,
        ),
        (
            &viewer,
            "GET",
            "/apis/rbac.authorization.k8s.io/v1/clusterroles",
            true,
        ),
        (&admin, "GET", "/api/v1/namespaces/a/secrets/s", true),
        (&nobody, "GET", crp, false),
        (&nobody, "GET", "/apis", true),
        (&nobody, "GET", "/openapi/v3", true),
        (&nobody, "POST", ssar, true),
        (&nobody, "GET", "/metrics", false),
    ];
    for (who, method, path, allowed) in cases {
        let d = p.authorize(who, &req(method, path, &[]));
        assert_eq!(d.allowed, allowed, "{} {method} {path}", who.name);
    }
}

#[test]
fn member_agents_reach_only_their_own_namespace_and_cluster() {
    let mut objects = builtin_objects();
    objects.extend(member_objects("m1"));
    objects.extend(member_objects("m2"));
    let p = policy(&objects);
    let m1 = user("fleet-member:m1", &["fleet:members"]);
    let mc = "/apis/cluster.kubernetes-fleet.io/v1/memberclusters";
    let cases = [
        ("GET", format!("{mc}/m1"), true),
        ("PATCH", format!("{mc}/m1/status"), true),
        ("PATCH", format!("{mc}/m1"), false),
        ("GET", format!("{mc}/m2"), false),
        ("PATCH", format!("{mc}/m2/status"), false),
        ("GET", mc.to_string(), false),
        ("GET", "/apis/placement.kubernetes-fleet.io/v1/namespaces/fleet-member-m1/works".into(), true),
        ("PUT", "/apis/cluster.kubernetes-fleet.io/v1/namespaces/fleet-member-m1/internalmemberclusters/m1/status".into(), true),
        ("GET", "/apis/placement.kubernetes-fleet.io/v1/namespaces/fleet-member-m2/works".into(), false),
        ("GET", "/apis/placement.kubernetes-fleet.io/v1/clusterresourceplacements".into(), false),
        ("GET", "/api/v1/namespaces/fleet-system/secrets/fleet-member-m1-token".into(), false),
    ];
    for (method, path, allowed) in cases {
        let d = p.authorize(&m1, &req(method, &path, &[]));
        assert_eq!(d.allowed, allowed, "{method} {path}");
    }
}

#[test]
fn removing_a_binding_revokes_and_rules_review_lists_what_applies() {
    let objects = [
        role(
            "Role",
            Some("a"),
            "r",
            json!([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]),
        ),
        bind(
            "RoleBinding",
            Some("a"),
            "b",
            ("Role", "r"),
            json!([{"kind": "User", "name": "u"}]),
        ),
    ];
    let mut p = policy(&objects);
    let u = user("u", &[]);
    let get = req("GET", "/api/v1/namespaces/a/pods/p", &[]);
    assert!(p.authorize(&u, &get).allowed);
    assert_eq!(p.rules_for(&u, "a").len(), 1);
    assert!(p.rules_for(&u, "b").is_empty());
    p.remove(RbacKind::RoleBinding, "a", "b");
    assert!(!p.authorize(&u, &get).allowed);
    p.upsert(RbacKind::RoleBinding, &objects[1]);
    assert!(p.authorize(&u, &get).allowed);
    p.clear(RbacKind::Role);
    assert!(
        !p.authorize(&u, &get).allowed,
        "a binding to a missing role grants nothing"
    );
}

fn arb_rule() -> impl Strategy<Value = Value> {
    let verbs = prop::sample::subsequence(vec!["get", "list", "create", "delete", "*"], 1..3);
    let groups = prop::sample::subsequence(vec!["", "g", "*"], 1..2);
    let resources = prop::sample::subsequence(
        vec!["pods", "things", "things/status", "*/status", "*"],
        1..3,
    );
    let names = prop::sample::subsequence(vec!["x", "y"], 0..2);
    (verbs, groups, resources, names).prop_map(
        |(v, g, r, n)| json!({"verbs": v, "apiGroups": g, "resources": r, "resourceNames": n}),
    )
}

fn arb_objects() -> impl Strategy<Value = Vec<Value>> {
    let ns = prop::sample::select(vec!["a", "b"]);
    let subject = prop::sample::select(vec![
        json!({"kind": "User", "name": "u"}),
        json!({"kind": "Group", "name": "g1"}),
        json!({"kind": "User", "name": "other"}),
    ]);
    let obj = (
        0..4usize,
        ns,
        prop::collection::vec(arb_rule(), 0..3),
        subject,
        0..2usize,
    )
        .prop_map(|(k, ns, rules, subject, role)| match k {
            0 => role_obj("Role", Some(ns), role, rules),
            1 => role_obj("ClusterRole", None, role, rules),
            2 => bind(
                "RoleBinding",
                Some(ns),
                &format!("b{role}"),
                (
                    if role == 0 { "Role" } else { "ClusterRole" },
                    &format!("r{role}"),
                ),
                json!([subject]),
            ),
            _ => bind(
                "ClusterRoleBinding",
                None,
                &format!("b{role}"),
                ("ClusterRole", &format!("r{role}")),
                json!([subject]),
            ),
        });
    prop::collection::vec(obj, 0..10)
}

fn role_obj(kind: &str, ns: Option<&str>, i: usize, rules: Vec<Value>) -> Value {
    role(kind, ns, &format!("r{i}"), Value::Array(rules))
}

fn arb_request() -> impl Strategy<Value = Attributes> {
    (
        prop::sample::select(vec!["get", "list", "create", "delete", "patch"]),
        prop::sample::select(vec!["", "g"]),
        prop::sample::select(vec!["pods", "things"]),
        prop::option::of(prop::sample::select(vec!["status"])),
        prop::option::of(prop::sample::select(vec!["a", "b"])),
        prop::option::of(prop::sample::select(vec!["x", "y"])),
    )
        .prop_map(|(verb, group, resource, sub, ns, name)| {
            Attributes::Resource(ResourceAttributes {
                verb: verb.into(),
                group: group.into(),
                resource: resource.into(),
                subresource: sub.map(String::from),
                namespace: ns.map(String::from),
                name: name.map(String::from),
            })
        })
}

proptest! {
    /// RBAC is purely additive: one more object never takes a permission away, and applying
    /// then removing an object leaves every decision as it was.
    #[test]
    fn adding_objects_never_revokes(objects in arb_objects(), extra in arb_objects(), reqs in prop::collection::vec(arb_request(), 1..20)) {
        let before = policy(&objects);
        let mut after = policy(&objects);
        let u = user("u", &["g1"]);
        for o in &extra {
            after.upsert(kind_of(o), o);
        }
        for r in &reqs {
            if before.authorize(&u, r).allowed {
                // Replacing an object with a same-named one may narrow it; only compare when
                // `extra` adds new names.
                let replaced = extra.iter().any(|e| objects.iter().any(|o| o["kind"] == e["kind"] && o["metadata"] == e["metadata"]));
                prop_assert!(replaced || after.authorize(&u, r).allowed, "{r:?}");
            }
        }
    }

    /// With no binding naming the user, nothing is allowed; a user never gains another
    /// user's permissions.
    #[test]
    fn strangers_get_nothing(objects in arb_objects(), reqs in prop::collection::vec(arb_request(), 1..20)) {
        let p = policy(&objects);
        let stranger = user("stranger", &["nobody"]);
        for r in &reqs {
            prop_assert!(!p.authorize(&stranger, r).allowed);
        }
    }

    /// Removing every object (in any order) leaves a policy that denies everything.
    #[test]
    fn removing_everything_denies_everything(objects in arb_objects(), reqs in prop::collection::vec(arb_request(), 1..10)) {
        let mut p = policy(&objects);
        for o in objects.iter().rev() {
            let m = &o["metadata"];
            p.remove(kind_of(o), m["namespace"].as_str().unwrap_or_default(), m["name"].as_str().unwrap());
        }
        let u = user("u", &["g1"]);
        for r in &reqs {
            prop_assert!(!p.authorize(&u, r).allowed);
        }
    }
}
