//! Node auto-provisioning and disruption inside a member cluster, with Karpenter v1's
//! semantics (`reference/karpenter.md`): which nodes to launch for pending pods, which nodes to
//! disrupt (emptiness, drift, multi- and single-node consolidation) within the pools' budgets,
//! when claims expire, and how nodes are drained and terminated.
//!
//! Every decision is a pure function over plain data, with no clock reads and no I/O; the
//! controllers that run inside each member read the member's API, call these functions, and
//! write the result.

pub mod batch;
pub mod budget;
pub mod consolidation;
pub mod disruption;
pub mod drift;
pub mod expiration;
pub mod overlay;
pub mod pdb;
pub mod pod;
pub mod pool_status;
pub mod scheduling;
pub mod static_capacity;
pub mod termination;
