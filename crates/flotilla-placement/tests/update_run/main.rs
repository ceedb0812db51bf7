//! Staged update runs: stage assignment and ordering, the pass state machine, and the
//! concurrency invariant.

mod assignment;
mod execute;
mod fixtures;
mod invariants;
