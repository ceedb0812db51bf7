//! The status roll-up: binding conditions and resource lists from Works, and placement
//! statuses from the policy snapshot and the bindings.

mod binding;
mod external;
mod fixtures;
mod placement;
