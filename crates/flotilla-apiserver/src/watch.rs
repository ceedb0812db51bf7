//! Watches: initial state (for `resourceVersion` unset/0 or `sendInitialEvents`), then store
//! events translated to ADDED/MODIFIED/DELETED as seen through the request's selectors, with
//! periodic BOOKMARKs and an in-stream 410 ERROR when the start revision was compacted.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use flotilla_store::{Event, EventKind, StoreError};
use futures::{FutureExt, StreamExt};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::engine::{Engine, decode};
use crate::raw;
use crate::registry::ResourceInfo;
use crate::selectors::ListFilter;
use crate::status::{ApiError, ApiResult};

/// Parameters of a watch request.
#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// `resourceVersion` (None, "" and "0" start with the current state).
    pub resource_version: Option<String>,
    /// `sendInitialEvents=true`: initial ADDED events then a BOOKMARK marking their end.
    pub send_initial_events: bool,
    /// `allowWatchBookmarks=true`.
    pub allow_bookmarks: bool,
    /// Close the stream after this long (`timeoutSeconds`).
    pub timeout: Duration,
    /// How often to send bookmarks.
    pub bookmark_interval: Duration,
    /// Label and field selectors.
    pub filter: ListFilter,
}

/// One event of a watch stream, in the version the request asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct WatchEvent {
    /// ADDED, MODIFIED, DELETED, BOOKMARK or ERROR.
    pub event_type: &'static str,
    /// The object (or a Status for ERROR).
    pub object: WatchObject,
}

/// The object of a watch event: parsed, or, when nothing about the watch needs it parsed (no
/// selectors, the storage version), the stored JSON with its resourceVersion spliced in, which
/// a JSON watch stream sends as it is. Every controller watches, and most watch this way, so
/// this saves a parse and a serialization of every object per watcher per change.
#[derive(Debug, Clone, PartialEq)]
pub enum WatchObject {
    /// A parsed object (initial events, selector watches, other versions, bookmarks, errors).
    Parsed(Value),
    /// The object's JSON, exactly as a read would return it.
    Json(Bytes),
}

impl WatchObject {
    /// The object as a JSON value, parsing it if it is still bytes.
    pub fn into_value(self) -> Value {
        match self {
            WatchObject::Parsed(value) => value,
            WatchObject::Json(json) => serde_json::from_slice(&json).unwrap_or_else(|e| {
                ApiError::internal(format!("stored object is not valid JSON: {e}")).to_status()
            }),
        }
    }
}

/// Open watches are counted while this guard lives.
struct WatchGuard(Arc<crate::metrics::Metrics>);

impl Drop for WatchGuard {
    fn drop(&mut self) {
        self.0.watch_delta(-1);
    }
}

impl Engine {
    /// Starts a watch; events arrive on the returned channel until timeout, compaction or
    /// the receiver is dropped.
    pub async fn watch(
        &self,
        info: Arc<ResourceInfo>,
        ns: Option<String>,
        opts: WatchOptions,
    ) -> ApiResult<mpsc::Receiver<WatchEvent>> {
        let ns = ns.filter(|_| info.namespaced);
        let start = match opts.resource_version.as_deref() {
            None | Some("") | Some("0") => None,
            Some(rv) => Some(rv.parse::<i64>().ok().filter(|v| *v > 0).ok_or_else(|| {
                ApiError::bad_request(format!(
                    "invalid resource version {rv:?}: must be a positive integer"
                ))
            })?),
        };
        let initial = start.is_none() || opts.send_initial_events;
        let (tx, rx) = mpsc::channel(1024);
        let mut initial_events = Vec::new();
        let mut after = start.unwrap_or(0);
        if initial {
            let mut filter = opts.filter.clone();
            filter.limit = None;
            filter.continue_from = None;
            filter.exact_revision = start;
            let list = self.list(&info, ns.as_deref(), &filter).await?;
            after = list.resource_version;
            initial_events.extend(list.items.into_iter().map(|object| WatchEvent {
                event_type: "ADDED",
                object: WatchObject::Parsed(object),
            }));
            if opts.send_initial_events {
                initial_events.push(bookmark(&info, after, true));
            }
        }
        let stream = self
            .store
            .watch(&info.namespace_prefix(ns.as_deref()), after);
        let engine = self.clone();
        engine.metrics.watch_delta(1);
        let guard = WatchGuard(engine.metrics.clone());
        tokio::spawn(async move {
            let _guard = guard;
            for e in initial_events {
                if tx.send(e).await.is_err() {
                    return;
                }
            }
            pump(engine, info, opts, stream, tx, after).await;
        });
        Ok(rx)
    }
}

fn bookmark(info: &ResourceInfo, revision: i64, initial_end: bool) -> WatchEvent {
    let mut meta = json!({"resourceVersion": revision.to_string()});
    if initial_end {
        meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    WatchEvent {
        event_type: "BOOKMARK",
        object: WatchObject::Parsed(
            json!({"kind": info.kind, "apiVersion": info.api_version(), "metadata": meta}),
        ),
    }
}

/// The Status carried by an in-stream ERROR event.
pub fn error_event(err: &ApiError) -> WatchEvent {
    WatchEvent {
        event_type: "ERROR",
        object: WatchObject::Parsed(err.to_status()),
    }
}

async fn pump(
    engine: Engine,
    info: Arc<ResourceInfo>,
    opts: WatchOptions,
    mut stream: flotilla_store::WatchStream,
    tx: mpsc::Sender<WatchEvent>,
    mut last: i64,
) {
    let deadline = tokio::time::sleep(opts.timeout);
    tokio::pin!(deadline);
    let mut ticker = tokio::time::interval(opts.bookmark_interval);
    ticker.tick().await;
    loop {
        tokio::select! {
            _ = &mut deadline => return,
            _ = tx.closed() => return,
            _ = ticker.tick(), if opts.allow_bookmarks => {
                // Drain what the store already queued, so the bookmark never skips an event.
                while let Some(Some(item)) = stream.next().now_or_never() {
                    if !forward(&info, &opts.filter, item, &tx, &mut last).await {
                        return;
                    }
                }
                let rev = engine.store.current_revision().max(last);
                if tx.send(bookmark(&info, rev, false)).await.is_err() {
                    return;
                }
            }
            item = stream.next() => {
                let Some(item) = item else { return };
                if !forward(&info, &opts.filter, item, &tx, &mut last).await {
                    return;
                }
            }
        }
    }
}

/// Sends the event(s) one store item produces; false when the stream must end.
async fn forward(
    info: &ResourceInfo,
    filter: &ListFilter,
    item: Result<Event, StoreError>,
    tx: &mpsc::Sender<WatchEvent>,
    last: &mut i64,
) -> bool {
    match item {
        Ok(event) => {
            *last = event.revision();
            match translate(info, filter, &event) {
                Ok(Some(e)) => tx.send(e).await.is_ok(),
                Ok(None) => true,
                Err(e) => {
                    let _ = tx.send(error_event(&e)).await;
                    false
                }
            }
        }
        Err(StoreError::Compacted {
            requested,
            compacted,
        }) => {
            let err = ApiError::expired(format!(
                "too old resource version: {requested} ({compacted})"
            ));
            let _ = tx.send(error_event(&err)).await;
            false
        }
        // A slow consumer is dropped; clients re-watch from their last resourceVersion.
        Err(_) => false,
    }
}

/// What a store event looks like through the request's selectors: an object entering the
/// selection is ADDED, leaving it is DELETED.
pub fn translate(
    info: &ResourceInfo,
    filter: &ListFilter,
    event: &Event,
) -> ApiResult<Option<WatchEvent>> {
    let by_identity = filter.selects_by_identity();
    if by_identity && !filter.matches(&identity(&event.kv.value)?) {
        // Neither this version of the object nor any other is selected.
        return Ok(None);
    }
    if (filter.selects_everything() || by_identity)
        && info.serves_storage_version()
        && let Some(json) = raw::splice_revision(&event.kv.value, event.kv.mod_revision)
    {
        // The object is selected, before and after (its identity never changes).
        let event_type = match (event.kind, &event.prev) {
            (EventKind::Delete, _) => "DELETED",
            (EventKind::Put, None) => "ADDED",
            (EventKind::Put, Some(_)) => "MODIFIED",
        };
        return Ok(Some(WatchEvent {
            event_type,
            object: WatchObject::Json(json),
        }));
    }
    let object = decode(info, &event.kv)?;
    let now_matches = filter.matches(&object);
    // Without selectors the previous version matched if there was one, and under selectors
    // of identity alone it matched as this one does: no need to decode it.
    let before_matched = match &event.prev {
        None => false,
        Some(_) if filter.selects_everything() => true,
        Some(_) if by_identity => now_matches,
        Some(kv) => filter.matches(&decode(info, kv)?),
    };
    let event_type = match event.kind {
        EventKind::Delete if now_matches || before_matched => "DELETED",
        EventKind::Delete => return Ok(None),
        EventKind::Put => match (before_matched, now_matches) {
            (false, true) => "ADDED",
            (true, true) => "MODIFIED",
            (true, false) => "DELETED",
            (false, false) => return Ok(None),
        },
    };
    Ok(Some(WatchEvent {
        event_type,
        object: WatchObject::Parsed(object),
    }))
}

/// The name and namespace of a stored object, as `{"metadata": {…}}`, read without decoding
/// the rest of it (a placement's status over 10,000 clusters is megabytes).
fn identity(stored: &[u8]) -> ApiResult<Value> {
    #[derive(serde::Deserialize)]
    struct Stored {
        metadata: Identity,
    }
    #[derive(serde::Deserialize)]
    struct Identity {
        name: Option<String>,
        namespace: Option<String>,
    }
    let Stored {
        metadata: Identity { name, namespace },
    } = serde_json::from_slice(stored)
        .map_err(|e| ApiError::internal(format!("stored object is not readable: {e}")))?;
    // An absent namespace is null, which field selectors read as unset, as they do absence.
    Ok(json!({"metadata": {"name": name, "namespace": namespace}}))
}

/// One line of a JSON watch stream, `{"type":…,"object":…}`, around an object's JSON as is.
pub(crate) fn json_line(event_type: &str, object: &[u8]) -> Bytes {
    let mut line = Vec::with_capacity(object.len() + event_type.len() + 24);
    line.extend_from_slice(b"{\"type\":\"");
    line.extend_from_slice(event_type.as_bytes());
    line.extend_from_slice(b"\",\"object\":");
    line.extend_from_slice(object);
    line.extend_from_slice(b"}\n");
    Bytes::from(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::tests::configmaps;
    use flotilla_store::KeyValue;

    fn event(kind: EventKind, value: &str, prev: bool) -> Event {
        let kv = KeyValue {
            key: "/registry/configmaps/ns/a".into(),
            value: Bytes::from(value.to_string()),
            create_revision: 3,
            mod_revision: 7,
        };
        Event {
            kind,
            prev: prev.then(|| kv.clone()),
            kv,
        }
    }

    const STORED: &str = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"app":"x"}},"data":{"k":"v"}}"#;

    #[test]
    fn unselective_watches_pass_the_stored_json_through_with_the_same_verdicts() {
        let info = configmaps();
        let all = ListFilter::default();
        for (kind, prev, expected) in [
            (EventKind::Put, false, "ADDED"),
            (EventKind::Put, true, "MODIFIED"),
            (EventKind::Delete, true, "DELETED"),
        ] {
            let e = event(kind, STORED, prev);
            let fast = translate(&info, &all, &e).unwrap().unwrap();
            assert_eq!(fast.event_type, expected);
            assert!(matches!(fast.object, WatchObject::Json(_)));
            let parsed = decode(&info, &e.kv).unwrap();
            assert_eq!(
                fast.object.into_value(),
                parsed,
                "same object as a parse gives"
            );
        }
    }

    #[test]
    fn selector_watches_and_old_layouts_are_parsed() {
        let info = configmaps();
        let selective = ListFilter::parse(&info, Some("app=x"), None, None, None).unwrap();
        let e = event(EventKind::Put, STORED, false);
        let got = translate(&info, &selective, &e).unwrap().unwrap();
        assert!(matches!(got.object, WatchObject::Parsed(_)));
        let old_layout = r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"}}"#;
        let e = event(EventKind::Put, old_layout, true);
        let got = translate(&info, &ListFilter::default(), &e)
            .unwrap()
            .unwrap();
        assert_eq!(got.event_type, "MODIFIED");
        assert_eq!(got.object.into_value()["metadata"]["resourceVersion"], "7");
    }

    #[test]
    fn watches_of_one_name_read_only_its_identity() {
        let info = configmaps();
        let by_name = |selector: &str| {
            let filter = ListFilter::parse(&info, None, Some(selector), None, None).unwrap();
            assert!(filter.selects_by_identity(), "{selector}");
            filter
        };
        // A stored previous version that is not even JSON shows it is never read.
        let mut e = event(EventKind::Put, STORED, true);
        e.prev.as_mut().unwrap().value = Bytes::from_static(b"not json");
        for (selector, expected) in [
            ("metadata.name=a", Some("MODIFIED")),
            (
                "metadata.name=a,metadata.namespace!=other",
                Some("MODIFIED"),
            ),
            ("metadata.name=b", None),
            ("metadata.name!=a", None),
        ] {
            let got = translate(&info, &by_name(selector), &e).unwrap();
            assert_eq!(got.as_ref().map(|g| g.event_type), expected, "{selector}");
            if let Some(got) = got {
                assert!(matches!(got.object, WatchObject::Json(_)), "passed through");
            }
        }
        for (kind, prev, expected) in [
            (EventKind::Put, false, "ADDED"),
            (EventKind::Delete, true, "DELETED"),
        ] {
            let got = translate(
                &info,
                &by_name("metadata.name=a"),
                &event(kind, STORED, prev),
            );
            assert_eq!(got.unwrap().unwrap().event_type, expected);
        }
        // A label selector, or another field, still judges each version whole.
        for (labels, fields) in [(Some("app=x"), Some("metadata.name=a")), (None, None)] {
            let filter = ListFilter::parse(&info, labels, fields, None, None).unwrap();
            assert!(!filter.selects_by_identity());
        }
    }

    #[test]
    fn raw_lines_are_the_json_a_parsed_event_would_give() {
        let line = json_line("MODIFIED", STORED.as_bytes());
        let value: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(value["type"], "MODIFIED");
        assert_eq!(value["object"]["data"]["k"], "v");
        assert!(line.ends_with(b"\n"));
    }
}
