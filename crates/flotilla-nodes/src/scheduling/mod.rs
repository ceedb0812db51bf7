//! The scheduling simulation of Karpenter v1 (`reference/karpenter.md` §4): which existing
//! nodes and which new node claims pending pods would land on, as a pure function of plain
//! data.
//!
//! - [`resources`]: what pods request and nodes hold; [`from_k8s`] reads it, with pods' node
//!   requirements and nodes' labels and taints, from Kubernetes objects, and [`from_api`]
//!   reads pools and claims from Karpenter's kinds.
//! - [`requirements`]: Karpenter's requirements algebra over label keys.
//! - [`taints`]: taints and tolerations.
//! - [`instance_types`]: instance types and their offerings, and a KWOK-like catalog.
//! - [`topology`]: topology spread and pod (anti-)affinity.
//! - [`model`]: the pods, existing nodes and pools the scheduler reads.
//! - [`scheduler`]: the scheduler itself and its [`Results`](scheduler::Results).

mod claim;
mod compatibility;
pub mod from_api;
pub mod from_k8s;
pub mod instance_types;
pub mod labels;
pub mod model;
pub mod requirements;
pub mod resources;
pub mod scheduler;
pub mod taints;
pub mod topology;

pub use instance_types::{CapacityType, InstanceType, Offering, kwok_catalog};
pub use model::{ExistingNode, HostPort, NodePool, SimPod};
pub use requirements::{Operator, Requirement, Requirements};
pub use resources::Resources;
pub use scheduler::{NewClaim, Results, Scheduler, SchedulingOptions, schedule};
pub use taints::{Effect, Taint, Toleration};
