//! Cluster upgrades on the member side: the member agent carries out the MemberUpgrades an
//! update run creates in its hub namespace, through a [`Provider`] that reads and changes what
//! the cluster runs (the simulated cloud's, or one for Cluster API or a cloud's managed
//! clusters), and reports what the cluster runs into the hub.
//!
//! - [`provider`]: the trait and its data;
//! - [`plan`]: the pure core, the ordered steps from current versions and a MemberUpgrade;
//! - [`executor`]: the shell that watches MemberUpgrades, runs the steps and writes status.

pub mod executor;
pub mod plan;
pub mod provider;

pub use executor::{Executor, VersionReports};
pub use plan::{Plan, PlanError, Step, plan};
pub use provider::{
    CurrentVersions, ExpectedDurations, NodeVersion, PoolVersions, Provider, ProviderError,
    compare_versions,
};
