//! Whether one member may take a Kubernetes target: never downgrade, never move more than one
//! minor, and under long-term support targets only members under long-term support.

use super::channel::KubernetesTarget;
use super::kube_version::KubeVersion;

/// What a run does with one member for a Kubernetes target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Upgrade the member to the target.
    Upgrade,
    /// Already at or above the target: the system skips it.
    AtTarget {
        /// E.g. `already at 1.31.2`.
        message: String,
    },
    /// More than one minor behind the target: skipped; it needs a manual run first.
    Skip {
        /// Why, and what to do.
        message: String,
    },
    /// The target needs long-term support and the member is not under it: the member fails
    /// (and with it the run) when the run reaches it.
    Fail {
        /// Why.
        message: String,
    },
}

/// The verdict on a member at `current` for `target`; `member_long_term_support` says whether
/// the member is under long-term support. Checked in this order: at or above the target,
/// long-term support, then the one-minor rule (a move across majors counts as more than one
/// minor).
pub fn member_verdict(
    current: KubeVersion,
    target: &KubernetesTarget,
    member_long_term_support: bool,
) -> Verdict {
    let version = target.version;
    if current == version {
        return Verdict::AtTarget {
            message: format!("already at {current}"),
        };
    }
    if current > version {
        return Verdict::AtTarget {
            message: format!("already at {current}, newer than the target {version}"),
        };
    }
    if target.requires_long_term_support && !member_long_term_support {
        return Verdict::Fail {
            message: format!(
                "{} is outside the support window and {current} is not under long-term support; only clusters under long-term support can take {version}",
                version.minor()
            ),
        };
    }
    if current
        .minor()
        .steps_to(version.minor())
        .is_none_or(|steps| steps > 1)
    {
        return Verdict::Skip {
            message: format!(
                "{current} is more than one minor behind {}.x; align it with a manual run first",
                version.minor()
            ),
        };
    }
    Verdict::Upgrade
}
