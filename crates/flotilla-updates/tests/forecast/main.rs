//! The forecast of update runs: predicted timelines over modelled fleets.

mod durations;
mod fixtures;
mod properties;
mod scenarios;
