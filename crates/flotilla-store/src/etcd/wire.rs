//! The etcd v3 messages Flotilla exchanges with etcd (protobuf packages `etcdserverpb` and
//! `mvccpb`), written by hand as prost messages so that building needs no `protoc`.
//!
//! Each message declares only the fields Flotilla sets or reads, with etcd's field numbers and
//! types. That is enough on the wire: a request's missing fields are their defaults, which
//! proto3 never sends anyway, and the decoder skips the fields of a response it does not know.

use prost::{Enumeration, Message, Oneof};

/// Metadata of every etcd response (`etcdserverpb.ResponseHeader`).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct ResponseHeader {
    /// The member that answered.
    #[prost(uint64, tag = "2")]
    pub(crate) member_id: u64,
    /// The key-value store's revision when the request was applied.
    #[prost(int64, tag = "3")]
    pub(crate) revision: i64,
}

/// One version of a key (`mvccpb.KeyValue`).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct KeyValue {
    /// The key.
    #[prost(bytes = "vec", tag = "1")]
    pub(crate) key: Vec<u8>,
    /// The revision of the key's latest creation.
    #[prost(int64, tag = "2")]
    pub(crate) create_revision: i64,
    /// The revision of this version.
    #[prost(int64, tag = "3")]
    pub(crate) mod_revision: i64,
    /// The value.
    #[prost(bytes = "vec", tag = "5")]
    pub(crate) value: Vec<u8>,
}

/// What a watch event did (`mvccpb.Event.EventType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Enumeration)]
#[repr(i32)]
pub(crate) enum EventType {
    /// A new version of the key.
    Put = 0,
    /// The key's deletion.
    Delete = 1,
}

/// One change seen by a watch (`mvccpb.Event`).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct Event {
    /// An [`EventType`].
    #[prost(enumeration = "EventType", tag = "1")]
    pub(crate) r#type: i32,
    /// The new version; for a delete, only the key and the deletion's revision.
    #[prost(message, optional, tag = "2")]
    pub(crate) kv: Option<KeyValue>,
    /// The version before the event (sent if the watch asked for previous values).
    #[prost(message, optional, tag = "3")]
    pub(crate) prev_kv: Option<KeyValue>,
}

/// A read of a key or a range of keys (`etcdserverpb.RangeRequest`).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct RangeRequest {
    /// The first key.
    #[prost(bytes = "vec", tag = "1")]
    pub(crate) key: Vec<u8>,
    /// The end of the range `[key, range_end)`; empty for `key` alone.
    #[prost(bytes = "vec", tag = "2")]
    pub(crate) range_end: Vec<u8>,
    /// Most keys returned (0: no limit).
    #[prost(int64, tag = "3")]
    pub(crate) limit: i64,
    /// The revision to read at (0: the latest).
    #[prost(int64, tag = "4")]
    pub(crate) revision: i64,
    /// Return only the count of keys, no key-values.
    #[prost(bool, tag = "9")]
    pub(crate) count_only: bool,
}

/// The answer to a [`RangeRequest`] (`etcdserverpb.RangeResponse`).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct RangeResponse {
    /// Response metadata.
    #[prost(message, optional, tag = "1")]
    pub(crate) header: Option<ResponseHeader>,
    /// The key-values read, in key order (at most `limit`).
    #[prost(message, repeated, tag = "2")]
    pub(crate) kvs: Vec<KeyValue>,
    /// How many keys the range holds, regardless of `limit`.
    #[prost(int64, tag = "4")]
    pub(crate) count: i64,
}

/// A write of one key (`etcdserverpb.PutRequest`).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct PutRequest {
    /// The key.
    #[prost(bytes = "vec", tag = "1")]
    pub(crate) key: Vec<u8>,
    /// The new value.
    #[prost(bytes = "vec", tag = "2")]
    pub(crate) value: Vec<u8>,
    /// Return the version replaced.
    #[prost(bool, tag = "4")]
    pub(crate) prev_kv: bool,
}

/// The answer to a [`PutRequest`] (`etcdserverpb.PutResponse`).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct PutResponse {
    /// Response metadata.
    #[prost(message, optional, tag = "1")]
    pub(crate) header: Option<ResponseHeader>,
    /// The version replaced, if asked for and there was one.
    #[prost(message, optional, tag = "2")]
    pub(crate) prev_kv: Option<KeyValue>,
}

/// A deletion of one key (`etcdserverpb.DeleteRangeRequest` without a range end).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct DeleteRangeRequest {
    /// The key.
    #[prost(bytes = "vec", tag = "1")]
    pub(crate) key: Vec<u8>,
    /// Return the versions deleted.
    #[prost(bool, tag = "3")]
    pub(crate) prev_kv: bool,
}

/// The answer to a [`DeleteRangeRequest`] (`etcdserverpb.DeleteRangeResponse`).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct DeleteRangeResponse {
    /// Response metadata.
    #[prost(message, optional, tag = "1")]
    pub(crate) header: Option<ResponseHeader>,
    /// The versions deleted, if asked for.
    #[prost(message, repeated, tag = "3")]
    pub(crate) prev_kvs: Vec<KeyValue>,
}

/// How a [`Compare`] compares (`etcdserverpb.Compare.CompareResult`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Enumeration)]
#[repr(i32)]
pub(crate) enum CompareResult {
    /// The key's value equals the operand.
    Equal = 0,
    /// The key's value is greater than the operand.
    Greater = 1,
}

/// Which revision of a key a [`Compare`] compares (`etcdserverpb.Compare.CompareTarget`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Enumeration)]
#[repr(i32)]
pub(crate) enum CompareTarget {
    /// The key's version count. Never compared by Flotilla, but proto3's zero value must be
    /// the first variant: prost does not send a field holding the first variant's value.
    Version = 0,
    /// The revision of the key's latest creation (0 for a missing key).
    Create = 1,
    /// The revision of the key's latest version (0 for a missing key).
    Mod = 2,
}

/// The operand of a [`Compare`], tagged with what it is compared with
/// (`etcdserverpb.Compare.target_union`).
#[derive(Clone, PartialEq, Oneof)]
pub(crate) enum TargetUnion {
    /// Compared with the key's creation revision.
    #[prost(int64, tag = "5")]
    CreateRevision(i64),
    /// Compared with the key's modification revision.
    #[prost(int64, tag = "6")]
    ModRevision(i64),
}

/// A condition of a [`TxnRequest`] on one key (`etcdserverpb.Compare`).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct Compare {
    /// A [`CompareResult`].
    #[prost(enumeration = "CompareResult", tag = "1")]
    pub(crate) result: i32,
    /// A [`CompareTarget`].
    #[prost(enumeration = "CompareTarget", tag = "2")]
    pub(crate) target: i32,
    /// The key.
    #[prost(bytes = "vec", tag = "3")]
    pub(crate) key: Vec<u8>,
    /// The operand.
    #[prost(oneof = "TargetUnion", tags = "5, 6")]
    pub(crate) target_union: Option<TargetUnion>,
}

impl Compare {
    /// The condition "`key`'s revision is `result` `operand`", e.g. its creation revision
    /// equals 0.
    pub(crate) fn new(key: Vec<u8>, result: CompareResult, operand: TargetUnion) -> Self {
        let target = match operand {
            TargetUnion::CreateRevision(_) => CompareTarget::Create,
            TargetUnion::ModRevision(_) => CompareTarget::Mod,
        };
        Compare {
            result: result.into(),
            target: target.into(),
            key,
            target_union: Some(operand),
        }
    }
}

/// One operation of a [`TxnRequest`] (`etcdserverpb.RequestOp.request`).
#[derive(Clone, PartialEq, Oneof)]
pub(crate) enum Request {
    /// A read.
    #[prost(message, tag = "1")]
    Range(RangeRequest),
    /// A write.
    #[prost(message, tag = "2")]
    Put(PutRequest),
    /// A deletion.
    #[prost(message, tag = "3")]
    DeleteRange(DeleteRangeRequest),
}

impl Request {
    /// A write of `value` at `key`, returning the version replaced if `prev_kv`.
    pub(crate) fn put(key: Vec<u8>, value: Vec<u8>, prev_kv: bool) -> Self {
        Request::Put(PutRequest {
            key,
            value,
            prev_kv,
        })
    }

    /// A read of `key`.
    pub(crate) fn get(key: Vec<u8>) -> Self {
        Request::Range(RangeRequest {
            key,
            ..RangeRequest::default()
        })
    }
}

/// An operation of a [`TxnRequest`] (`etcdserverpb.RequestOp`).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct RequestOp {
    /// The operation.
    #[prost(oneof = "Request", tags = "1, 2, 3")]
    pub(crate) request: Option<Request>,
}

impl From<Request> for RequestOp {
    fn from(request: Request) -> Self {
        RequestOp {
            request: Some(request),
        }
    }
}

/// The result of one operation of a transaction (`etcdserverpb.ResponseOp.response`).
#[derive(Clone, PartialEq, Oneof)]
pub(crate) enum Response {
    /// A read's.
    #[prost(message, tag = "1")]
    Range(RangeResponse),
    /// A write's.
    #[prost(message, tag = "2")]
    Put(PutResponse),
    /// A deletion's.
    #[prost(message, tag = "3")]
    DeleteRange(DeleteRangeResponse),
}

/// A result of a [`TxnResponse`] (`etcdserverpb.ResponseOp`).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct ResponseOp {
    /// The result (`None` for a kind of operation Flotilla never sends).
    #[prost(oneof = "Response", tags = "1, 2, 3")]
    pub(crate) response: Option<Response>,
}

/// A transaction: `success` if every comparison holds, else `failure`
/// (`etcdserverpb.TxnRequest`).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct TxnRequest {
    /// The conditions.
    #[prost(message, repeated, tag = "1")]
    pub(crate) compare: Vec<Compare>,
    /// The operations applied if every condition holds.
    #[prost(message, repeated, tag = "2")]
    pub(crate) success: Vec<RequestOp>,
    /// The operations applied otherwise.
    #[prost(message, repeated, tag = "3")]
    pub(crate) failure: Vec<RequestOp>,
}

/// The answer to a [`TxnRequest`] (`etcdserverpb.TxnResponse`).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct TxnResponse {
    /// Response metadata.
    #[prost(message, optional, tag = "1")]
    pub(crate) header: Option<ResponseHeader>,
    /// Whether every condition held (so `success` ran).
    #[prost(bool, tag = "2")]
    pub(crate) succeeded: bool,
    /// The results of the operations that ran, in order.
    #[prost(message, repeated, tag = "3")]
    pub(crate) responses: Vec<ResponseOp>,
}

/// Forgets the history below a revision (`etcdserverpb.CompactionRequest`).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct CompactionRequest {
    /// The lowest revision kept.
    #[prost(int64, tag = "1")]
    pub(crate) revision: i64,
}

/// The answer to a [`CompactionRequest`] (`etcdserverpb.CompactionResponse`).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct CompactionResponse {
    /// Response metadata.
    #[prost(message, optional, tag = "1")]
    pub(crate) header: Option<ResponseHeader>,
}

/// Starts a watch on a key or a range (`etcdserverpb.WatchCreateRequest`).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct WatchCreateRequest {
    /// The first key.
    #[prost(bytes = "vec", tag = "1")]
    pub(crate) key: Vec<u8>,
    /// The end of the range `[key, range_end)`; empty for `key` alone.
    #[prost(bytes = "vec", tag = "2")]
    pub(crate) range_end: Vec<u8>,
    /// The first revision watched (0: after the current one).
    #[prost(int64, tag = "3")]
    pub(crate) start_revision: i64,
    /// Have etcd send periodic empty responses while nothing happens.
    #[prost(bool, tag = "4")]
    pub(crate) progress_notify: bool,
    /// Send the previous version with every event.
    #[prost(bool, tag = "6")]
    pub(crate) prev_kv: bool,
}

/// Asks etcd to report the watch stream's progress at once
/// (`etcdserverpb.WatchProgressRequest`).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct WatchProgressRequest {}

/// What a message on a watch stream asks for (`etcdserverpb.WatchRequest.request_union`).
#[derive(Clone, PartialEq, Oneof)]
pub(crate) enum RequestUnion {
    /// A new watch.
    #[prost(message, tag = "1")]
    CreateRequest(WatchCreateRequest),
    /// A progress report.
    #[prost(message, tag = "3")]
    ProgressRequest(WatchProgressRequest),
}

/// A message on a watch stream (`etcdserverpb.WatchRequest`).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct WatchRequest {
    /// What it asks for.
    #[prost(oneof = "RequestUnion", tags = "1, 3")]
    pub(crate) request_union: Option<RequestUnion>,
}

impl From<RequestUnion> for WatchRequest {
    fn from(request: RequestUnion) -> Self {
        WatchRequest {
            request_union: Some(request),
        }
    }
}

/// A message from a watch stream: the watch's creation or cancellation, a progress report, or
/// events (`etcdserverpb.WatchResponse`).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct WatchResponse {
    /// Response metadata; its revision is etcd's current one.
    #[prost(message, optional, tag = "1")]
    pub(crate) header: Option<ResponseHeader>,
    /// Whether etcd ended the watch.
    #[prost(bool, tag = "4")]
    pub(crate) canceled: bool,
    /// If the watch was canceled because it started at a compacted revision: the compaction
    /// revision.
    #[prost(int64, tag = "5")]
    pub(crate) compact_revision: i64,
    /// Why etcd canceled the watch.
    #[prost(string, tag = "6")]
    pub(crate) cancel_reason: String,
    /// The events, in revision order.
    #[prost(message, repeated, tag = "11")]
    pub(crate) events: Vec<Event>,
}

/// Asks a member about itself (`etcdserverpb.StatusRequest`).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct StatusRequest {}

/// A member's status (`etcdserverpb.StatusResponse`).
#[derive(Clone, PartialEq, Message)]
pub(crate) struct StatusResponse {
    /// Response metadata, naming the member.
    #[prost(message, optional, tag = "1")]
    pub(crate) header: Option<ResponseHeader>,
    /// The member id of the cluster's leader, as the member knows it (0: none).
    #[prost(uint64, tag = "4")]
    pub(crate) leader: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `message` encoded.
    fn encode(message: &impl Message) -> Vec<u8> {
        message.encode_to_vec()
    }

    /// `message` encoded and decoded back as a `T`.
    fn round_trip<T: Message + Default>(message: &T) -> T {
        T::decode(encode(message).as_slice()).expect("decodes")
    }

    fn kv(key: &[u8], value: &[u8], create_revision: i64, mod_revision: i64) -> KeyValue {
        KeyValue {
            key: key.to_vec(),
            create_revision,
            mod_revision,
            value: value.to_vec(),
        }
    }

    // Expected bytes are derived by hand: a field's key is `(number << 3) | wire type`, wire
    // type 0 for varints (ints, bools, enums) and 2 for length-delimited fields (bytes,
    // strings, messages), the latter followed by their length.

    #[test]
    fn range_request_encodes_etcd_field_numbers() {
        let request = RangeRequest {
            key: b"a".to_vec(),
            limit: 1,
            ..RangeRequest::default()
        };
        // key = 1 (bytes): 0x0a; limit = 3 (varint): 0x18.
        assert_eq!(encode(&request), [0x0a, 0x01, b'a', 0x18, 0x01]);
        let request = RangeRequest {
            key: b"a".to_vec(),
            range_end: b"b".to_vec(),
            revision: 5,
            count_only: true,
            ..RangeRequest::default()
        };
        // range_end = 2 (bytes): 0x12; revision = 4: 0x20; count_only = 9: 0x48.
        assert_eq!(
            encode(&request),
            [0x0a, 0x01, b'a', 0x12, 0x01, b'b', 0x20, 0x05, 0x48, 0x01]
        );
        assert_eq!(round_trip(&request), request);
    }

    #[test]
    fn txn_request_encodes_compares_and_operations() {
        let txn = TxnRequest {
            compare: vec![Compare::new(
                b"k".to_vec(),
                CompareResult::Greater,
                TargetUnion::ModRevision(7),
            )],
            success: vec![Request::put(b"k".to_vec(), b"v".to_vec(), true).into()],
            failure: vec![
                Request::DeleteRange(DeleteRangeRequest {
                    key: b"k".to_vec(),
                    prev_kv: true,
                })
                .into(),
            ],
        };
        #[rustfmt::skip]
        let expected = [
            // compare = 1: result = 1 (GREATER), target = 2 (MOD), key = 3, mod_revision = 6.
            0x0a, 0x09, 0x08, 0x01, 0x10, 0x02, 0x1a, 0x01, b'k', 0x30, 0x07,
            // success = 2: request_put = 2: key = 1, value = 2, prev_kv = 4.
            0x12, 0x0a, 0x12, 0x08, 0x0a, 0x01, b'k', 0x12, 0x01, b'v', 0x20, 0x01,
            // failure = 3: request_delete_range = 3: key = 1, prev_kv = 3.
            0x1a, 0x07, 0x1a, 0x05, 0x0a, 0x01, b'k', 0x18, 0x01,
        ];
        assert_eq!(encode(&txn), expected);
        assert_eq!(round_trip(&txn), txn);
        // A creation condition compares create_revision = 5; EQUAL and 0 are defaults, unsent.
        let create = Compare::new(
            b"k".to_vec(),
            CompareResult::Equal,
            TargetUnion::CreateRevision(0),
        );
        assert_eq!(encode(&create), [0x10, 0x01, 0x1a, 0x01, b'k', 0x28, 0x00]);
    }

    #[test]
    fn txn_response_decodes_etcd_bytes() {
        #[rustfmt::skip]
        let bytes = [
            // header = 1: member_id = 2, revision = 3.
            0x0a, 0x04, 0x10, 0x09, 0x18, 0x2a,
            // succeeded = 2.
            0x10, 0x01,
            // responses = 3: response_range = 1: kvs = 2: key = 1, create_revision = 2,
            // mod_revision = 3, version = 4 (unknown here, skipped), value = 5; count = 4.
            0x1a, 0x12, 0x0a, 0x10, 0x12, 0x0c, 0x0a, 0x01, b'k', 0x10, 0x03, 0x18, 0x04, 0x20,
            0x02, 0x2a, 0x01, b'v', 0x20, 0x01,
        ];
        let response = TxnResponse::decode(bytes.as_slice()).expect("decodes");
        let expected = TxnResponse {
            header: Some(ResponseHeader {
                member_id: 9,
                revision: 42,
            }),
            succeeded: true,
            responses: vec![ResponseOp {
                response: Some(Response::Range(RangeResponse {
                    header: None,
                    kvs: vec![kv(b"k", b"v", 3, 4)],
                    count: 1,
                })),
            }],
        };
        assert_eq!(response, expected);
        let put = ResponseOp {
            response: Some(Response::Put(PutResponse {
                header: None,
                prev_kv: Some(kv(b"k", b"old", 3, 3)),
            })),
        };
        assert_eq!(round_trip(&put), put);
        let delete = ResponseOp {
            response: Some(Response::DeleteRange(DeleteRangeResponse {
                header: None,
                prev_kvs: vec![kv(b"k", b"old", 3, 3)],
            })),
        };
        assert_eq!(round_trip(&delete), delete);
    }

    #[test]
    fn watch_requests_encode_etcd_field_numbers() {
        let create = WatchRequest::from(RequestUnion::CreateRequest(WatchCreateRequest {
            key: b"a".to_vec(),
            range_end: b"b".to_vec(),
            start_revision: 3,
            progress_notify: true,
            prev_kv: true,
        }));
        #[rustfmt::skip]
        let expected = [
            // create_request = 1: key = 1, range_end = 2, start_revision = 3,
            // progress_notify = 4, prev_kv = 6.
            0x0a, 0x0c, 0x0a, 0x01, b'a', 0x12, 0x01, b'b', 0x18, 0x03, 0x20, 0x01, 0x30, 0x01,
        ];
        assert_eq!(encode(&create), expected);
        assert_eq!(round_trip(&create), create);
        // progress_request = 3, empty.
        let progress = WatchRequest::from(RequestUnion::ProgressRequest(WatchProgressRequest {}));
        assert_eq!(encode(&progress), [0x1a, 0x00]);
        assert_eq!(
            encode(&CompactionRequest { revision: 300 }),
            [0x08, 0xac, 0x02]
        );
    }

    #[test]
    fn watch_response_decodes_events_and_cancellation() {
        #[rustfmt::skip]
        let bytes = [
            // header = 1: revision = 3.
            0x0a, 0x02, 0x18, 0x07,
            // events = 11 (0x5a): type = 1 (DELETE), kv = 2 (key, mod_revision),
            // prev_kv = 3 (key, create_revision, mod_revision, value).
            0x5a, 0x14, 0x08, 0x01, 0x12, 0x05, 0x0a, 0x01, b'k', 0x18, 0x07,
            0x1a, 0x09, 0x0a, 0x01, b'k', 0x10, 0x02, 0x18, 0x05, 0x2a, 0x00,
        ];
        let response = WatchResponse::decode(bytes.as_slice()).expect("decodes");
        assert_eq!(response.header.as_ref().map(|h| h.revision), Some(7));
        let [event] = response.events.as_slice() else {
            panic!("one event expected: {response:?}");
        };
        assert_eq!(event.r#type(), EventType::Delete);
        assert_eq!(event.kv, Some(kv(b"k", b"", 0, 7)));
        assert_eq!(event.prev_kv, Some(kv(b"k", b"", 2, 5)));
        // canceled = 4, compact_revision = 5, cancel_reason = 6.
        let bytes = [0x20, 0x01, 0x28, 0x04, 0x32, 0x01, b'x'];
        let canceled = WatchResponse::decode(bytes.as_slice()).expect("decodes");
        assert!(canceled.canceled);
        assert_eq!(canceled.compact_revision, 4);
        assert_eq!(canceled.cancel_reason, "x");
        assert_eq!(round_trip(&canceled), canceled);
    }

    #[test]
    fn status_response_decodes_the_leader() {
        // header = 1: member_id = 2; version = 2 (unknown here, skipped); leader = 4.
        let bytes = [0x0a, 0x02, 0x10, 0x05, 0x12, 0x01, b'3', 0x20, 0x05];
        let status = StatusResponse::decode(bytes.as_slice()).expect("decodes");
        assert_eq!(status.header.map(|h| h.member_id), Some(5));
        assert_eq!(status.leader, 5);
    }
}
