//! Task wait times as Go durations (`1h`, `90m`, `1h0m0s`, `1.5h`): parsed for the clock, and
//! written back in Go's canonical form (`1h0m0s`) in the run's strategy snapshot, as KubeFleet
//! shows them. The parser and printer are the shared ones in
//! [`flotilla_apimachinery::go_duration`].

pub use flotilla_apimachinery::go_duration::{format, parse};
