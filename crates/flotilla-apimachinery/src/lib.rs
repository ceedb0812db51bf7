//! Pure Kubernetes API machinery over `serde_json::Value`: no I/O, no clocks, no async.
//!
//! The API server is a thin HTTP shell around these functions, and the member agent reuses them
//! (patching, field ownership, selectors). Every function here is deterministic and table-tested.

pub mod canonical;
pub mod cron;
pub mod field_error;
pub mod go_duration;
pub mod managed_fields;
pub mod patch;
pub mod quantity;
pub mod schema;
pub mod selector;
pub mod table;

pub use field_error::{FieldError, FieldErrorType};
