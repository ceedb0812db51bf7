//! Cluster update orchestration (the `updates.flotilla.dev` kinds): Kubernetes and node image
//! upgrades of member clusters in stages and groups, honouring maintenance windows, with gates,
//! failure thresholds and auto-upgrade channels.
//!
//! The crate is a pure core — window evaluation, version and image selection, concurrency
//! arithmetic, the run state machine and its roll-up — plus thin hub controllers that observe,
//! call the core and write status once.

pub mod auto_upgrade;
pub mod controller;
pub mod fleet;
pub mod forecast;
pub mod quota;
pub mod release;
pub mod run;
pub mod target;
pub mod window;
