//! The cost of the secured hub's gate (authentication + RBAC + client slot + audit) per
//! request, against the latency of the request itself. Target: under 5% of request latency.
//!
//! - `rbac/*`: one RBAC decision on a hub with 10,000 members' roles and bindings (40,000
//!   objects) plus the built-in roles: an administrator (group binding), a member agent in its
//!   own namespace, and a refusal (every binding of the user visited).
//! - `get/*`: a whole in-process GET of a ConfigMap through the router, without the gate and
//!   with it (admin token, audit log on). In-process requests have no TLS or TCP, so the
//!   gate's share here is larger than over HTTPS: a conservative figure.

use std::sync::Arc;

use axum::body::Body;
use criterion::{Criterion, black_box};
use flotilla_apiserver::auth::{TokenFile, UserInfo};
use flotilla_apiserver::rbac::bootstrap::{builtin_objects, member_objects};
use flotilla_apiserver::rbac::{Attributes, Policy, RbacKind};
use flotilla_apiserver::{Hub, HubOptions, SecurityOptions};
use http_body_util::BodyExt;
use serde_json::json;
use tower::ServiceExt;

/// The allocator of the `flotilla` binary.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const MEMBERS: usize = 10_000;

fn kind(obj: &serde_json::Value) -> RbacKind {
    match obj["kind"].as_str() {
        Some("Role") => RbacKind::Role,
        Some("ClusterRole") => RbacKind::ClusterRole,
        Some("RoleBinding") => RbacKind::RoleBinding,
        _ => RbacKind::ClusterRoleBinding,
    }
}

fn rbac(c: &mut Criterion) {
    let mut policy = Policy::default();
    let registry =
        flotilla_apiserver::registry::Registry::new(flotilla_apiserver::builtin_definitions());
    for obj in builtin_objects(&registry.snapshot())
        .into_iter()
        .chain((0..MEMBERS).flat_map(|i| member_objects(&format!("member-{i:05}"))))
    {
        policy.upsert(kind(&obj), &obj);
    }
    let admin = UserInfo::new("flotilla-admin", ["system:masters".to_string()]);
    let member = UserInfo::new("fleet-member:member-04242", ["fleet:members".to_string()]);
    let q = Default::default();
    let list_crps = Attributes::of(
        &http::Method::GET,
        "/apis/placement.kubernetes-fleet.io/v1/clusterresourceplacements",
        &q,
    );
    let own_work = Attributes::of(
        &http::Method::PUT,
        "/apis/placement.kubernetes-fleet.io/v1/namespaces/fleet-member-member-04242/works/w/status",
        &q,
    );
    assert!(policy.authorize(&admin, &list_crps).allowed);
    assert!(policy.authorize(&member, &own_work).allowed);
    assert!(!policy.authorize(&member, &list_crps).allowed);
    let mut g = c.benchmark_group("rbac");
    g.bench_function("admin-list-placements", |b| {
        b.iter(|| black_box(policy.authorize(&admin, &list_crps)))
    });
    g.bench_function("member-own-namespace", |b| {
        b.iter(|| black_box(policy.authorize(&member, &own_work)))
    });
    g.bench_function("member-refused", |b| {
        b.iter(|| black_box(policy.authorize(&member, &list_crps)))
    });
    g.finish();
}

fn get(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let hub = runtime.block_on(async {
        let hub = Hub::start(
            Arc::new(flotilla_store::MemoryStore::new()),
            HubOptions {
                security: Some(SecurityOptions {
                    tokens: Arc::new(TokenFile::single("bench", "admin", &["system:masters"])),
                    audit_log: Some(dir.path().join("audit.log")),
                    limits: Default::default(),
                }),
                ..HubOptions::default()
            },
        )
        .await
        .unwrap();
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "v"}});
        let api: kube::Api<k8s_openapi::api::core::v1::ConfigMap> =
            kube::Api::namespaced(hub.client(), "default");
        api.create(&Default::default(), &serde_json::from_value(cm).unwrap())
            .await
            .unwrap();
        hub
    });
    let plain = flotilla_apiserver::http::router(hub.engine().clone(), Default::default());
    let secured = hub.router();
    let call = |router: axum::Router, token: Option<&'static str>| async move {
        let mut req = http::Request::get("/api/v1/namespaces/default/configmaps/c");
        if let Some(t) = token {
            req = req.header("authorization", format!("Bearer {t}"));
        }
        let resp = router
            .oneshot(req.body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        black_box(resp.into_body().collect().await.unwrap().to_bytes());
    };
    let mut g = c.benchmark_group("get");
    g.bench_function("without-gate", |b| {
        b.to_async(&runtime).iter(|| call(plain.clone(), None))
    });
    g.bench_function("with-gate", |b| {
        b.to_async(&runtime)
            .iter(|| call(secured.clone(), Some("bench")))
    });
    g.finish();
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    rbac(&mut c);
    get(&mut c);
    c.final_summary();
}
