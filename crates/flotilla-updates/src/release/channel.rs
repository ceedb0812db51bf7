//! What an auto-upgrade channel moves members to at a time `now`.
//!
//! - `Stable`: the latest GA patch of minor N−1; `Rapid`: of N.
//! - `TargetKubernetesVersion`: the latest GA patch of the pinned minor. A minor older than
//!   N−2 needs long-term support (requested by the profile and offered by the catalog); a
//!   minor with no GA release yet cannot be targeted.
//! - `NodeImage`: no Kubernetes version; per family, the newest image available somewhere.
//!
//! Only GA releases available in at least one region count.

use std::collections::BTreeMap;

use flotilla_api::updates::Channel;
use jiff::Timestamp;

use super::catalog::Catalog;
use super::kube_version::{KubeVersion, Minor};
use super::node_image::NodeImage;
use super::support_window::SupportWindow;

/// Where a channel points now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChannelTarget {
    /// A Kubernetes version (a `Full` run).
    Kubernetes(KubernetesTarget),
    /// Node images only (a `NodeImageOnly` run): per family, the newest image available in at
    /// least one region. Members still take the newest image of their own region when their
    /// upgrade starts; this set only tells when a new image was released.
    NodeImages(BTreeMap<String, NodeImage>),
}

/// A Kubernetes version to upgrade members to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KubernetesTarget {
    /// The version.
    pub version: KubeVersion,
    /// The version's minor is older than N−2: only members under long-term support may take
    /// it, and a member without it fails the run when the run reaches it.
    pub requires_long_term_support: bool,
}

/// Why a channel has no target now.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ChannelError {
    /// The catalog has no GA release available anywhere yet.
    #[error("no GA Kubernetes release is available in any region yet")]
    NoGaRelease,
    /// The minor the channel follows has no GA patch available anywhere.
    #[error("no GA patch of {0} is available in any region")]
    NoGaPatch(Minor),
    /// The newest GA minor is the first of its major, so the `Stable` channel has no N−1.
    #[error("the newest GA minor {0} has no previous minor for the Stable channel")]
    NoPreviousMinor(Minor),
    /// The `TargetKubernetesVersion` channel without a pinned minor.
    #[error("the TargetKubernetesVersion channel needs targetKubernetesVersion (MAJOR.MINOR)")]
    MissingPinnedMinor,
    /// The pinned minor has no GA release yet.
    #[error("{minor} is not released yet: the newest GA minor is {newest}")]
    UnreleasedMinor {
        /// The pinned minor.
        minor: Minor,
        /// N.
        newest: Minor,
    },
    /// The pinned minor is older than N−2 and the profile does not ask for long-term support.
    #[error(
        "{minor} is outside the support window {window}; pin a newer minor or set longTermSupport"
    )]
    OutsideSupportWindow {
        /// The pinned minor.
        minor: Minor,
        /// The window now.
        window: SupportWindow,
    },
    /// The pinned minor is older than N−2 and the catalog offers no long-term support for it.
    #[error("{minor} is outside the support window {window} and has no long-term support")]
    NoLongTermSupport {
        /// The pinned minor.
        minor: Minor,
        /// The window now.
        window: SupportWindow,
    },
}

impl KubernetesTarget {
    /// A target of `version` in `window`: it requires long-term support when its minor is
    /// older than N−2 (the same rule for channel and manual runs).
    pub fn new(version: KubeVersion, window: &SupportWindow) -> Self {
        Self {
            version,
            requires_long_term_support: !window.contains(version.minor()),
        }
    }
}

impl ChannelTarget {
    /// The versions a run for this target upgrades to, sorted: the Kubernetes version, or the
    /// full names of the images. The profile records them (`lastTriggerUpgradeVersions`) and
    /// the generated run's name hashes them.
    pub fn upgrade_versions(&self) -> Vec<String> {
        match self {
            ChannelTarget::Kubernetes(target) => vec![target.version.to_string()],
            ChannelTarget::NodeImages(images) => {
                let mut names: Vec<String> = images.values().map(NodeImage::to_string).collect();
                names.sort();
                names
            }
        }
    }
}

/// The target of `channel` at `now`. `pinned` (the profile's `targetKubernetesVersion`) and
/// `long_term_support` only matter for `TargetKubernetesVersion`; profile validation rejects
/// them on other channels.
pub fn channel_target(
    channel: Channel,
    pinned: Option<Minor>,
    long_term_support: bool,
    catalog: &Catalog<'_>,
    now: Timestamp,
) -> Result<ChannelTarget, ChannelError> {
    let window = || catalog.support_window(now).ok_or(ChannelError::NoGaRelease);
    let (minor, window) = match channel {
        Channel::NodeImage => return Ok(ChannelTarget::NodeImages(catalog.newest_images(now))),
        Channel::Rapid => {
            let window = window()?;
            (window.newest(), window)
        }
        Channel::Stable => {
            let window = window()?;
            let newest = window.newest();
            (
                newest
                    .previous()
                    .ok_or(ChannelError::NoPreviousMinor(newest))?,
                window,
            )
        }
        Channel::TargetKubernetesVersion => {
            let minor = pinned.ok_or(ChannelError::MissingPinnedMinor)?;
            let window = window()?;
            check_pinned(minor, long_term_support, &window)?;
            (minor, window)
        }
    };
    let version = catalog
        .latest_ga_patch(minor, now)
        .ok_or(ChannelError::NoGaPatch(minor))?;
    Ok(ChannelTarget::Kubernetes(KubernetesTarget::new(
        version, &window,
    )))
}

/// A pinned minor must be released, and inside the window unless under long-term support.
fn check_pinned(
    minor: Minor,
    long_term_support: bool,
    window: &SupportWindow,
) -> Result<(), ChannelError> {
    let newest = window.newest();
    if minor > newest {
        return Err(ChannelError::UnreleasedMinor { minor, newest });
    }
    if window.contains(minor) {
        return Ok(());
    }
    if !long_term_support {
        return Err(ChannelError::OutsideSupportWindow {
            minor,
            window: window.clone(),
        });
    }
    if !window.has_long_term_support(minor) {
        return Err(ChannelError::NoLongTermSupport {
            minor,
            window: window.clone(),
        });
    }
    Ok(())
}
