//! Simulated member clusters and the simulated cloud they run on.
//!
//! A simulated member is Flotilla's own API engine over a memory store, plus the machinery a
//! real cluster runs behind its API: nodes from node pools, a pod scheduler, workload
//! controllers and kubelets that make pods ready after a delay. The member agent talks to it
//! through kube-rs exactly as it talks to a real cluster.

pub mod actions;
pub mod catalog;
pub mod cluster;
pub mod daemonset;
pub mod deployment;
pub mod disruption_budget;
pub mod events;
pub mod fleet;
pub mod ids;
pub mod job;
pub mod karpenter;
pub mod kubelet;
pub mod node_fit;
pub mod node_pool;
pub mod objects;
pub mod pod_state;
pub mod pod_template;
pub mod reconcile;
pub mod releases;
pub mod replicaset;
pub mod resources;
pub mod scheduler;
pub mod services;
pub mod statefulset;
pub mod upgrade;
pub mod version;
