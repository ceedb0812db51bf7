//! Field paths as Kubernetes prints them: `spec.stages[0].afterStageTasks[1].waitTime`.

use std::fmt;

/// A field path under construction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Path(String);

impl Path {
    /// A root path such as `spec` or `metadata.name`.
    pub(crate) fn new(root: &str) -> Self {
        Self(root.to_string())
    }

    /// The path of a child field.
    pub(crate) fn child(&self, name: &str) -> Self {
        Self(format!("{}.{name}", self.0))
    }

    /// The path of a list item.
    pub(crate) fn index(&self, index: usize) -> Self {
        Self(format!("{}[{index}]", self.0))
    }

    /// The path of a map entry or a schema property: `properties[spec]`.
    pub(crate) fn key(&self, key: &str) -> Self {
        Self(format!("{}[{key}]", self.0))
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&Path> for String {
    fn from(path: &Path) -> Self {
        path.0.clone()
    }
}

impl From<Path> for String {
    fn from(path: Path) -> Self {
        path.0
    }
}
