//! The hub's built-in roles, kept as they should be by [`super::reconcile`] while a secured
//! hub runs (an administrator who wants to change one sets its annotation
//! `rbac.authorization.kubernetes.io/autoupdate: "false"`, as with kube-apiserver's bootstrap
//! roles), and the roles of one member agent, created when its token is issued.
//!
//! - `fleet-admin`: everything; bound to the groups `system:masters` and `fleet:admins`.
//! - `fleet-viewer`: get, list and watch of every resource except Secrets (as Kubernetes'
//!   `view` role), and of every non-resource path; bound to `fleet:viewers`. Reading Secrets
//!   takes a role that grants them, such as `fleet-secret-reader`.
//! - `fleet-secret-reader`: get, list and watch of Secrets; bound to nobody.
//! - `flotilla:basic-user`: discovery, `/version`, `/openapi` and the self-reviews
//!   (`kubectl auth can-i`, `kubectl auth whoami`); bound to every authenticated user.
//! - per member `<m>`: all verbs in its own namespace `fleet-member-<m>`, and get/watch of its
//!   own MemberCluster and its status (nothing else on the hub).

use serde_json::{Value, json};

use crate::auth::member_tokens;
use crate::registry::Snapshot;

/// The annotation that, set to `"false"`, keeps a built-in role or binding as an administrator
/// changed it.
pub const AUTOUPDATE_ANNOTATION: &str = "rbac.authorization.kubernetes.io/autoupdate";
/// The label every built-in role and binding carries.
pub const BOOTSTRAPPING_LABEL: &str = "flotilla.dev/bootstrapping";

/// Group bound to `fleet-admin` besides `system:masters`.
pub const ADMINS_GROUP: &str = "fleet:admins";
/// Group bound to `fleet-viewer`.
pub const VIEWERS_GROUP: &str = "fleet:viewers";

fn cluster_role(name: &str, rules: Value) -> Value {
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name, "labels": {BOOTSTRAPPING_LABEL: "true"}},
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
    let mut metadata = json!({"name": name, "labels": {BOOTSTRAPPING_LABEL: "true"}});
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

/// The rules of `fleet-viewer` for the kinds `snap` serves: every resource of every group but
/// the core group, and of the core group every resource but Secrets (RBAC grants, it never
/// subtracts, so the groups and core resources are listed; the reconciler rewrites the role
/// when a CustomResourceDefinition adds a group).
pub fn viewer_rules(snap: &Snapshot) -> Value {
    let read = json!(["get", "list", "watch"]);
    let groups: Vec<&String> = snap.groups().keys().filter(|g| !g.is_empty()).collect();
    let mut core: Vec<String> = snap
        .resources_in("", "v1")
        .iter()
        .filter(|info| info.plural != "secrets")
        .map(|info| info.plural.clone())
        .collect();
    core.sort();
    core.dedup();
    core.extend(["*/status".to_string(), "*/scale".to_string()]);
    json!([
        {"apiGroups": [""], "resources": core, "verbs": read},
        {"apiGroups": groups, "resources": ["*"], "verbs": read},
        {"nonResourceURLs": ["*"], "verbs": ["get"]},
    ])
}

/// The built-in ClusterRoles and ClusterRoleBindings, for a hub serving the kinds of `snap`.
pub fn builtin_objects(snap: &Snapshot) -> Vec<Value> {
    let read = json!(["get", "list", "watch"]);
    vec![
        cluster_role(
            "fleet-admin",
            json!([
                {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                {"nonResourceURLs": ["*"], "verbs": ["*"]},
            ]),
        ),
        cluster_role("fleet-viewer", viewer_rules(snap)),
        cluster_role(
            "fleet-secret-reader",
            json!([{"apiGroups": [""], "resources": ["secrets"], "verbs": read}]),
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

/// The RBAC objects that let `member`'s agent, authenticated by its member token, do its job
/// and nothing more.
pub fn member_objects(member: &str) -> Vec<Value> {
    member_objects_for(
        member,
        json!([{
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "User",
            "name": member_tokens::user_name(member),
        }]),
    )
}

/// The same RBAC objects for the agent as `subjects` (on a hub that is a plain Kubernetes
/// cluster, the agent's ServiceAccount there).
pub fn member_objects_for(member: &str, subjects: Value) -> Vec<Value> {
    let name = format!("fleet-member-{member}");
    let user = subjects;
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
