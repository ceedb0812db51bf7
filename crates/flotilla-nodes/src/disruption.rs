//! The disruption controller's decisions (reference §2): which nodes are candidates, in what
//! order, and which method acts on them — Emptiness, then Drift, then multi-node and
//! single-node consolidation; the first method that yields a command wins.

pub mod candidate;
pub mod methods;
