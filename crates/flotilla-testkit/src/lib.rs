//! Flotilla's one test kit, shared by every crate's tests:
//!
//! - [`eventually`] and [`eventually_async`]: poll a probe until it answers or a deadline passes;
//! - [`kubectl`]: the real kubectl pointed at a kubeconfig, with a private discovery cache;
//! - [`RealCluster`]: a real Kubernetes cluster on loopback (etcd, kube-apiserver,
//!   kube-controller-manager, kube-scheduler and kwok nodes) started by `tools/kube/cluster`,
//!   stopped when dropped.

mod eventually;
pub mod kubectl;
mod real_cluster;

pub use eventually::{eventually, eventually_async};
pub use real_cluster::{ClusterOptions, RealCluster};

/// The repository's root directory (where `tools/` is).
pub fn repo_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root")
}
