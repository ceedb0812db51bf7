//! Reads, writes and compaction: one etcd request each (plus retries), mapped to the store's
//! results and errors exactly as the embedded backends report them.

use std::sync::atomic::Ordering;

use bytes::Bytes;

use super::retry::{self, Failure, Idempotence};
use super::wire::{
    Compare, CompareResult, DeleteRangeRequest, RangeRequest, RangeResponse, Request, Response,
    TargetUnion, TxnRequest, TxnResponse,
};
use super::{Shared, header_revision};
use crate::{KeyValue, ListRequest, ListResult, Revision, StoreError, StoreResult};

impl Shared {
    /// The latest version of `key` (a linearizable read).
    pub(super) async fn get(&self, key: &str) -> StoreResult<Option<KeyValue>> {
        let request = RangeRequest {
            key: self.ns.key(key),
            ..RangeRequest::default()
        };
        let response = self
            .range(&format!("get {key}"), request)
            .await
            .map_err(|failure| self.backend(failure))?;
        response
            .kvs
            .into_iter()
            .next()
            .map(|kv| self.ns.key_value(kv))
            .transpose()
    }

    /// Live keys under a prefix at a revision, paged (see [`crate::Storage::list`]).
    pub(super) async fn list(&self, request: &ListRequest) -> StoreResult<ListResult> {
        if let Some(requested) = request.revision {
            self.check_retained(requested)?;
        }
        let (start, end) = self
            .ns
            .list_range(&request.prefix, request.start_after.as_deref());
        let range = RangeRequest {
            key: start,
            range_end: end,
            // 0 is no limit, as for the store.
            limit: i64::try_from(request.limit).unwrap_or(i64::MAX),
            revision: request
                .revision
                .map_or(0, |revision| self.ns.etcd_revision(revision)),
            ..RangeRequest::default()
        };
        let what = format!("list {:?}", request.prefix);
        let response = match self.range(&what, range).await {
            Ok(response) => response,
            Err(failure) => return Err(self.revision_error(request.revision, failure).await),
        };
        let count = usize::try_from(response.count).unwrap_or(0);
        let revision = match request.revision {
            Some(revision) => revision,
            None => self
                .ns
                .store_revision(header_revision(response.header.as_ref())),
        };
        let items = response
            .kvs
            .into_iter()
            .map(|kv| self.ns.key_value(kv))
            .collect::<StoreResult<Vec<_>>>()?;
        Ok(ListResult {
            remaining: count.saturating_sub(items.len()),
            items,
            revision,
        })
    }

    /// Creates `key` if absent: a transaction on `create_revision == 0`.
    pub(super) async fn create(&self, key: &str, value: Bytes) -> StoreResult<KeyValue> {
        let etcd_key = self.ns.key(key);
        let txn = TxnRequest {
            compare: vec![Compare::new(
                etcd_key.clone(),
                CompareResult::Equal,
                TargetUnion::CreateRevision(0),
            )],
            success: vec![Request::put(etcd_key, value.to_vec(), false).into()],
            failure: Vec::new(),
        };
        let response = self.txn(&format!("create {key}"), txn).await?;
        if !response.succeeded {
            return Err(StoreError::AlreadyExists {
                key: key.to_owned(),
            });
        }
        let revision = self
            .ns
            .store_revision(header_revision(response.header.as_ref()));
        self.wrote(revision);
        Ok(KeyValue {
            key: key.to_owned(),
            value,
            create_revision: revision,
            mod_revision: revision,
        })
    }

    /// Replaces `key` if its latest version has `mod_revision == expected`.
    pub(super) async fn update(
        &self,
        key: &str,
        value: Bytes,
        expected: Revision,
    ) -> StoreResult<KeyValue> {
        let etcd_key = self.ns.key(key);
        let put = Request::put(etcd_key.clone(), value.to_vec(), true);
        let what = format!("update {key}");
        let response = self
            .compare_and_swap(&what, etcd_key, expected, put)
            .await?;
        let revision = self
            .ns
            .store_revision(header_revision(response.header.as_ref()));
        let Some(prev) = self.outcome(key, expected, response)? else {
            return Err(self.unexpected(key, "no previous version"));
        };
        self.wrote(revision);
        Ok(KeyValue {
            key: key.to_owned(),
            value,
            create_revision: prev.create_revision,
            mod_revision: revision,
        })
    }

    /// Deletes `key` if its latest version has `mod_revision == expected`; returns the deleted
    /// value with `mod_revision` set to the deletion's revision.
    pub(super) async fn delete(&self, key: &str, expected: Revision) -> StoreResult<KeyValue> {
        let etcd_key = self.ns.key(key);
        let delete = Request::DeleteRange(DeleteRangeRequest {
            key: etcd_key.clone(),
            prev_kv: true,
        });
        let what = format!("delete {key}");
        let response = self
            .compare_and_swap(&what, etcd_key, expected, delete)
            .await?;
        let revision = self
            .ns
            .store_revision(header_revision(response.header.as_ref()));
        let Some(prev) = self.outcome(key, expected, response)? else {
            return Err(self.unexpected(key, "no deleted version"));
        };
        self.wrote(revision);
        Ok(KeyValue {
            mod_revision: revision,
            ..prev
        })
    }

    /// Forgets history below store revision `revision` (etcd's compaction, not physical).
    ///
    /// etcd drops events a lagging watch has not received yet, so this store's own watchers
    /// must not lose events to its own compaction: the feed first catches up with the store's
    /// last write up to `revision` (waiting at most the timeout). Compactions by other stores
    /// are not fenced (see [`super::feed`]).
    pub(super) async fn compact(&self, revision: Revision) -> StoreResult<()> {
        if revision <= self.compacted_revision() {
            return Ok(());
        }
        self.await_feed(revision.min(self.last_write())).await;
        let target = self.ns.etcd_revision(revision);
        let outcome = retry::call(
            self.timeout,
            Idempotence::Idempotent,
            &format!("compact at {revision}"),
            || self.client.compact(target),
        )
        .await;
        match outcome {
            Ok(response) => {
                self.observe(response.header.as_ref());
                self.compacted_at(revision);
                Ok(())
            }
            // Already compacted at or beyond `revision` (by another store): find out where.
            Err(Failure::Compacted) => self.learn_compaction(target).await,
            Err(failure) => Err(self.revision_error(Some(revision), failure).await),
        }
    }

    /// Finds etcd's compaction point, knowing it is at or above etcd revision `floor`, and
    /// records it: one count-only read of the marker key at `floor` if nothing was compacted
    /// since, else a binary search with such reads between `floor` and the current revision.
    pub(super) async fn learn_compaction(&self, floor: i64) -> StoreResult<()> {
        let (mut low, mut high) = (floor, self.current.load(Ordering::Acquire));
        if low < high && self.readable(low).await? {
            high = low;
        }
        while low < high {
            let middle = low + (high - low) / 2;
            if self.readable(middle).await? {
                high = middle;
            } else {
                low = middle + 1;
            }
        }
        self.compacted_at(self.ns.store_revision(low).max(0));
        Ok(())
    }

    /// Whether etcd still serves reads at etcd revision `revision`.
    async fn readable(&self, revision: i64) -> StoreResult<bool> {
        let request = RangeRequest {
            revision,
            ..self.count_marker()
        };
        match self.range("find the compaction point", request).await {
            Ok(_) => Ok(true),
            Err(Failure::Compacted) => Ok(false),
            Err(failure) => Err(self.backend(failure)),
        }
    }

    /// `Compacted` for a read below the known compaction point.
    fn check_retained(&self, requested: Revision) -> StoreResult<()> {
        let compacted = self.compacted_revision();
        if requested < compacted {
            return Err(StoreError::Compacted {
                requested,
                compacted,
            });
        }
        Ok(())
    }

    /// The store error for a failed request at `requested`: a compaction the store had not
    /// heard of yet (learned now), a future revision (with the current one), or a backend error.
    async fn revision_error(&self, requested: Option<Revision>, failure: Failure) -> StoreError {
        let Some(requested) = requested else {
            return self.backend(failure);
        };
        match failure {
            Failure::Compacted => {
                if let Err(error) = self
                    .learn_compaction(self.ns.etcd_revision(requested))
                    .await
                {
                    return error;
                }
                StoreError::Compacted {
                    requested,
                    compacted: self.compacted_revision(),
                }
            }
            Failure::FutureRevision => match self.refresh_current().await {
                Ok(current) => StoreError::FutureRevision { requested, current },
                Err(error) => error,
            },
            other => self.backend(other),
        }
    }

    /// Asks etcd for its current revision (a count-only read of the marker key).
    async fn refresh_current(&self) -> StoreResult<Revision> {
        self.range("read the current revision", self.count_marker())
            .await
            .map_err(|failure| self.backend(failure))?;
        Ok(self.current_revision())
    }

    /// A count-only read of the marker key (which only needs etcd's answer and its header).
    fn count_marker(&self) -> RangeRequest {
        RangeRequest {
            key: self.ns.marker_key(),
            count_only: true,
            ..RangeRequest::default()
        }
    }

    /// A linearizable range request, retried while etcd is unavailable.
    async fn range(&self, what: &str, request: RangeRequest) -> Result<RangeResponse, Failure> {
        let response = retry::call(self.timeout, Idempotence::Idempotent, what, || {
            self.client.range(request.clone())
        })
        .await?;
        self.observe(response.header.as_ref());
        Ok(response)
    }

    /// A conditional write: `op` if `key`'s latest version is live at `expected`, else a read
    /// of the key to tell `NotFound` from `Conflict`.
    async fn compare_and_swap(
        &self,
        what: &str,
        key: Vec<u8>,
        expected: Revision,
        op: Request,
    ) -> StoreResult<TxnResponse> {
        let txn = TxnRequest {
            compare: vec![
                Compare::new(
                    key.clone(),
                    CompareResult::Equal,
                    TargetUnion::ModRevision(self.ns.etcd_revision(expected)),
                ),
                // A missing key has mod_revision 0: never let the compare match it.
                Compare::new(
                    key.clone(),
                    CompareResult::Greater,
                    TargetUnion::CreateRevision(0),
                ),
            ],
            success: vec![op.into()],
            failure: vec![Request::get(key).into()],
        };
        self.txn(what, txn).await
    }

    /// Sends a write transaction (retried only where etcd certainly did not apply it).
    async fn txn(&self, what: &str, txn: TxnRequest) -> StoreResult<TxnResponse> {
        let response = retry::call(self.timeout, Idempotence::AtMostOnce, what, || {
            self.client.txn(txn.clone())
        })
        .await
        .map_err(|failure| self.backend(failure))?;
        self.observe(response.header.as_ref());
        Ok(response)
    }

    /// The result of a compare-and-swap: the previous version it replaced, or the error the
    /// embedded backends give (`NotFound` without a live version, else `Conflict`).
    fn outcome(
        &self,
        key: &str,
        expected: Revision,
        response: TxnResponse,
    ) -> StoreResult<Option<KeyValue>> {
        let Some(op) = response.responses.into_iter().next() else {
            return Err(self.unexpected(key, "an empty transaction response"));
        };
        let found = match op.response {
            Some(Response::Put(put)) => put.prev_kv,
            Some(Response::DeleteRange(delete)) => delete.prev_kvs.into_iter().next(),
            Some(Response::Range(range)) => range.kvs.into_iter().next(),
            None => None,
        };
        let found = found.map(|kv| self.ns.key_value(kv)).transpose()?;
        if response.succeeded {
            return Ok(found);
        }
        match found {
            None => Err(StoreError::NotFound {
                key: key.to_owned(),
            }),
            Some(current) => Err(StoreError::Conflict {
                key: key.to_owned(),
                expected,
                actual: current.mod_revision,
            }),
        }
    }

    /// A backend error for a response that breaks etcd's contract.
    fn unexpected(&self, key: &str, what: &str) -> StoreError {
        StoreError::Backend(format!("{}: write of {key} returned {what}", self.label))
    }

    /// A failure as a backend error naming the cluster.
    fn backend(&self, failure: Failure) -> StoreError {
        Shared::failure(&self.label, failure)
    }
}
