//! Node images by full name, `<family>-<version>`, where the version is the last
//! dash-separated segment and compares numerically part by part (`202509.2.0 < 202510.13.0`).

use std::cmp::Ordering;
use std::fmt;

use super::dotted::parse_dotted;

/// A node image version within a family, e.g. `202510.13.0`: ordered numerically by its
/// dot-separated parts (2 before 10), keeping the text as written.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ImageVersion {
    parts: Vec<u64>,
    text: String,
}

/// One image: a family and a version of it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeImage {
    /// Image family, e.g. `AKSUbuntu-2204gen2containerd`.
    pub family: String,
    /// Version within the family.
    pub version: ImageVersion,
}

/// Why a node image name or version does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NodeImageError {
    /// The version is not dot-separated decimal numbers.
    #[error(
        "{0:?} is not a node image version: expected dot-separated numbers such as 202510.13.0"
    )]
    Version(String),
    /// The full name has no family before its version.
    #[error("{0:?} is not a node image name: expected <family>-<version>")]
    Name(String),
}

impl ImageVersion {
    /// Parses a version such as `202510.13.0`.
    pub fn parse(text: &str) -> Result<Self, NodeImageError> {
        let parts = parse_dotted(text).ok_or_else(|| NodeImageError::Version(text.to_string()))?;
        Ok(Self {
            parts,
            text: text.to_string(),
        })
    }
}

/// Numeric part by part (a prefix comes first); equal numbers fall back to the text so the
/// order agrees with equality (`1.02` and `1.2` are distinct).
impl Ord for ImageVersion {
    fn cmp(&self, other: &Self) -> Ordering {
        self.parts
            .cmp(&other.parts)
            .then_with(|| self.text.cmp(&other.text))
    }
}

impl PartialOrd for ImageVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The version as written.
impl fmt::Display for ImageVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl NodeImage {
    /// Parses a full name such as `AKSUbuntu-2204gen2containerd-202510.13.0`: the version is
    /// the last dash-separated segment, the family everything before it.
    pub fn parse(full_name: &str) -> Result<Self, NodeImageError> {
        let (family, version) = full_name
            .rsplit_once('-')
            .filter(|(family, _)| !family.is_empty())
            .ok_or_else(|| NodeImageError::Name(full_name.to_string()))?;
        Ok(Self {
            family: family.to_string(),
            version: ImageVersion::parse(version)?,
        })
    }
}

/// The full name, `<family>-<version>`, as node pools report it.
impl fmt::Display for NodeImage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.family, self.version)
    }
}
