//! Karpenter v1's consolidation decisions (`reference/karpenter.md` §4): which nodes to delete,
//! or to replace with one cheaper node, because their pods fit elsewhere.
//!
//! The caller (candidate filtering, budgets) hands over candidates already filtered and ordered,
//! and each pool's remaining disruption budget; these functions simulate, decide and explain.
//!
//! - [`candidate`]: a node that may be consolidated.
//! - [`balanced`]: the `Balanced` policy's score of a move.
//! - [`simulation`]: the cluster as the scheduler sees it without some nodes.
//! - [`compute`]: one candidate set → delete, replace, or why not (`computeConsolidation`).
//! - [`multi_node`] and [`single_node`]: the two methods, choosing which candidate sets to try.
//! - [`command`]: what they return, explained for events and conditions.

pub mod balanced;
pub mod candidate;
pub mod command;
pub mod compute;
pub mod multi_node;
pub mod simulation;
pub mod single_node;

pub use balanced::{BALANCED_K, PoolScore, PoolTotals};
pub use candidate::Candidate;
pub use command::{Action, Command, Decision, Method, Rejected, Rejection};
pub use compute::{ConsolidationOptions, SPOT_TO_SPOT_GATE, compute_consolidation};
pub use multi_node::multi_node_consolidation;
pub use simulation::{Cluster, Simulator};
pub use single_node::single_node_consolidation;
