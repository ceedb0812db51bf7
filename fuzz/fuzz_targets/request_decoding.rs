//! Fuzzes the hub's request decoding end to end through its router: bodies (JSON, YAML,
//! protobuf, garbage), every patch type, and label/field selectors and other query
//! parameters, on create, update, patch, list and delete of core, fleet and CRD kinds.
//!
//! Input layout (so seeds can be written by hand): byte 0 picks the verb and patch type,
//! byte 1 the resource, byte 2 the content type; then the query string up to the first NUL,
//! then the body. Every answer must be a success or a well-formed `Status` with the same code,
//! never a 5xx and never a panic; a streamed success (a watch) is judged by its code.
#![no_main]

use std::sync::OnceLock;

use axum::body::{Body, Bytes, HttpBody};
use http_body_util::BodyExt;
use libfuzzer_sys::fuzz_target;
use tower::ServiceExt;

struct World {
    runtime: tokio::runtime::Runtime,
    router: axum::Router,
}

fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let router = runtime.block_on(async {
            let hub = flotilla_apiserver::Hub::start(
                std::sync::Arc::new(flotilla_store::MemoryStore::new()),
                flotilla_apiserver::HubOptions::default(),
            )
            .await
            .expect("hub");
            let router = flotilla_apiserver::http::router(hub.engine().clone(), Default::default());
            std::mem::forget(hub);
            router
        });
        World { runtime, router }
    })
}

const RESOURCES: &[&str] = &[
    "/api/v1/namespaces/default/configmaps",
    "/apis/apps/v1/namespaces/default/deployments",
    "/apis/cluster.kubernetes-fleet.io/v1/memberclusters",
    "/apis/placement.kubernetes-fleet.io/v1/clusterresourceplacements",
    "/api/v1/namespaces",
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
    "/apis/updates.flotilla.dev/v1beta1/updateruns",
];

const CONTENT_TYPES: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
    "text/plain",
    "",
];

const PATCHES: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
];

fuzz_target!(|data: &[u8]| {
    let [op, resource, content_type, rest @ ..] = data else {
        return;
    };
    let (query, body) = match rest.iter().position(|b| *b == 0) {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, &[][..]),
    };
    let Ok(query) = std::str::from_utf8(query) else {
        return;
    };
    if query.chars().any(|c| c.is_whitespace() || c == '#') {
        return;
    }
    let collection = RESOURCES[*resource as usize % RESOURCES.len()];
    let (method, path, ctype) = match op % 6 {
        0 => (
            "POST",
            collection.to_string(),
            CONTENT_TYPES[*content_type as usize % CONTENT_TYPES.len()],
        ),
        1 => (
            "PUT",
            format!("{collection}/x"),
            CONTENT_TYPES[*content_type as usize % CONTENT_TYPES.len()],
        ),
        2 => (
            "PATCH",
            format!("{collection}/x"),
            PATCHES[*content_type as usize % PATCHES.len()],
        ),
        3 => (
            "PATCH",
            format!("{collection}/x/status"),
            PATCHES[*content_type as usize % PATCHES.len()],
        ),
        4 => ("GET", collection.to_string(), ""),
        _ => ("DELETE", collection.to_string(), "application/json"),
    };
    let uri = if query.is_empty() {
        path
    } else {
        format!("{path}?{query}")
    };
    let Ok(request) = http::Request::builder()
        .method(method)
        .uri(&uri)
        .header("content-type", ctype)
        .body(Body::from(body.to_vec()))
    else {
        return;
    };
    let w = world();
    let (code, bytes) = w.runtime.block_on(async {
        let response = w.router.clone().oneshot(request).await.expect("infallible");
        let code = response.status().as_u16();
        // A watch (`?watch=1`, which the fuzzer finds) answers with a stream that stays open
        // until its timeout, half an hour by default: a streamed success is checked by its
        // code alone. Errors are whole `Status` bodies and are read in full.
        let streamed = HttpBody::size_hint(response.body()).exact().is_none();
        if code < 400 && streamed {
            return (code, Bytes::new());
        }
        (
            code,
            response
                .into_body()
                .collect()
                .await
                .expect("body")
                .to_bytes(),
        )
    });
    assert!(
        code < 500,
        "{method} {uri} answered {code}: {}",
        String::from_utf8_lossy(&bytes)
    );
    if code >= 400 {
        let status: serde_json::Value = serde_json::from_slice(&bytes)
            .unwrap_or_else(|e| panic!("{method} {uri}: {code} body is not JSON ({e})"));
        assert_eq!(status["kind"], "Status", "{status}");
        assert_eq!(status["code"], code, "{status}");
        assert!(
            status["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{status}"
        );
    }
});
