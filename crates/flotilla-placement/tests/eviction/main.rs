//! The eviction verdict through the public API: every branch of KubeFleet's controller with
//! its exact messages, and properties of the disruption budget arithmetic.

mod fixtures;
mod properties;
mod verdicts;
