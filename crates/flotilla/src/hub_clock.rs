//! The hub's time, read from its `/clock` endpoint. Commands that decide "now" (generating a
//! run for the channel's current release, predicting a timeline) must use the hub's clock,
//! not this machine's: under `flotilla up --clock-speed N` the hub runs on simulated time. A
//! hub that is a plain Kubernetes cluster has no `/clock` (404) and runs on real time: its
//! "now" is this machine's.

use anyhow::{Context, Result};
use jiff::Timestamp;
use serde::Deserialize;

/// The body of `GET /clock`.
#[derive(Deserialize)]
struct ClockReading {
    now: String,
}

/// The hub's current time.
pub async fn now(client: &kube::Client) -> Result<Timestamp> {
    let request = http::Request::get("/clock")
        .body(Vec::new())
        .context("building the /clock request")?;
    let reading: ClockReading = match client.request(request).await {
        Ok(reading) => reading,
        Err(kube::Error::Api(status)) if status.code == 404 => return Ok(Timestamp::now()),
        Err(e) => return Err(e).context("reading the hub's clock (GET /clock)"),
    };
    reading
        .now
        .parse()
        .with_context(|| format!("the hub's clock answered {:?}", reading.now))
}
