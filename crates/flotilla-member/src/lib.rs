//! Fleet membership.
