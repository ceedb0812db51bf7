//! The fleet dashboard at `/ui/`: a read-only single-page application embedded in the binary
//! (no JavaScript toolchain: plain ES modules, served as written), on the hub's own HTTPS
//! listener.
//!
//! The pages hold no data. The browser reads everything through the hub's Kubernetes API as
//! the signed-in user (a bearer token from the login page, or the TLS client certificate), so
//! authentication, RBAC, limits and audit apply exactly as for kubectl, and live updates come
//! from the API's watch streams. The only computed view, an update run's forecast, is a
//! read-only API subresource behind the same gate ([`forecast`]).

mod assets;
pub mod forecast;

use axum::Router;
use axum::body::Body;
use axum::extract::Path;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use http::{StatusCode, header};

pub use assets::Asset;

/// `app` with the dashboard's pages at `/ui/…` (and `/ui` redirecting to `/ui/`).
pub fn with_dashboard(app: Router) -> Router {
    Router::new()
        .route("/ui", get(|| async { Redirect::permanent("/ui/") }))
        .route("/ui/", get(|| async { serve("index.html") }))
        .route(
            "/ui/{*path}",
            get(|Path(path): Path<String>| async move { serve(&path) }),
        )
        .merge(app)
}

/// The asset at `path` (or a 404 saying where the dashboard starts), with headers that keep
/// the page to itself: a strict content security policy (only its own scripts, styles and
/// API), no framing, no sniffing, no referrer.
fn serve(path: &str) -> Response {
    let (status, content_type, body) = match Asset::find(path) {
        // Served from the binary's static bytes, not copied per request.
        Some(asset) => (StatusCode::OK, asset.content_type, Body::from(asset.body)),
        None => (
            StatusCode::NOT_FOUND,
            "text/plain; charset=utf-8",
            Body::from(format!(
                "no dashboard page {path:?}; the dashboard starts at /ui/\n"
            )),
        ),
    };
    (
        status,
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::X_FRAME_OPTIONS, "DENY"),
            (header::REFERRER_POLICY, "no-referrer"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'self'; img-src 'self' data:; object-src 'none'; \
                 base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
            ),
        ],
        body,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    async fn get_path(path: &str) -> (StatusCode, http::HeaderMap, String) {
        let app = with_dashboard(Router::new());
        let response = app
            .oneshot(
                http::Request::get(path)
                    .body(axum::body::Body::empty())
                    .unwrap(),
            )
            .await
            .unwrap();
        let (parts, body) = response.into_parts();
        let body = body.collect().await.unwrap().to_bytes();
        (
            parts.status,
            parts.headers,
            String::from_utf8_lossy(&body).into_owned(),
        )
    }

    #[tokio::test]
    async fn pages_are_served_with_their_type_and_a_strict_policy() {
        let (status, headers, body) = get_path("/ui/").await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(headers[header::CONTENT_TYPE], "text/html; charset=utf-8");
        assert!(
            headers[header::CONTENT_SECURITY_POLICY]
                .to_str()
                .unwrap()
                .contains("frame-ancestors 'none'")
        );
        assert!(
            body.contains("<script type=\"module\" src=\"js/main.js\">"),
            "{body}"
        );
        let (status, headers, _) = get_path("/ui/js/main.js").await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(
            headers[header::CONTENT_TYPE],
            "text/javascript; charset=utf-8"
        );
    }

    #[tokio::test]
    async fn unknown_pages_are_404_and_bare_ui_redirects() {
        let (status, _, body) = get_path("/ui/../store.db").await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
        let (status, headers, body) = get_path("/ui/nope.js").await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        assert!(body.contains("starts at /ui/"), "{body}");
        let (status, headers, _) = get_path("/ui").await;
        assert_eq!(status, StatusCode::PERMANENT_REDIRECT);
        assert_eq!(headers[header::LOCATION], "/ui/");
    }

    #[test]
    fn every_file_of_the_ui_directory_is_embedded() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("ui");
        let mut pending = vec![root.clone()];
        while let Some(dir) = pending.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    pending.push(path);
                    continue;
                }
                let relative = path.strip_prefix(&root).unwrap().to_str().unwrap();
                assert!(
                    Asset::find(relative).is_some(),
                    "ui/{relative} is not embedded"
                );
            }
        }
    }

    #[test]
    fn every_module_an_asset_imports_is_embedded() {
        for asset in Asset::ALL {
            let text = std::str::from_utf8(asset.body).unwrap();
            for line in text.lines().filter(|l| l.starts_with("import ")) {
                let target = line.rsplit(['"', '\'']).nth(1).unwrap();
                let resolved = format!("js/{}", target.trim_start_matches("./"));
                assert!(
                    Asset::find(&resolved).is_some(),
                    "{} imports {target}, which is not embedded",
                    asset.path
                );
            }
        }
    }
}
