//! Kubernetes versions (`MAJOR.MINOR.PATCH`) and their minors (`MAJOR.MINOR`), ordered
//! numerically so that 1.9 comes before 1.10.

use std::fmt;
use std::str::FromStr;

use super::dotted::parse_dotted;

/// A Kubernetes version, e.g. `1.30.3`; ordered by major, then minor, then patch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KubeVersion {
    /// Major version.
    pub major: u64,
    /// Minor version.
    pub minor: u64,
    /// Patch version.
    pub patch: u64,
}

/// A Kubernetes minor, e.g. `1.30`: the unit of the support window and of the one-minor rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Minor {
    /// Major version.
    pub major: u64,
    /// Minor version.
    pub minor: u64,
}

/// A string that is not a Kubernetes version or minor of the expected shape.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{input:?} is not a Kubernetes version: expected {expected}")]
pub struct VersionError {
    /// The rejected text.
    pub input: String,
    /// The expected shape, `MAJOR.MINOR.PATCH` or `MAJOR.MINOR`.
    pub expected: &'static str,
}

/// The numbers of `input` (after an optional `v`) if there are exactly `N` of them.
fn parse_exact<const N: usize>(
    input: &str,
    expected: &'static str,
) -> Result<[u64; N], VersionError> {
    let text = input.strip_prefix('v').unwrap_or(input);
    parse_dotted(text)
        .and_then(|parts| <[u64; N]>::try_from(parts).ok())
        .ok_or_else(|| VersionError {
            input: input.to_string(),
            expected,
        })
}

impl KubeVersion {
    /// Parses `1.30.3` or `v1.30.3`, as clusters and the catalog write versions.
    pub fn parse(input: &str) -> Result<Self, VersionError> {
        let [major, minor, patch] = parse_exact(input, "MAJOR.MINOR.PATCH")?;
        Ok(Self {
            major,
            minor,
            patch,
        })
    }

    /// The version's minor, e.g. `1.30` for `1.30.3`.
    pub fn minor(&self) -> Minor {
        Minor {
            major: self.major,
            minor: self.minor,
        }
    }
}

impl FromStr for KubeVersion {
    type Err = VersionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// `1.30.3`, without a `v`: the form update runs and the catalog use.
impl fmt::Display for KubeVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

impl Minor {
    /// Parses `1.30` or `v1.30`, as a profile pins `targetKubernetesVersion`.
    pub fn parse(input: &str) -> Result<Self, VersionError> {
        let [major, minor] = parse_exact(input, "MAJOR.MINOR")?;
        Ok(Self { major, minor })
    }

    /// The minor before this one in the same major (N−1), if any.
    pub fn previous(self) -> Option<Minor> {
        Some(Minor {
            major: self.major,
            minor: self.minor.checked_sub(1)?,
        })
    }

    /// How many minors `later` is ahead of `self` within the same major; `None` when `later`
    /// is in another major (an upgrade across majors is never a single minor step) and 0
    /// when `later` is not ahead.
    pub fn steps_to(self, later: Minor) -> Option<u64> {
        (self.major == later.major).then(|| later.minor.saturating_sub(self.minor))
    }
}

impl FromStr for Minor {
    type Err = VersionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// `1.30`.
impl fmt::Display for Minor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}
