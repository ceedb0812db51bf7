//! The hub's built-in roles, created when a secured hub starts (and left alone afterwards, so
//! an administrator's edits stick), and the roles of one member agent, created when its token
//! is issued.
//!
//! - `fleet-admin`: everything; bound to the groups `system:masters` and `fleet:admins`.
//! - `fleet-viewer`: get, list and watch of every resource and non-resource path; bound to
//!   `fleet:viewers`.
//! - `flotilla:basic-user`: discovery, `/version`, `/openapi` and the self-reviews
//!   (`kubectl auth can-i`, `kubectl auth whoami`); bound to every authenticated user.
//! - per member `<m>`: all verbs in its own namespace `fleet-member-<m>`, and get/watch of its
//!   own MemberCluster and its status (nothing else on the hub).

use serde_json::{Value, json};

use crate::auth::member_tokens;

/// Group bound to `fleet-admin` besides `system:masters`.
pub const ADMINS_GROUP: &str = "fleet:admins";
/// Group bound to `fleet-viewer`.
pub const VIEWERS_GROUP: &str = "fleet:viewers";

fn cluster_role(name: &str, rules: Value) -> Value {
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name, "labels": {"flotilla.dev/bootstrapping": "true"}},
        "rules": rules,
    })
}

fn binding(
    kind: &str,
    namespace: Option<&str>,
    name: &str,
    role: (&str, &str),
    subjects: Value,
) -> Value {
    let mut metadata = json!({"name": name, "labels": {"flotilla.dev/bootstrapping": "true"}});
    if let Some(ns) = namespace {
        metadata["namespace"] = json!(ns);
    }
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": kind,
        "metadata": metadata,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role.0, "name": role.1},
        "subjects": subjects,
    })
}

fn group(name: &str) -> Value {
    json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": name})
}

/// The built-in ClusterRoles and ClusterRoleBindings.
pub fn builtin_objects() -> Vec<Value> {
    let read = json!(["get", "list", "watch"]);
    vec![
        cluster_role(
            "fleet-admin",
            json!([
                {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                {"nonResourceURLs": ["*"], "verbs": ["*"]},
            ]),
        ),
        cluster_role(
            "fleet-viewer",
            json!([
                {"apiGroups": ["*"], "resources": ["*"], "verbs": read},
                {"nonResourceURLs": ["*"], "verbs": ["get"]},
            ]),
        ),
        cluster_role(
            "flotilla:basic-user",
            json!([
                {"apiGroups": ["authorization.k8s.io"],
                 "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                 "verbs": ["create"]},
                {"apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"],
                 "verbs": ["create"]},
                {"nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/openapi", "/openapi/*",
                                     "/version", "/version/", "/clock"],
                 "verbs": ["get"]},
            ]),
        ),
        binding(
            "ClusterRoleBinding",
            None,
            "fleet-admin",
            ("ClusterRole", "fleet-admin"),
            json!([group("system:masters"), group(ADMINS_GROUP)]),
        ),
        binding(
            "ClusterRoleBinding",
            None,
            "fleet-viewer",
            ("ClusterRole", "fleet-viewer"),
            json!([group(VIEWERS_GROUP)]),
        ),
        binding(
            "ClusterRoleBinding",
            None,
            "flotilla:basic-user",
            ("ClusterRole", "flotilla:basic-user"),
            json!([group(crate::auth::AUTHENTICATED_GROUP)]),
        ),
    ]
}

/// The namespace a member's hub-side objects live in.
pub fn member_namespace(member: &str) -> String {
    format!("fleet-member-{member}")
}

/// The RBAC objects that let `member`'s agent do its job and nothing more.
pub fn member_objects(member: &str) -> Vec<Value> {
    let name = format!("fleet-member-{member}");
    let user = json!([{
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "User",
        "name": member_tokens::user_name(member),
    }]);
    let namespace = member_namespace(member);
    vec![
        cluster_role(
            &name,
            json!([
                {"apiGroups": ["cluster.kubernetes-fleet.io"], "resources": ["memberclusters"],
                 "resourceNames": [member], "verbs": ["get", "list", "watch"]},
                {"apiGroups": ["cluster.kubernetes-fleet.io"], "resources": ["memberclusters/status"],
                 "resourceNames": [member], "verbs": ["get", "update", "patch"]},
            ]),
        ),
        binding(
            "ClusterRoleBinding",
            None,
            &name,
            ("ClusterRole", &name),
            user.clone(),
        ),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "fleet-member-agent", "namespace": namespace},
            "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}],
        }),
        binding(
            "RoleBinding",
            Some(&namespace),
            "fleet-member-agent",
            ("Role", "fleet-member-agent"),
            user,
        ),
    ]
}
