//! History from etcd for a watch that starts before the feed's ring: an etcd watch of the
//! watcher's prefix from `after + 1`, forwarded until it reaches the revision its live events
//! start after (`until`: the feed's position or the store's last write at registration); the
//! feed delivers everything after that.
//!
//! etcd does not say when a watch has caught up, so the history is known complete when it
//! yields the event at `until` or any event after it. If no such event ever comes, the watcher
//! has no live event to wait for either (a live event would also reach this watch). The task
//! reconnects after failures, resuming after the last event it forwarded.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use super::Shared;
use super::retry::Backoff;
use crate::watchers::HistoryItem;
use crate::{Revision, StoreError};

/// Forwards the events on `prefix` in `(after, until]` to `sender`, then `Done`. Ends early
/// if the store closes or the consumer goes away.
pub(super) async fn read(
    shared: Arc<Shared>,
    prefix: String,
    after: Revision,
    until: Revision,
    sender: mpsc::Sender<HistoryItem>,
) {
    let mut closed = shared.closed.subscribe();
    tokio::select! {
        _ = closed.wait_for(|closed| *closed) => {}
        () = forward(&shared, &prefix, after, until, &sender) => {}
    }
}

async fn forward(
    shared: &Shared,
    prefix: &str,
    after: Revision,
    until: Revision,
    sender: &mpsc::Sender<HistoryItem>,
) {
    let (key, end) = shared.ns.watch_range(prefix);
    let mut backoff = Backoff::new(Duration::from_millis(100), Duration::from_secs(2));
    let mut last = after;
    loop {
        let from = shared.ns.etcd_revision(last + 1);
        let error = match shared
            .open_watch(key.clone(), end.clone(), from, false)
            .await
        {
            Err(error) => error,
            Ok(mut watch) => loop {
                let response = match watch.next().await {
                    Some(Ok(response)) => response,
                    Some(Err(error)) => break error.to_string(),
                    None => break "etcd closed the watch".to_owned(),
                };
                shared.observe(response.header.as_ref());
                if response.canceled {
                    if response.compact_revision > 0 {
                        let compacted = shared.ns.store_revision(response.compact_revision);
                        shared.compacted_at(compacted);
                        let failure = StoreError::Compacted {
                            requested: last,
                            compacted,
                        };
                        let _ = sender.send(HistoryItem::Failed(failure)).await;
                        return;
                    }
                    break format!("etcd canceled the watch: {}", response.cancel_reason);
                }
                backoff.reset();
                for event in &response.events {
                    let event = match shared.ns.event(event) {
                        Ok(event) => event,
                        Err(error) => {
                            tracing::warn!("{}: skipping a watch event: {error}", shared.label);
                            continue;
                        }
                    };
                    let revision = event.revision();
                    if revision > until {
                        let _ = sender.send(HistoryItem::Done).await;
                        return;
                    }
                    if sender
                        .send(HistoryItem::Event(Arc::new(event)))
                        .await
                        .is_err()
                    {
                        return;
                    }
                    last = revision;
                    if revision == until {
                        let _ = sender.send(HistoryItem::Done).await;
                        return;
                    }
                }
            },
        };
        tracing::warn!("{}: history watch interrupted: {error}", shared.label);
        tokio::time::sleep(backoff.next()).await;
    }
}
