//! Watch fan-out over HTTPS/2, measured the same way on the hub and on kube-apiserver: W
//! watches of one namespace (at most [`PER_CONNECTION`] streams per TLS connection, as a
//! client-go process multiplexes its watches), then ConfigMap creates there one at a time,
//! each timed from just before it is sent until every watcher has read its ADDED event.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use http_body_util::BodyExt;
use serde_json::Value;
use tokio::sync::mpsc;

use super::api::Served;
use super::measure::{config_map, median, payload};

/// Watch streams per connection.
pub const PER_CONNECTION: usize = 100;
/// Creates made before measuring.
const WARMUP: usize = 3;
/// How long one create's events may take to reach every watcher.
const PATIENCE: Duration = Duration::from_secs(30);

/// The names of the ADDED objects in a chunk of watch events (one JSON event per line);
/// `pending` keeps a line cut across chunks.
fn added(pending: &mut Vec<u8>, chunk: &[u8]) -> Vec<String> {
    pending.extend_from_slice(chunk);
    let mut names = Vec::new();
    while let Some(end) = pending.iter().position(|b| *b == b'\n') {
        let line: Vec<u8> = pending.drain(..=end).collect();
        if let Ok(event) = serde_json::from_slice::<Value>(&line)
            && event["type"] == "ADDED"
            && let Some(name) = event
                .pointer("/object/metadata/name")
                .and_then(Value::as_str)
        {
            names.push(name.to_string());
        }
    }
    names
}

/// The median time in µs from sending a create into `namespace` until all `watchers` have its
/// ADDED event, over `writes` creates named after `prefix`.
pub async fn delivery(
    server: &impl Served,
    namespace: &str,
    prefix: &str,
    watchers: usize,
    writes: usize,
) -> Result<f64> {
    let path = format!("/api/v1/namespaces/{namespace}/configmaps");
    let writer = server.h2()?;
    let from = writer
        .list_resource_version(&format!("{path}?limit=1"))
        .await?;
    let (seen, mut arrivals) = mpsc::unbounded_channel::<String>();
    let mut streams = Vec::with_capacity(watchers);
    let mut connection = server.h2()?;
    for w in 0..watchers {
        if w > 0 && w % PER_CONNECTION == 0 {
            connection = server.h2()?;
        }
        let mut body = connection
            .watch(&format!("{path}?watch=1&resourceVersion={from}"))
            .await
            .with_context(|| format!("opening watch {w}"))?;
        let seen = seen.clone();
        streams.push(tokio::spawn(async move {
            let mut pending = Vec::new();
            while let Some(Ok(frame)) = body.frame().await {
                let Some(data) = frame.data_ref() else {
                    continue;
                };
                for name in added(&mut pending, data) {
                    if seen.send(name).is_err() {
                        return;
                    }
                }
            }
        }));
    }
    let payload = payload();
    let mut samples = Vec::with_capacity(writes);
    for i in 0..WARMUP + writes {
        let name = format!("{prefix}-{i}");
        let body = serde_json::to_vec(&config_map(name.clone(), &payload))?;
        let started = Instant::now();
        let status = writer.post_json(&path, body).await?;
        if !status.is_success() {
            bail!("create {name}: {status}");
        }
        let mut reached = 0;
        while reached < watchers {
            match tokio::time::timeout(PATIENCE, arrivals.recv()).await {
                Ok(Some(arrived)) if arrived == name => reached += 1,
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => bail!("{name} reached {reached} of {watchers} watchers"),
            }
        }
        if i >= WARMUP {
            samples.push(started.elapsed().as_secs_f64() * 1e6);
        }
    }
    for stream in streams {
        stream.abort();
    }
    Ok(median(samples))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn added_names_are_read_across_chunk_boundaries() {
        let mut pending = Vec::new();
        let first = r#"{"type":"ADDED","object":{"metadata":{"name":"a"}}}
{"type":"MODIFIED","object":{"metadata":{"name":"b"}}}
{"type":"ADD"#;
        assert_eq!(added(&mut pending, first.as_bytes()), ["a"]);
        let rest = r#"ED","object":{"metadata":{"name":"c"}}}
"#;
        assert_eq!(added(&mut pending, rest.as_bytes()), ["c"]);
        assert!(pending.is_empty());
    }
}
