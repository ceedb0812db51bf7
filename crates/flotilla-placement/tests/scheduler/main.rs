//! The scheduler, end to end through `schedule`: KubeFleet's filters, scores and pick rules,
//! the seed document's examples, and properties that must hold for any fleet.

mod affinity;
mod fixtures;
mod invariants;
mod pick_all;
mod pick_fixed;
mod pick_n;
mod scoring;
