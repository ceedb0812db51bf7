//! The storage test suite: shared behaviour cases and the watch property against every backend,
//! plus SQLite-only persistence and group-commit tests and etcd-only replica and failover tests.

mod cases;
mod common;
mod etcd;
mod sqlite;
mod watch_property;
