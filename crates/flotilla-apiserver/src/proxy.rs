//! `/clusters/<name>/…`: the hub's window into member clusters it serves in-process (the
//! simulated members of `flotilla up`). A request there is authenticated as any hub request,
//! then handed, with the prefix removed, to that member's own API, so
//! `kubectl --server https://hub/clusters/member-1 get pods -A` talks to the member.
//!
//! On a secured hub the caller needs the verb on `memberclusters/proxy` for that member, and
//! the hub's RBAC must also allow the request it makes of the member: a `fleet-viewer` lists
//! a member's pods through the hub but, as on the hub, not its Secrets.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use axum::Router;
use axum::extract::{Path, Request, State};
use axum::response::Response;
use axum::routing::any;
use http::Uri;
use tower::ServiceExt;

use crate::http::{error_response, query_of};
use crate::rbac::{Attributes, ResourceAttributes};
use crate::security::Security;
use crate::status::{ApiError, Target};

/// The member APIs reachable through the hub, by member name; members may come and go while
/// the hub serves.
#[derive(Clone, Default)]
pub struct MemberApis {
    routers: Arc<RwLock<HashMap<String, Router>>>,
}

impl std::fmt::Debug for MemberApis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let count = self.routers.read().map(|r| r.len()).unwrap_or_default();
        f.debug_struct("MemberApis")
            .field("members", &count)
            .finish()
    }
}

impl MemberApis {
    /// Makes member `name`'s API reachable at `/clusters/<name>/`.
    pub fn insert(&self, name: &str, api: Router) {
        if let Ok(mut routers) = self.routers.write() {
            routers.insert(name.to_string(), api);
        }
    }

    /// Stops proxying to member `name`.
    pub fn remove(&self, name: &str) {
        if let Ok(mut routers) = self.routers.write() {
            routers.remove(name);
        }
    }

    fn get(&self, name: &str) -> Option<Router> {
        self.routers.read().ok()?.get(name).cloned()
    }
}

#[derive(Clone)]
struct ProxyState {
    members: MemberApis,
    security: Option<Arc<Security>>,
}

/// `hub` with `/clusters/<name>/…` routed to the member APIs in `members`. With `security`,
/// a request there is authenticated like any hub request and needs RBAC permission for the
/// `proxy` subresource of that MemberCluster (verb from the HTTP method, as kube's
/// `nodes/proxy`).
pub fn with_member_proxy(
    hub: Router,
    security: Option<Arc<Security>>,
    members: MemberApis,
) -> Router {
    let state = ProxyState { members, security };
    Router::new()
        .route("/clusters/{name}", any(root))
        .route("/clusters/{name}/", any(root))
        .route("/clusters/{name}/{*rest}", any(forward))
        .with_state(state)
        .fallback_service(hub)
}

async fn root(State(state): State<ProxyState>, Path(name): Path<String>, req: Request) -> Response {
    proxy(state, name, String::new(), req).await
}

async fn forward(
    State(state): State<ProxyState>,
    Path((name, rest)): Path<(String, String)>,
    req: Request,
) -> Response {
    proxy(state, name, rest, req).await
}

async fn proxy(state: ProxyState, name: String, rest: String, req: Request) -> Response {
    if let Some(security) = state.security.clone() {
        let verb = match *req.method() {
            http::Method::GET | http::Method::HEAD => "get",
            http::Method::POST => "create",
            http::Method::PUT => "update",
            http::Method::PATCH => "patch",
            http::Method::DELETE => "delete",
            _ => "proxy",
        };
        let attrs = Attributes::Resource(ResourceAttributes {
            verb: verb.to_string(),
            group: "cluster.kubernetes-fleet.io".into(),
            resource: "memberclusters".into(),
            subresource: Some("proxy".into()),
            namespace: None,
            name: Some(name.clone()),
        });
        let inner = Attributes::of(req.method(), &format!("/{rest}"), &query_of(req.uri()));
        let policy = security.clone();
        return security
            .guard(req, attrs, |req, user| async move {
                if !policy.policy().authorize(&user, &inner).allowed {
                    let mut err = ApiError::forbidden_by_rbac(&user.name, &inner);
                    err.message = format!("{} (in member cluster {name:?})", err.message);
                    return error_response(&err);
                }
                forward_to(&state, &name, &rest, req).await
            })
            .await;
    }
    forward_to(&state, &name, &rest, req).await
}

/// Hands `req` to member `name`'s API with the `/clusters/<name>` prefix removed.
async fn forward_to(state: &ProxyState, name: &str, rest: &str, mut req: Request) -> Response {
    let Some(member) = state.members.get(name) else {
        let target = Target {
            group: "cluster.kubernetes-fleet.io".into(),
            resource: "memberclusters".into(),
            name: name.to_string(),
        };
        let mut err = ApiError::not_found(&target);
        err.message = format!(
            "member cluster \"{name}\" is not served by this hub (only the simulated members of `flotilla up` are reachable under /clusters/)"
        );
        return error_response(&err);
    };
    let path_and_query = match req.uri().query() {
        Some(q) => format!("/{rest}?{q}"),
        None => format!("/{rest}"),
    };
    match path_and_query.parse::<Uri>() {
        Ok(uri) => *req.uri_mut() = uri,
        Err(e) => return error_response(&ApiError::bad_request(format!("invalid path: {e}"))),
    }
    match member.oneshot(req).await {
        Ok(resp) => resp,
        Err(never) => match never {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Hub, HubOptions};
    use axum::body::Body;
    use http_body_util::BodyExt;

    async fn call(app: &Router, path: &str, token: &str) -> (u16, serde_json::Value) {
        let req = http::Request::get(path)
            .header("authorization", format!("Bearer {token}"))
            .body(Body::empty())
            .unwrap();
        let resp = app.clone().oneshot(req).await.unwrap();
        let code = resp.status().as_u16();
        let body = resp.into_body().collect().await.unwrap().to_bytes();
        (code, serde_json::from_slice(&body).unwrap_or_default())
    }

    #[tokio::test]
    async fn member_apis_are_reached_under_clusters_with_hub_authentication() {
        let store = || Arc::new(flotilla_store::MemoryStore::new());
        let tokens = crate::auth::TokenFile::parse(
            "secret,admin,a,\"system:masters\"\nnobody,nobody,n\nview,val,v,\"fleet:viewers\"\n",
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let hub = Hub::start(
            store(),
            HubOptions {
                security: Some(crate::SecurityOptions {
                    tokens: Arc::new(tokens),
                    audit_log: Some(dir.path().join("audit.log")),
                    limits: Default::default(),
                }),
                ..Default::default()
            },
        )
        .await
        .unwrap();
        let member = Hub::start(
            store(),
            HubOptions {
                system_namespaces: &["default", "only-in-member"],
                ..Default::default()
            },
        )
        .await
        .unwrap();
        let members = MemberApis::default();
        members.insert("m1", member.router());
        let app = with_member_proxy(hub.router(), hub.security().cloned(), members.clone());

        let (code, body) = call(&app, "/clusters/m1/api/v1/namespaces?limit=10", "secret").await;
        assert_eq!(code, 200);
        let names: Vec<_> = body["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["metadata"]["name"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(names, ["default", "only-in-member"]);
        let (code, body) = call(&app, "/api/v1/namespaces/fleet-system", "secret").await;
        assert_eq!(
            (code, body["metadata"]["name"].as_str()),
            (200, Some("fleet-system"))
        );

        let (code, body) = call(&app, "/clusters/m1/api/v1/namespaces", "wrong").await;
        assert_eq!((code, body["reason"].as_str()), (401, Some("Unauthorized")));
        let (code, body) = call(&app, "/clusters/m1/api/v1/namespaces", "nobody").await;
        assert_eq!((code, body["reason"].as_str()), (403, Some("Forbidden")));
        assert!(
            body["message"]
                .as_str()
                .unwrap()
                .contains("memberclusters/proxy"),
            "{body}"
        );
        // A viewer reads a member through the hub, but not its Secrets (nor does it on the hub).
        let (code, _) = call(&app, "/clusters/m1/api/v1/namespaces", "view").await;
        assert_eq!(code, 200);
        for path in [
            "/clusters/m1/api/v1/namespaces/default/secrets",
            "/clusters/m1/api/v1/secrets",
            "/api/v1/namespaces/fleet-system/secrets",
        ] {
            let (code, body) = call(&app, path, "view").await;
            assert_eq!(
                (code, body["reason"].as_str()),
                (403, Some("Forbidden")),
                "{path}"
            );
            assert!(
                body["message"].as_str().unwrap().contains("secrets"),
                "{body}"
            );
        }
        let (_, body) = call(&app, "/clusters/m1/api/v1/secrets", "view").await;
        assert!(
            body["message"]
                .as_str()
                .unwrap()
                .contains("member cluster \"m1\""),
            "{body}"
        );
        let (code, body) = call(&app, "/clusters/m2/version", "secret").await;
        assert_eq!((code, body["reason"].as_str()), (404, Some("NotFound")));
        assert!(body["message"].as_str().unwrap().contains("\"m2\""));
        // A write through the proxy is audited like any hub request, refused ones too.
        let post = |token: &str| {
            http::Request::post("/clusters/m1/api/v1/namespaces/default/configmaps")
                .header("authorization", format!("Bearer {token}"))
                .header("content-type", "application/json")
                .body(Body::from(
                    r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}"#,
                ))
                .unwrap()
        };
        assert_eq!(
            app.clone().oneshot(post("secret")).await.unwrap().status(),
            201
        );
        assert_eq!(
            app.clone().oneshot(post("nobody")).await.unwrap().status(),
            403
        );
        let audit: Vec<serde_json::Value> = std::fs::read_to_string(dir.path().join("audit.log"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let lines: Vec<_> = audit
            .iter()
            .map(|l| {
                (
                    l["user"].as_str().unwrap(),
                    l["subresource"].as_str(),
                    l["code"].as_u64(),
                )
            })
            .collect();
        assert_eq!(
            lines,
            [
                ("admin", Some("proxy"), Some(201)),
                ("nobody", Some("proxy"), Some(403))
            ]
        );
        members.remove("m1");
        assert_eq!(call(&app, "/clusters/m1/version", "secret").await.0, 404);
    }
}
