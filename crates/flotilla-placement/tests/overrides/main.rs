//! Overrides end to end through the public API: which snapshots apply to a placement, what
//! each cluster receives of each manifest, how snapshots are planned, and properties that hold
//! for any fleet and any rules.

mod fixtures;
mod properties;
mod render;
mod selection;
mod snapshots;
