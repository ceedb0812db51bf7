//! The support window: three GA minors, N, N−1 and N−2, plus long-term support minors for
//! members under LTS.

use std::collections::BTreeSet;
use std::fmt;

use super::kube_version::{KubeVersion, Minor};

/// Which minors are supported at a time, as [`Catalog::support_window`] computes it.
///
/// [`Catalog::support_window`]: super::Catalog::support_window
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SupportWindow {
    newest: Minor,
    long_term_support: BTreeSet<Minor>,
}

/// A member's Kubernetes version, to check against the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemberVersion<'a> {
    /// Member name.
    pub name: &'a str,
    /// Its current version.
    pub version: KubeVersion,
    /// Whether the member is under long-term support.
    pub long_term_support: bool,
}

impl SupportWindow {
    /// The window whose newest GA minor is `newest` (N), with the minors that have long-term
    /// support.
    pub fn new(newest: Minor, long_term_support: BTreeSet<Minor>) -> Self {
        Self {
            newest,
            long_term_support,
        }
    }

    /// N, the newest GA minor.
    pub fn newest(&self) -> Minor {
        self.newest
    }

    /// N−2, the oldest minor in community support.
    pub fn oldest(&self) -> Minor {
        Minor {
            major: self.newest.major,
            minor: self.newest.minor.saturating_sub(2),
        }
    }

    /// Whether `minor` is N−2 or newer (a minor ahead of N, such as a preview, is not behind
    /// the window).
    pub fn contains(&self, minor: Minor) -> bool {
        minor >= self.oldest()
    }

    /// Whether `minor` has long-term support in the catalog.
    pub fn has_long_term_support(&self, minor: Minor) -> bool {
        self.long_term_support.contains(&minor)
    }

    /// Whether a cluster on `minor` is supported: inside the window, or under long-term
    /// support on a minor that has it.
    pub fn supports(&self, minor: Minor, member_long_term_support: bool) -> bool {
        self.contains(minor) || (member_long_term_support && self.has_long_term_support(minor))
    }

    /// The members that are not supported, each as `<name>: <why>` (the profile's
    /// `unsupportedMembers`), in the given order.
    pub fn unsupported_members<'m>(
        &self,
        members: impl IntoIterator<Item = MemberVersion<'m>>,
    ) -> Vec<String> {
        members
            .into_iter()
            .filter(|m| !self.supports(m.version.minor(), m.long_term_support))
            .map(|m| {
                let lts = if m.long_term_support {
                    format!(" and {} has no long-term support", m.version.minor())
                } else {
                    String::new()
                };
                format!(
                    "{}: {} is outside the support window {self}{lts}",
                    m.name, m.version
                )
            })
            .collect()
    }
}

/// `1.30 to 1.32`.
impl fmt::Display for SupportWindow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} to {}", self.oldest(), self.newest)
    }
}
