//! The update run state machine, driven pass by pass over a modelled fleet: member upgrades
//! finish when the test says so, gates are approved by the test, time moves when it says.

mod harness;
mod plan;
mod properties;
mod scenarios;
