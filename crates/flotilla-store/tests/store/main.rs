//! The storage test suite: shared behaviour cases and the watch property against both backends,
//! plus SQLite-only persistence and group-commit tests.

mod cases;
mod common;
mod sqlite;
mod watch_property;
