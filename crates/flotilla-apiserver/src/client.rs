//! In-process `kube::Client`s wired straight to the engine's tower service (no TCP, no TLS),
//! so Flotilla's controllers use plain kube-rs whether they run inside the hub or outside it.

/// A `kube::Client` that sends every request to `router` directly.
pub fn in_process(router: axum::Router, default_namespace: &str) -> kube::Client {
    kube::Client::new(router, default_namespace)
}
