//! A store's namespace in etcd: where its keys live, how its revisions relate to etcd's, and
//! how etcd's key-values and events become the store's.
//!
//! Keys are stored as `prefix + key`. Every namespace also has one marker key, `prefix + 0xFF`,
//! created on first use: no UTF-8 key contains the byte `0xFF`, so the marker sorts after every
//! key of the namespace and no range the store reads or watches ever includes it. The marker's
//! creation revision is the namespace's *origin*: store revision = etcd revision − origin, so a
//! fresh namespace starts at revision 0 like the embedded backends, and every replica sharing
//! the namespace agrees on the mapping.

use bytes::Bytes;

use super::wire::{self, EventType};
use crate::{Event, EventKind, KeyValue, Revision, StoreError, StoreResult};

/// The byte no UTF-8 string contains: suffix of the marker key and end of the namespace's range.
const PAST_UTF8: u8 = 0xFF;

/// A namespace: key prefix and revision origin.
#[derive(Debug, Clone)]
pub(crate) struct Namespace {
    prefix: String,
    origin: i64,
}

impl Namespace {
    /// The namespace under `prefix` whose marker was created at etcd revision `origin`.
    pub(crate) fn new(prefix: &str, origin: i64) -> Self {
        Namespace {
            prefix: prefix.to_owned(),
            origin,
        }
    }

    /// The marker key of the namespace under `prefix`.
    pub(crate) fn marker(prefix: &str) -> Vec<u8> {
        let mut key = prefix.as_bytes().to_vec();
        key.push(PAST_UTF8);
        key
    }

    /// This namespace's marker key.
    pub(crate) fn marker_key(&self) -> Vec<u8> {
        Self::marker(&self.prefix)
    }

    /// The etcd key of a store key.
    pub(crate) fn key(&self, key: &str) -> Vec<u8> {
        [self.prefix.as_bytes(), key.as_bytes()].concat()
    }

    /// The etcd revision of a store revision.
    pub(crate) fn etcd_revision(&self, revision: Revision) -> i64 {
        revision + self.origin
    }

    /// The store revision of an etcd revision.
    pub(crate) fn store_revision(&self, revision: i64) -> Revision {
        revision - self.origin
    }

    /// The etcd range `[start, end)` of the store keys with byte prefix `prefix`.
    pub(crate) fn range(&self, prefix: &str) -> (Vec<u8>, Vec<u8>) {
        if prefix.is_empty() {
            // Everything up to the marker; etcd has no empty key, so start at the lowest byte.
            let start = if self.prefix.is_empty() {
                vec![0]
            } else {
                self.prefix.as_bytes().to_vec()
            };
            (start, self.marker_key())
        } else {
            let start = self.key(prefix);
            let mut end = start.clone();
            // The last byte of UTF-8 text is below 0xFF, so incrementing it cannot overflow.
            if let Some(last) = end.last_mut() {
                *last += 1;
            }
            (start, end)
        }
    }

    /// The etcd range of a paged list: keys with byte prefix `prefix` after `start_after`.
    pub(crate) fn list_range(&self, prefix: &str, start_after: Option<&str>) -> (Vec<u8>, Vec<u8>) {
        let (start, end) = self.range(prefix);
        match start_after {
            Some(after) if after >= prefix => {
                // The smallest key after `after` is `after` followed by a NUL byte.
                let mut start = self.key(after);
                start.push(0);
                (start, end)
            }
            _ => (start, end),
        }
    }

    /// The etcd key and range end a watch on `prefix` covers (see [`crate::Storage::watch`]):
    /// a directory prefix or everything is a range, anything else one key (empty range end).
    pub(crate) fn watch_range(&self, prefix: &str) -> (Vec<u8>, Vec<u8>) {
        if prefix.is_empty() || prefix.ends_with('/') {
            self.range(prefix)
        } else {
            (self.key(prefix), Vec::new())
        }
    }

    /// An etcd key-value of this namespace as the store's.
    pub(crate) fn key_value(&self, kv: wire::KeyValue) -> StoreResult<KeyValue> {
        Ok(KeyValue {
            key: self.store_key(kv.key)?,
            value: Bytes::from(kv.value),
            create_revision: self.store_revision(kv.create_revision),
            mod_revision: self.store_revision(kv.mod_revision),
        })
    }

    /// An etcd watch event of this namespace as the store's. A delete carries the deleted
    /// value (etcd's `prev_kv`) with the deletion's revision, as [`Event::kv`] documents.
    pub(crate) fn event(&self, event: &wire::Event) -> StoreResult<Event> {
        let Some(kv) = &event.kv else {
            return Err(StoreError::Backend(
                "etcd sent a watch event without a key-value".to_owned(),
            ));
        };
        let prev = event
            .prev_kv
            .as_ref()
            .map(|prev| self.key_value(prev.clone()))
            .transpose()?;
        match event.r#type() {
            EventType::Put => Ok(Event {
                kind: EventKind::Put,
                kv: self.key_value(kv.clone())?,
                prev,
            }),
            EventType::Delete => {
                let mod_revision = self.store_revision(kv.mod_revision);
                let deleted = match &prev {
                    Some(prev) => KeyValue {
                        mod_revision,
                        ..prev.clone()
                    },
                    // etcd keeps the previous version of every event above the compaction
                    // point, so this only happens if it lost it: report what is known.
                    None => KeyValue {
                        key: self.store_key(kv.key.clone())?,
                        value: Bytes::new(),
                        create_revision: 0,
                        mod_revision,
                    },
                };
                Ok(Event {
                    kind: EventKind::Delete,
                    kv: deleted,
                    prev,
                })
            }
        }
    }

    /// The store key of an etcd key of this namespace.
    fn store_key(&self, key: Vec<u8>) -> StoreResult<String> {
        let Some(rest) = key.strip_prefix(self.prefix.as_bytes()) else {
            return Err(StoreError::Backend(format!(
                "etcd returned key {:?} outside the namespace {:?}",
                String::from_utf8_lossy(&key),
                self.prefix
            )));
        };
        String::from_utf8(rest.to_vec()).map_err(|_| {
            StoreError::Backend(format!(
                "etcd key {:?} is not UTF-8",
                String::from_utf8_lossy(&key)
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_cover_the_prefix_and_never_the_marker() {
        let ns = Namespace::new("/ns", 10);
        assert_eq!(ns.range(""), (b"/ns".to_vec(), b"/ns\xff".to_vec()));
        assert_eq!(ns.range("/a/"), (b"/ns/a/".to_vec(), b"/ns/a0".to_vec()));
        assert_eq!(ns.range("/a"), (b"/ns/a".to_vec(), b"/ns/b".to_vec()));
        assert!(Namespace::marker("/ns") >= ns.range("").1);
        let bare = Namespace::new("", 0);
        assert_eq!(bare.range(""), (vec![0], vec![0xFF]));
        assert_eq!(bare.watch_range("/a/k"), (b"/a/k".to_vec(), Vec::new()));
        assert_eq!(bare.watch_range("/a/"), (b"/a/".to_vec(), b"/a0".to_vec()));
    }

    #[test]
    fn list_ranges_resume_strictly_after_the_cursor() {
        let ns = Namespace::new("/ns", 0);
        assert_eq!(
            ns.list_range("/p/", Some("/p/b")),
            (b"/ns/p/b\0".to_vec(), b"/ns/p0".to_vec())
        );
        // A cursor before the prefix does not move the start.
        assert_eq!(
            ns.list_range("/p/", Some("/a")),
            (b"/ns/p/".to_vec(), b"/ns/p0".to_vec())
        );
    }

    #[test]
    fn revisions_are_relative_to_the_origin() {
        let ns = Namespace::new("/ns", 41);
        assert_eq!(ns.etcd_revision(1), 42);
        assert_eq!(ns.store_revision(42), 1);
    }
}
