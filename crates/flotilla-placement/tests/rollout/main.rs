//! The rolling update, end to end through `rollout`: KubeFleet's arithmetic and round rules,
//! readiness from binding conditions, and properties of simulated rollouts.

mod birth;
mod fixtures;
mod invariants;
mod limits;
mod readiness;
mod rules;
