//! Simulated member clusters and the simulated cloud they run on.
//!
//! A simulated member is Flotilla's own API engine over a memory store, plus the machinery a
//! real cluster runs behind its API: nodes from node pools, a pod scheduler, workload
//! controllers and kubelets that make pods ready after a delay. The member agent talks to it
//! through kube-rs exactly as it talks to a real cluster.

pub mod catalog;
pub mod fleet;
