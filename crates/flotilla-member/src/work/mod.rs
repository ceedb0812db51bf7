//! The pure core of the member agent's Work applier: every decision KubeFleet's work applier
//! (`pkg/controllers/workapplier`) makes about a Work's manifests, as plain functions over
//! JSON, without I/O, async or clock reads (time is an argument).
//!
//! The applier's shell drives them in this order for one Work:
//!
//! 1. [`order::plan`] names each manifest ([`identifier`]), rejects the ones that cannot be
//!    applied at all, and sorts the rest into apply waves (namespaces first, webhooks last).
//! 2. For each planned manifest, the shell reads the live object and [`decide::decide`] says what
//!    to do with it under the Work's [`strategy::Strategy`]: create, apply, report differences,
//!    or refuse (takeover, co-ownership, drift), using [`ownership`] and [`drift`].
//! 3. After a create or apply, [`decide::applied`] settles the [`outcome::Outcome`], and
//!    [`availability::availability`] judges the object read back from the member.
//!    A client-side apply is sent as the patch [`merge::three_way_patch`] computes.
//! 4. [`status::work_status`] rolls the per-manifest results up into the Work's conditions and
//!    `manifestConditions`, keeping transition and first-observed times from the previous
//!    status; [`status::applied_resources`] lists what the AppliedWork now records.
//! 5. [`cleanup::stale`] names what the AppliedWork recorded that the Work no longer carries,
//!    and [`cleanup::release`] says whether to delete each or only drop the owner reference.
//! 6. [`hold::report`] says whether to write the new status now or hold a first "applied,
//!    awaiting workloads" status briefly, in case one write can report availability too.
//! 7. [`pace::Pace`] and [`pace::next_check`] say when to look at the Work again, and
//!    [`flips::AvailabilityFlips`] which changes of a watched workload call for a look.

pub mod availability;
pub mod cleanup;
pub mod decide;
pub mod drift;
pub mod flips;
pub mod hold;
pub mod identifier;
pub mod manifest;
pub mod merge;
pub mod order;
pub mod outcome;
pub mod ownership;
pub mod pace;
pub mod status;
pub mod strategy;

pub use availability::{Availability, availability};
pub use cleanup::{Release, release, stale};
pub use decide::{ApplyMethod, Decision, Input, applied, decide};
pub use drift::differences;
pub use identifier::{ManifestError, ManifestProblem, identify};
pub use merge::{KindFamily, MemberPatch, three_way_patch};
pub use order::{Plan, Planned, PlannedWave, Wave, plan};
pub use outcome::{Outcome, ProcessingResult};
pub use ownership::AppliedWorkOwner;
pub use pace::Pace;
pub use status::{ManifestResult, applied_resources, unrecorded, work_status};
pub use strategy::Strategy;
