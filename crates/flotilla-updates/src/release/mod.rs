//! Release and version selection: which Kubernetes version an auto-upgrade channel moves to,
//! which node image each selection type picks, whether a member may take a Kubernetes target,
//! which members are outside the support window, and the names and triggers of generated runs.
//!
//! Everything here is a pure function of the release catalog (the `KubernetesVersion` and
//! `NodeImageVersion` specs) and a time `now` the caller passes in.
//!
//! Decisions the AKS behaviour leaves open:
//!
//! - **A release counts once it is available in at least one region.** The newest GA minor
//!   N, the channel targets and the `NodeImage` channel's newest images all consider such
//!   releases; a member whose region does not have its target yet waits (`Pending`), as AKS
//!   does for a version not yet in a member's region.
//! - **Minor arithmetic stays within a major**: N−1 of 1.31 is 1.30, and moving across majors
//!   counts as more than one minor (never done automatically).
//! - **Long-term support** comes from the catalog: a minor has it when an available GA release
//!   of it is marked `longTermSupport`. Such a minor stays supported for members under LTS after
//!   it leaves the N−2 window; the provider ends it by withdrawing the releases.
//! - **Consistent images resolve before the start and freeze at it** (AKS's documents
//!   disagree): while a run is NotStarted its choice is recomputed on every pass and shown in
//!   `status.nodeImageSelection` (as the FAQ promises, before the start); from the start on it
//!   no longer changes, so every member of the run gets the same image even if a newer one
//!   reaches all regions meanwhile.
//! - Catalog entries whose version does not parse are never chosen.
//! - A generated run is named `<profile>-<8 hex digits>`, hashing (FNV-1a) the profile, the
//!   channel and the sorted versions, within AKS's 50-character run name rule.
//! - A profile triggers when its channel's target holds a version its last trigger did not; a
//!   target that only lost versions (a withdrawn release or family) triggers nothing.

mod catalog;
mod channel;
mod custom_images;
mod dotted;
mod kube_version;
mod member_verdict;
mod node_image;
mod run_name;
mod support_window;
mod trigger;

#[cfg(test)]
pub(crate) mod tests;

pub use catalog::Catalog;
pub use channel::{ChannelError, ChannelTarget, KubernetesTarget, channel_target};
pub use custom_images::{CustomImagesError, custom_images};
pub use kube_version::{KubeVersion, Minor, VersionError};
pub use member_verdict::{Verdict, member_verdict};
pub use node_image::{ImageVersion, NodeImage, NodeImageError};
pub use run_name::generated_run_name;
pub use support_window::{MemberVersion, SupportWindow};
pub use trigger::is_new_release;
