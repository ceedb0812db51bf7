//! The secured hub's gate, driven through its router: authentication (static and member
//! tokens, revocation), RBAC on every verb, self-reviews, client limits, slow bodies, the
//! audit log, and two replicas sharing one store seeing each other's policy and kinds.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use flotilla_apiserver::auth::{TokenFile, member_tokens};
use flotilla_apiserver::limits::ClientLimits;
use flotilla_apiserver::{Hub, HubOptions, SecurityOptions, ServerConfig};
use flotilla_store::{MemoryStore, SharedStorage};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;

const TOKENS: &str = "admin-token,root,1,\"system:masters\"\nviewer-token,val,2,\"fleet:viewers\"\nplain-token,pat,3\n";

struct Secured {
    hub: Hub,
    _dir: tempfile::TempDir,
}

impl Secured {
    async fn start(store: SharedStorage, limits: ClientLimits, server: ServerConfig) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let hub = Hub::start(
            store,
            HubOptions {
                server,
                security: Some(SecurityOptions {
                    tokens: Arc::new(TokenFile::parse(TOKENS).unwrap()),
                    audit_log: Some(dir.path().join("audit.log")),
                    limits,
                }),
                ..HubOptions::default()
            },
        )
        .await
        .unwrap();
        Self { hub, _dir: dir }
    }

    async fn default() -> Self {
        Self::start(
            Arc::new(MemoryStore::new()),
            ClientLimits::default(),
            ServerConfig::default(),
        )
        .await
    }

    fn audit(&self) -> Vec<Value> {
        std::fs::read_to_string(self._dir.path().join("audit.log"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    async fn call(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> (u16, Value) {
        self.call_with(method, path, token, &[], body).await
    }

    async fn send(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> axum::response::Response {
        self.send_with(method, path, token, &[], body).await
    }

    /// [`Secured::call`] with extra request headers.
    async fn call_with(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        headers: &[(&str, &str)],
        body: Option<Value>,
    ) -> (u16, Value) {
        let resp = self.send_with(method, path, token, headers, body).await;
        let code = resp.status().as_u16();
        let bytes = resp.into_body().collect().await.unwrap().to_bytes();
        (code, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
    }

    async fn send_with(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        headers: &[(&str, &str)],
        body: Option<Value>,
    ) -> axum::response::Response {
        let mut req = http::Request::builder().method(method).uri(path);
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        if let Some(t) = token {
            req = req.header("authorization", format!("Bearer {t}"));
        }
        let body = match body {
            Some(b) => {
                req = req.header(
                    "content-type",
                    if method == "PATCH" {
                        "application/merge-patch+json"
                    } else {
                        "application/json"
                    },
                );
                Body::from(b.to_string())
            }
            None => Body::empty(),
        };
        self.hub
            .router()
            .oneshot(req.body(body).unwrap())
            .await
            .unwrap()
    }
}

fn cm(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}})
}

/// Issues a member token the way `flotilla token issue` does, through the API as an admin.
async fn issue_member(hub: &Secured, member: &str) -> String {
    let token = member_tokens::token(member, &rand_bytes(member));
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": format!("fleet-member-{member}")}});
    assert_eq!(
        hub.call("POST", "/api/v1/namespaces", Some("admin-token"), Some(ns))
            .await
            .0,
        201
    );
    for obj in flotilla_apiserver::rbac::bootstrap::member_objects(member) {
        let plural = match obj["kind"].as_str().unwrap() {
            "ClusterRole" => "clusterroles",
            "ClusterRoleBinding" => "clusterrolebindings",
            "Role" => "roles",
            _ => "rolebindings",
        };
        let path = match obj["metadata"]["namespace"].as_str() {
            Some(ns) => format!("/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/{plural}"),
            None => format!("/apis/rbac.authorization.k8s.io/v1/{plural}"),
        };
        let (code, body) = hub
            .call("POST", &path, Some("admin-token"), Some(obj))
            .await;
        assert_eq!(code, 201, "{body}");
    }
    let (code, body) = hub
        .call(
            "POST",
            "/api/v1/namespaces/fleet-system/secrets",
            Some("admin-token"),
            Some(member_tokens::secret(member, &token)),
        )
        .await;
    assert_eq!(code, 201, "{body}");
    token
}

fn rand_bytes(seed: &str) -> [u8; 32] {
    let mut b = [0u8; 32];
    for (i, c) in seed.bytes().cycle().take(32).enumerate() {
        b[i] = c.wrapping_mul(i as u8 + 1);
    }
    b
}

/// The next piece of a streamed body (`None` at its end), or an error after 5 s without one.
async fn next_frame(body: &mut Body) -> Result<Option<bytes::Bytes>, tokio::time::error::Elapsed> {
    tokio::time::timeout(Duration::from_secs(5), body.frame())
        .await
        .map(|f| f.map(|f| f.unwrap().into_data().unwrap_or_default()))
}

/// Polls until `check` holds (the RBAC cache follows the store asynchronously, as kube's
/// informers do).
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..100 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what} did not happen within 5 s");
}

#[tokio::test]
async fn credentials_are_required_and_roles_decide() {
    let hub = Secured::default().await;
    let cms = "/api/v1/namespaces/default/configmaps";
    assert_eq!(hub.call("GET", cms, None, None).await.0, 401);
    assert_eq!(hub.call("GET", cms, Some("forged"), None).await.0, 401);
    for public in ["/healthz", "/livez", "/readyz", "/version"] {
        assert_eq!(hub.call("GET", public, None, None).await.0, 200, "{public}");
    }
    assert_eq!(
        hub.call("GET", "/apis", None, None).await.0,
        401,
        "discovery needs credentials"
    );
    assert_eq!(
        hub.call("GET", "/apis", Some("plain-token"), None).await.0,
        200,
        "basic users discover"
    );

    assert_eq!(
        hub.call("POST", cms, Some("admin-token"), Some(cm("a")))
            .await
            .0,
        201
    );
    assert_eq!(
        hub.call("GET", &format!("{cms}/a"), Some("viewer-token"), None)
            .await
            .0,
        200
    );
    let (code, body) = hub
        .call("POST", cms, Some("viewer-token"), Some(cm("b")))
        .await;
    assert_eq!(code, 403);
    assert_eq!(body["reason"], "Forbidden");
    assert_eq!(
        body["message"],
        r#"configmaps is forbidden: User "val" cannot create resource "configmaps" in API group "" in the namespace "default""#
    );
    let (code, body) = hub
        .call("DELETE", &format!("{cms}/a"), Some("plain-token"), None)
        .await;
    assert_eq!(code, 403);
    assert_eq!(
        body["message"],
        r#"configmaps "a" is forbidden: User "pat" cannot delete resource "configmaps" in API group "" in the namespace "default""#
    );
    assert_eq!(
        hub.call("GET", "/metrics", Some("plain-token"), None)
            .await
            .0,
        403
    );
    assert_eq!(
        hub.call("GET", "/metrics", Some("admin-token"), None)
            .await
            .0,
        200
    );

    // A RoleBinding grants its namespace, at once on every request after the cache sees it.
    let rb = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "pat-edit", "namespace": "default"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "fleet-admin"},
        "subjects": [{"kind": "User", "name": "pat"}]});
    assert_eq!(
        hub.call(
            "POST",
            "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
            Some("admin-token"),
            Some(rb)
        )
        .await
        .0,
        201
    );
    eventually("pat may create in default", || async {
        hub.call("POST", cms, Some("plain-token"), Some(cm("by-pat")))
            .await
            .0
            == 201
    })
    .await;
    assert_eq!(
        hub.call(
            "GET",
            "/api/v1/namespaces/kube-system/configmaps",
            Some("plain-token"),
            None
        )
        .await
        .0,
        403
    );

    // The audit log has one line per mutating request, denied ones included.
    let audit = hub.audit();
    assert!(
        audit
            .iter()
            .all(|l| l["verb"] != "get" && l["verb"] != "list")
    );
    let denied = audit
        .iter()
        .find(|l| l["user"] == "val")
        .expect("the viewer's denied create");
    assert_eq!(
        (
            denied["verb"].as_str(),
            denied["code"].as_u64(),
            denied["result"].as_str()
        ),
        (Some("create"), Some(403), Some("failure"))
    );
    let created = audit
        .iter()
        .find(|l| l["name"] == "by-pat" || (l["user"] == "pat" && l["code"] == 201))
        .expect("pat's create");
    assert_eq!(created["resource"], "configmaps");
    assert!(
        created["reason"]
            .as_str()
            .unwrap()
            .contains("RoleBinding \"pat-edit\""),
        "{created}"
    );
    let unauthenticated = audit
        .iter()
        .filter(|l| l["user"] == "system:anonymous")
        .count();
    assert_eq!(
        unauthenticated, 0,
        "unauthenticated reads are not mutations"
    );
}

#[tokio::test]
async fn member_tokens_are_confined_and_revocable() {
    let hub = Secured::default().await;
    let m1 = issue_member(&hub, "m1").await;
    issue_member(&hub, "m2").await;
    let own = "/api/v1/namespaces/fleet-member-m1/configmaps";
    eventually("m1 may write its namespace", || async {
        hub.call("POST", own, Some(&m1), Some(cm("x"))).await.0 == 201
    })
    .await;
    let cases = [
        ("GET", "/api/v1/namespaces/fleet-member-m2/configmaps", 403),
        (
            "GET",
            "/apis/placement.kubernetes-fleet.io/v1/clusterresourceplacements",
            403,
        ),
        (
            "GET",
            "/api/v1/namespaces/fleet-system/secrets/fleet-member-m2-token",
            403,
        ),
        (
            "GET",
            "/apis/cluster.kubernetes-fleet.io/v1/memberclusters/m2",
            403,
        ),
        (
            "GET",
            "/apis/cluster.kubernetes-fleet.io/v1/memberclusters/m1",
            404,
        ),
    ];
    for (method, path, code) in cases {
        let (got, body) = hub.call(method, path, Some(&m1), None).await;
        assert_eq!(got, code, "{method} {path}: {body}");
    }
    let (code, body) = hub
        .call(
            "POST",
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            Some(&m1),
            Some(json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})),
        )
        .await;
    assert_eq!(code, 201);
    assert_eq!(body["status"]["userInfo"]["username"], "fleet-member:m1");
    assert_eq!(
        body["status"]["userInfo"]["groups"],
        json!(["fleet:members", "system:authenticated"])
    );

    // A wrong secret for a real member, and a revoked token, are both 401.
    let forged = member_tokens::token("m1", &[9; 32]);
    assert_eq!(hub.call("GET", own, Some(&forged), None).await.0, 401);
    // Watches open before the revocation: m1's ends with it, m2's flows on.
    let m2 = issue_member(&hub, "m2b").await;
    let theirs = "/api/v1/namespaces/fleet-member-m2b/configmaps";
    eventually("m2b may read its namespace", || async {
        hub.call("GET", theirs, Some(&m2), None).await.0 == 200
    })
    .await;
    let watch = |path: &str, token: &str| {
        let path = format!("{path}?watch=true");
        let token = token.to_string();
        let hub = &hub;
        async move {
            let resp = hub.send("GET", &path, Some(&token), None).await;
            assert_eq!(resp.status(), 200);
            resp.into_body()
        }
    };
    let mut m1_watch = watch(own, &m1).await;
    let mut m2_watch = watch(theirs, &m2).await;
    // (Each watch first reports the object that is there.)
    assert!(next_frame(&mut m1_watch).await.unwrap().is_some());
    let (code, _) = hub
        .call(
            "DELETE",
            "/api/v1/namespaces/fleet-system/secrets/fleet-member-m1-token",
            Some("admin-token"),
            None,
        )
        .await;
    assert_eq!(code, 200);
    assert_eq!(hub.call("GET", own, Some(&m1), None).await.0, 401);
    assert_eq!(
        next_frame(&mut m1_watch)
            .await
            .expect("the revoked watch ends at once"),
        None,
        "the revoked token's watch ended"
    );
    let (code, _) = hub
        .call(
            "POST",
            theirs,
            Some("admin-token"),
            Some(cm("after-revocation")),
        )
        .await;
    assert_eq!(code, 201);
    let event = next_frame(&mut m2_watch).await.unwrap().unwrap();
    assert!(
        String::from_utf8_lossy(&event).contains("after-revocation"),
        "another member's watch flows on"
    );
}

#[tokio::test]
async fn built_in_roles_are_restored_and_viewers_read_no_secrets() {
    let hub = Secured::default().await;
    let crb = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings";
    let roles = "/apis/rbac.authorization.k8s.io/v1/clusterroles";
    // Deleting fleet-admin's binding locks the administrator out only until it is restored.
    let (code, _) = hub
        .call(
            "DELETE",
            &format!("{crb}/fleet-admin"),
            Some("admin-token"),
            None,
        )
        .await;
    assert_eq!(code, 200);
    eventually("fleet-admin's binding comes back", || async {
        hub.call(
            "GET",
            &format!("{crb}/fleet-admin"),
            Some("admin-token"),
            None,
        )
        .await
        .0 == 200
    })
    .await;

    // A viewer reads every kind but Secrets.
    assert_eq!(
        hub.call(
            "GET",
            "/api/v1/namespaces/default/configmaps",
            Some("viewer-token"),
            None
        )
        .await
        .0,
        200
    );
    assert_eq!(
        hub.call("GET", crb, Some("viewer-token"), None).await.0,
        200
    );
    let (code, body) = hub
        .call(
            "GET",
            "/api/v1/namespaces/fleet-system/secrets",
            Some("viewer-token"),
            None,
        )
        .await;
    assert_eq!(code, 403, "{body}");
    assert_eq!(
        hub.call("GET", "/api/v1/secrets", Some("viewer-token"), None)
            .await
            .0,
        403
    );

    // Widening fleet-viewer by hand is undone; with autoupdate "false" it sticks.
    let widen = |autoupdate: &'static str| {
        let hub = &hub;
        async move {
            let patch = json!({"metadata": {"annotations": {"rbac.authorization.kubernetes.io/autoupdate": autoupdate}},
                "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list", "watch"]}]});
            let path = format!("{roles}/fleet-viewer");
            let (code, body) = hub
                .call("PATCH", &path, Some("admin-token"), Some(patch))
                .await;
            assert_eq!(code, 200, "{body}");
        }
    };
    let stored_groups = || async {
        let path = format!("{roles}/fleet-viewer");
        hub.call("GET", &path, Some("admin-token"), None).await.1["rules"][0]["apiGroups"].clone()
    };
    widen("true").await;
    eventually("fleet-viewer is narrowed again", || async {
        stored_groups().await == json!([""])
    })
    .await;
    assert_eq!(
        hub.call("GET", "/api/v1/secrets", Some("viewer-token"), None)
            .await
            .0,
        403
    );
    widen("false").await;
    eventually("the administrator's fleet-viewer is in force", || async {
        hub.call("GET", "/api/v1/secrets", Some("viewer-token"), None)
            .await
            .0
            == 200
    })
    .await;
    assert_eq!(stored_groups().await, json!(["*"]));
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(
        hub.call("GET", "/api/v1/secrets", Some("viewer-token"), None)
            .await
            .0,
        200,
        "an opted-out role is left as it was made, past a reconcile period"
    );
}

#[tokio::test]
async fn self_subject_access_reviews_answer_from_the_policy() {
    let hub = Secured::default().await;
    let ssar = |ns: &str, verb: &str, resource: &str| {
        json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
               "spec": {"resourceAttributes": {"namespace": ns, "verb": verb, "group": "placement.kubernetes-fleet.io", "resource": resource}}})
    };
    let path = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
    let cases = [
        ("viewer-token", "list", true),
        ("viewer-token", "create", false),
        ("admin-token", "create", true),
        ("plain-token", "list", false),
    ];
    for (token, verb, allowed) in cases {
        let (code, body) = hub
            .call(
                "POST",
                path,
                Some(token),
                Some(ssar("", verb, "clusterresourceplacements")),
            )
            .await;
        assert_eq!(code, 201, "{body}");
        assert_eq!(body["status"]["allowed"], allowed, "{token} {verb}: {body}");
    }
    let (code, body) = hub
        .call("POST", path, Some("plain-token"), Some(json!({"spec": {}})))
        .await;
    assert_eq!((code, body["reason"].as_str()), (400, Some("BadRequest")));
    let (code, body) = hub
        .call(
            "POST",
            "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
            Some("viewer-token"),
            Some(json!({"spec": {"namespace": "default"}})),
        )
        .await;
    assert_eq!(code, 201);
    assert!(
        body["status"]["resourceRules"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["verbs"] == json!(["get", "list", "watch"])),
        "{body}"
    );
}

#[tokio::test]
async fn one_client_cannot_hold_every_watch_or_stall_with_a_slow_body() {
    let hub = Secured::start(
        Arc::new(MemoryStore::new()),
        ClientLimits {
            max_in_flight: 10,
            max_watches: 2,
        },
        ServerConfig {
            body_timeout: Duration::from_millis(300),
            ..ServerConfig::default()
        },
    )
    .await;
    let watch = "/api/v1/namespaces/default/configmaps?watch=true";
    let w1 = hub.send("GET", watch, Some("viewer-token"), None).await;
    let w2 = hub.send("GET", watch, Some("viewer-token"), None).await;
    assert_eq!((w1.status().as_u16(), w2.status().as_u16()), (200, 200));
    let (code, body) = hub.call("GET", watch, Some("viewer-token"), None).await;
    assert_eq!(
        (code, body["reason"].as_str()),
        (429, Some("TooManyRequests"))
    );
    assert!(
        body["message"].as_str().unwrap().contains("open watches"),
        "{body}"
    );
    assert_eq!(
        hub.send("GET", watch, Some("admin-token"), None)
            .await
            .status()
            .as_u16(),
        200,
        "other users are unaffected"
    );
    drop(w1);
    let w3 = hub.send("GET", watch, Some("viewer-token"), None).await;
    assert_eq!(w3.status().as_u16(), 200, "a closed watch frees its slot");

    // A body that never finishes is cut off with 408 and a Status naming the limit.
    let (_tx, rx) = tokio::sync::mpsc::channel::<Result<bytes::Bytes, std::io::Error>>(1);
    let stalled = Body::from_stream(tokio_stream::wrappers::ReceiverStream::new(rx));
    let req = http::Request::post("/api/v1/namespaces/default/configmaps")
        .header("authorization", "Bearer admin-token")
        .header("content-type", "application/json")
        .body(stalled)
        .unwrap();
    let resp = hub.hub.router().oneshot(req).await.unwrap();
    assert_eq!(resp.status().as_u16(), 408);
    let body: Value =
        serde_json::from_slice(&resp.into_body().collect().await.unwrap().to_bytes()).unwrap();
    assert_eq!(body["reason"], "Timeout");
}

#[tokio::test]
async fn replicas_sharing_a_store_share_policy_and_kinds() {
    let store: SharedStorage = Arc::new(MemoryStore::new());
    let a = Secured::start(
        store.clone(),
        ClientLimits::default(),
        ServerConfig::default(),
    )
    .await;
    let b = Secured::start(store, ClientLimits::default(), ServerConfig::default()).await;
    let crb = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "pat-admin"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "fleet-admin"},
        "subjects": [{"kind": "User", "name": "pat"}]});
    assert_eq!(
        a.call(
            "POST",
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            Some("admin-token"),
            Some(crb)
        )
        .await
        .0,
        201
    );
    eventually("replica b grants pat", || async {
        b.call(
            "GET",
            "/api/v1/namespaces/default/configmaps",
            Some("plain-token"),
            None,
        )
        .await
        .0 == 200
    })
    .await;
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                               "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}});
    assert_eq!(
        a.call(
            "POST",
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            Some("admin-token"),
            Some(crd)
        )
        .await
        .0,
        201
    );
    eventually("replica b serves widgets", || async {
        b.call(
            "GET",
            "/apis/example.com/v1/namespaces/default/widgets",
            Some("admin-token"),
            None,
        )
        .await
        .0 == 200
    })
    .await;
}

#[tokio::test]
async fn subject_access_and_token_reviews_answer_for_others() {
    let hub = Secured::default().await;
    let m1 = issue_member(&hub, "m1").await;
    let sar = |spec: Value| json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec});
    let ask = |path: &'static str, body: Value, token: &'static str| {
        let hub = &hub;
        async move { hub.call("POST", path, Some(token), Some(body)).await }
    };
    let sars = "/apis/authorization.k8s.io/v1/subjectaccessreviews";
    let viewer = |verb: &str, resource: &str| {
        sar(json!({"groups": ["fleet:viewers"], "user": "val",
                   "resourceAttributes": {"verb": verb, "resource": resource, "namespace": "default"}}))
    };
    let (code, body) = ask(sars, viewer("list", "configmaps"), "admin-token").await;
    assert_eq!(
        (code, &body["status"]["allowed"]),
        (201, &json!(true)),
        "{body}"
    );
    let (code, body) = ask(sars, viewer("get", "secrets"), "admin-token").await;
    assert_eq!(
        (code, &body["status"]["allowed"]),
        (201, &json!(false)),
        "{body}"
    );
    // Only those granted `create` on the reviews may ask about others.
    let (code, _) = ask(sars, viewer("get", "secrets"), "viewer-token").await;
    assert_eq!(code, 403);
    let (code, body) = ask(
        sars,
        sar(json!({"resourceAttributes": {"verb": "get"}})),
        "admin-token",
    )
    .await;
    assert_eq!(code, 422, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("spec.user"),
        "{body}"
    );

    // A local review is about its namespace only.
    let local =
        "/apis/authorization.k8s.io/v1/namespaces/fleet-member-m1/localsubjectaccessreviews";
    let review = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "LocalSubjectAccessReview",
        "spec": {"user": "fleet-member:m1", "groups": ["fleet:members"],
                 "resourceAttributes": {"verb": "create", "resource": "configmaps"}}});
    eventually("m1's roles are in force", || async {
        ask(local, review.clone(), "admin-token").await.1["status"]["allowed"] == true
    })
    .await;
    let mut elsewhere = review.clone();
    elsewhere["spec"]["resourceAttributes"]["namespace"] = json!("default");
    let (code, body) = ask(local, elsewhere, "admin-token").await;
    assert_eq!(code, 422, "{body}");

    // TokenReview: who a token is, and a clear no for one that is not.
    let tokens = "/apis/authentication.k8s.io/v1/tokenreviews";
    let token_review = |token: &str| json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}});
    let (code, body) = ask(tokens, token_review(&m1), "admin-token").await;
    assert_eq!(code, 201, "{body}");
    assert_eq!(body["status"]["authenticated"], true);
    assert_eq!(body["status"]["user"]["username"], "fleet-member:m1");
    let (_, body) = ask(tokens, token_review("not-a-token"), "admin-token").await;
    assert_eq!(body["status"]["authenticated"], false, "{body}");
    assert_eq!(ask(tokens, token_review(&m1), "viewer-token").await.0, 403);

    // Discovery lists them, create-only.
    let (_, doc) = hub
        .call(
            "GET",
            "/apis/authorization.k8s.io/v1",
            Some("admin-token"),
            None,
        )
        .await;
    let names: Vec<&str> = doc["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert!(
        names.contains(&"subjectaccessreviews") && names.contains(&"localsubjectaccessreviews"),
        "{doc}"
    );
    let (_, groups) = hub.call("GET", "/apis", Some("admin-token"), None).await;
    assert!(
        groups.to_string().contains("authentication.k8s.io/v1"),
        "{groups}"
    );
}

#[tokio::test]
async fn impersonation_takes_the_impersonate_verb_and_is_audited() {
    let hub = Secured::default().await;
    let cms = "/api/v1/namespaces/default/configmaps";
    let as_viewer = [
        ("Impersonate-User", "val"),
        ("Impersonate-Group", "fleet:viewers"),
    ];
    // An administrator acting as a viewer has a viewer's rights, no more.
    let (code, _) = hub
        .call_with("GET", cms, Some("admin-token"), &as_viewer, None)
        .await;
    assert_eq!(code, 200);
    let (code, body) = hub
        .call_with(
            "POST",
            cms,
            Some("admin-token"),
            &as_viewer,
            Some(cm("as-val")),
        )
        .await;
    assert_eq!(code, 403, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains(r#"User "val""#),
        "{body}"
    );
    let (code, body) = hub
        .call_with(
            "POST",
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            Some("admin-token"),
            &as_viewer,
            Some(json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})),
        )
        .await;
    assert_eq!(code, 201);
    assert_eq!(body["status"]["userInfo"]["username"], "val");
    assert_eq!(
        body["status"]["userInfo"]["groups"],
        json!(["fleet:viewers", "system:authenticated"])
    );
    // A viewer may not impersonate anyone.
    let as_root = [
        ("Impersonate-User", "root"),
        ("Impersonate-Group", "system:masters"),
    ];
    let (code, body) = hub
        .call_with("GET", cms, Some("viewer-token"), &as_root, None)
        .await;
    assert_eq!(code, 403, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("cannot impersonate resource \"users\""),
        "{body}"
    );
    // Groups without a user are a bad request, not ignored.
    let (code, _) = hub
        .call_with(
            "GET",
            cms,
            Some("admin-token"),
            &[("Impersonate-Group", "x")],
            None,
        )
        .await;
    assert_eq!(code, 400);
    // The audit names who asked and whom they acted as.
    let line = hub
        .audit()
        .into_iter()
        .find(|l| l["name"].is_null() && l["code"] == 403 && l["verb"] == "create")
        .expect("the refused create as val is audited");
    assert_eq!(line["user"], "root");
    assert_eq!(line["impersonatedUser"]["username"], "val");
}
