//! Flotilla's generic, schema-driven, Kubernetes-compatible API engine.
//!
//! One engine serves every registered kind (Flotilla's own, the core Kubernetes kinds, and
//! user CRDs registered at run time) over any [`flotilla_store::Storage`]. The [`Hub`] bundles
//! the engine with its housekeeping controllers (garbage collection, namespace deletion, CRD
//! cleanup, compaction) and hands out an axum router (to serve over TLS) and in-process
//! `kube::Client`s (no TCP).

pub mod access_review;
pub mod admission;
pub mod audit;
pub mod auth;
pub mod client;
pub mod clock;
pub mod controllers;
pub mod discovery;
pub mod engine;
pub mod eviction;
pub mod finalizer;
pub mod gc;
pub mod hooks;
pub mod http;
mod json_bytes;
pub mod limits;
pub mod metrics;
pub mod object;
pub mod openapi;
pub mod openapi_v2;
pub mod patching;
pub mod protobuf;
pub mod proxy;
pub mod raw;
pub mod rbac;
pub mod recorder;
pub mod registry;
pub mod render;
pub mod request_options;
pub mod scale;
pub mod security;
pub mod selectors;
pub mod status;
pub mod status_writes;
pub mod watch;

mod hub;

pub use clock::{Clock, ClockExt, ManualClock, ScaledClock, SystemClock};
pub use engine::Engine;
pub use http::ServerConfig;
pub use hub::{Compaction, Hub, HubOptions, SYSTEM_NAMESPACES, builtin_definitions};
pub use security::{Security, SecurityOptions};
pub use status::ApiError;
