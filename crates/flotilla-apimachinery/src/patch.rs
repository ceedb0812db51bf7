//! The three patch types kube-apiserver accepts on `PATCH`, as pure functions over JSON values:
//!
//! - [`merge_patch`]: `application/merge-patch+json` (RFC 7386), what kubectl's client-side
//!   apply sends for custom kinds;
//! - [`json_patch`]: `application/json-patch+json` (RFC 6902), what kube-rs' finalizer helper
//!   sends;
//! - [`strategic_merge_patch`]: `application/strategic-merge-patch+json`, kubectl's default for
//!   built-in kinds, driven by a [`PatchStrategy`] ([`BuiltinStrategy`] for the Kubernetes
//!   kinds, [`SchemaStrategy`] for kinds described by a structural schema).
//!
//! Server-side apply (`application/apply-patch+yaml`) lives in [`crate::managed_fields`] and
//! shares the [`PatchStrategy`] list semantics.

mod json;
mod merge;
mod schema_strategy;
mod strategic;
mod strategy;

pub use json::{MAX_ACCUMULATED_COPY_BYTES, MAX_OPERATIONS, json_patch};
pub use merge::merge_patch;
pub use schema_strategy::SchemaStrategy;
pub use strategic::strategic_merge_patch;
pub use strategy::{BuiltinStrategy, ListStrategy, PatchStrategy};

/// Why a patch could not be applied; every variant is a client error (HTTP 400/422).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    /// The body is not a JSON array of RFC 6902 operations.
    #[error("invalid JSON patch: {0}")]
    InvalidJsonPatch(String),
    /// A JSON patch operation failed (a `test` did not match, or a path does not exist).
    #[error("JSON patch operation {index} ({op} at {path:?}) failed: {reason}")]
    JsonPatchFailed {
        /// Zero-based index of the failing operation.
        index: usize,
        /// The operation name (`add`, `remove`, `test`, ...).
        op: &'static str,
        /// The operation's JSON pointer.
        path: String,
        /// What went wrong.
        reason: String,
    },
    /// A JSON patch with more operations than kube-apiserver accepts (10,000).
    #[error("The allowed maximum operations in a JSON patch is {limit}, got {got}")]
    TooManyOperations {
        /// The cap.
        limit: usize,
        /// Operations in the patch.
        got: usize,
    },
    /// A JSON patch whose `copy` operations together copy more than the cap: without it, a
    /// few kilobytes of doubling copies build an object of gigabytes in memory.
    #[error(
        "JSON patch operation {index} (copy from {from:?}) would exceed the accumulated copy size limit of {limit} bytes"
    )]
    CopyTooLarge {
        /// Zero-based index of the copy that crossed the cap.
        index: usize,
        /// Its `from` pointer.
        from: String,
        /// The cap, in bytes of JSON.
        limit: usize,
    },
    /// A strategic merge patch or its target is not a JSON object.
    #[error("{0} must be a JSON object")]
    NotAnObject(&'static str),
    /// A strategic merge patch is malformed (bad directive, missing merge key, ...).
    #[error("invalid strategic merge patch at {path}: {message}")]
    InvalidStrategicPatch {
        /// Field path of the offending map or list, e.g. `.spec.template.spec.containers`.
        path: String,
        /// What is wrong with it.
        message: String,
    },
}

#[cfg(test)]
mod tests;
