//! Flotilla's one test kit, shared by every crate's tests:
//!
//! - [`eventually`] and [`eventually_async`]: poll a probe until it answers or a deadline passes;
//! - [`kubectl`]: the real kubectl pointed at a kubeconfig, with a private discovery cache;
//! - [`RealCluster`]: a real Kubernetes cluster on loopback (etcd, kube-apiserver,
//!   kube-controller-manager, kube-scheduler and kwok nodes) started by `tools/kube/cluster`,
//!   stopped when dropped;
//! - [`RealKarpenter`]: real Karpenter (its kwok cloud provider) managing a [`RealCluster`]'s
//!   nodes, with the instance types a test gives;
//! - [`InClusterProcess`]: a Deployment's container on a [`RealCluster`] run as a local
//!   process with what its pod would get (kwok runs no containers).

mod eventually;
mod in_cluster;
mod karpenter;
pub mod kubectl;
mod real_cluster;

pub use eventually::{eventually, eventually_async};
pub use in_cluster::InClusterProcess;
pub use karpenter::RealKarpenter;
pub use real_cluster::{ClusterOptions, RealCluster};

/// A kube-rs client from a kubeconfig file (its current context).
pub async fn kube_client(kubeconfig: &std::path::Path) -> kube::Client {
    let kubeconfig = kube::config::Kubeconfig::read_from(kubeconfig).expect("kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .expect("config");
    kube::Client::try_from(config).expect("client")
}

/// The repository's root directory (where `tools/` is).
pub fn repo_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root")
}
