//! Field ownership (`metadata.managedFields`) and server-side apply, following the semantics of
//! Kubernetes' structured-merge-diff over plain JSON values.
//!
//! - [`FieldSet`] is a set of field paths in the `FieldsV1` format Kubernetes writes
//!   (`{"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:image":{}}}}}`).
//! - [`apply`] performs a server-side apply: merge, pruning of fields a manager stopped
//!   applying, conflict detection ([`ApplyConflicts`]) and ownership bookkeeping.
//! - [`record_update`] gives the fields an ordinary write changed to the writer's Update entry,
//!   so that later applies conflict with it.
//!
//! List semantics come from the same [`PatchStrategy`](crate::patch::PatchStrategy) as the
//! strategic merge patch: [`ListStrategy::Atomic`](crate::patch::ListStrategy::Atomic) lists
//! are owned whole, `MergeByKey` lists are associative (elements keyed by
//! [`list_map_keys`](crate::patch::PatchStrategy::list_map_keys)), `MergePrimitives` lists are
//! sets.
//!
//! Ownable fields: `apiVersion`, `kind` and system metadata are never owned; of `metadata` only
//! `labels`, `annotations`, `finalizers` and `ownerReferences` are. Writes through the `status`
//! subresource own only `status`; other writes own everything but `status`.

mod apply;
mod conflict;
mod entry;
mod field_set;
mod merge;
mod object;
mod ownable;
mod path;
mod touch;
mod update;

pub use apply::apply;
pub use conflict::{ApplyConflict, ApplyConflicts};
pub use entry::{ManagedFieldsEntry, Operation, managed_fields};
pub use field_set::FieldSet;
pub use path::{FieldPath, PathElement};
pub use update::record_update;

/// Malformed managed fields (HTTP 422 when a client sends them).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ManagedFieldsError {
    /// A `fieldsV1` key or node is malformed.
    #[error("invalid fieldsV1 element {element:?}: {message}")]
    InvalidFieldsV1 {
        /// The offending key or node.
        element: String,
        /// What is wrong with it.
        message: String,
    },
    /// A `metadata.managedFields` entry is malformed.
    #[error("metadata.managedFields[{index}]: {message}")]
    InvalidEntry {
        /// Index of the entry.
        index: usize,
        /// What is wrong with it.
        message: String,
    },
}

/// Why a server-side apply failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApplyError {
    /// Other managers own fields the apply would change (HTTP 409 `Conflict`, with
    /// [`ApplyConflicts::causes`] as `details.causes`).
    #[error(transparent)]
    Conflicts(#[from] ApplyConflicts),
    /// The applied configuration is not a JSON object (HTTP 400).
    #[error("the applied configuration must be a JSON object")]
    NotAnObject,
}

#[cfg(test)]
mod tests;
