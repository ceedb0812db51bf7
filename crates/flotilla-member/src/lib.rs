//! Fleet membership: both halves of the protocol that joins a cluster to the fleet.
//!
//! - [`membership`] runs on the hub: for each MemberCluster it prepares the member's namespace
//!   and InternalMemberCluster, mirrors the agent's reports into the MemberCluster's status,
//!   and, when the MemberCluster is deleted, makes the member leave and cleans up.
//! - [`agent`] runs once per member cluster: it installs what it needs there ([`setup`]),
//!   heartbeats, reports the member's properties
//!   ([`report`]), applies the Works in its hub namespace while joined ([`applier`]) and, on
//!   leaving, removes everything the fleet placed on the member; with a provider, it also
//!   reports what the member runs and carries out its MemberUpgrades ([`upgrade`]).
//!
//! They live together because they share the InternalMemberCluster contract. The decisions
//! are pure functions: [`report::report`] (properties from nodes, pods and the prices a user
//! gives, [`prices`]),
//! [`membership::status::member_status`] (the MemberCluster status from what the agent wrote)
//! the Work applier's core, [`work`], and the upgrade planner, [`upgrade::plan`].

pub mod agent;
pub mod applier;
pub mod membership;
pub mod metrics;
pub mod prices;
pub mod report;
pub mod setup;
pub mod upgrade;
pub mod work;

pub use agent::Agent;
pub use applier::Applier;
pub use report::PriceSource;
