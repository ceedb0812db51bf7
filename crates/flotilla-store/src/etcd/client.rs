//! A small etcd v3 client: the gRPC calls Flotilla makes (key-value reads, transactions and
//! compaction, watch streams, a member's status, plain puts for benchmarks), made with tonic
//! over one channel balanced across the cluster's members, on the hand-written messages of the
//! `wire` module. Failures are gRPC statuses; a member that cannot be reached is
//! `Unavailable`, with the I/O error (e.g. connection refused) in the status's source chain.

use std::time::Duration;

use futures::channel::mpsc;
use futures::{SinkExt, StreamExt, stream};
use http::uri::PathAndQuery;
use prost::Message;
use tonic::client::Grpc;
use tonic::metadata::MetadataValue;
use tonic::transport::channel::Change;
use tonic::transport::{Channel, Endpoint};
use tonic::{Status, Streaming};
use tonic_prost::ProstCodec;

use super::wire::{
    CompactionRequest, CompactionResponse, PutRequest, PutResponse, RangeRequest, RangeResponse,
    RequestUnion, StatusRequest, StatusResponse, TxnRequest, TxnResponse, WatchCreateRequest,
    WatchProgressRequest, WatchRequest, WatchResponse,
};

/// Largest etcd response accepted (a big list, or a watch batch of large objects).
const MAX_MESSAGE: usize = 1 << 30;

/// Watch requests (progress requests) that may wait to be sent.
const WATCH_REQUESTS: usize = 8;

/// Why [`Client::connect`] failed.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// No endpoint was given.
    #[error("no etcd endpoints given")]
    NoEndpoints,
    /// An endpoint is not a URL the client can use (only `http://` URLs, or bare
    /// `host:port`, are supported).
    #[error("invalid etcd endpoint {endpoint:?}: {reason}")]
    InvalidEndpoint {
        /// The endpoint as given.
        endpoint: String,
        /// What is wrong with it.
        reason: String,
    },
}

/// How [`Client::connect`] talks to the members. The default has none of the options.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnectOptions {
    /// Have members without a leader refuse requests at once (etcd's `hasleader` metadata),
    /// rather than hold them until a leader is elected; such a refusal is safe to retry.
    pub require_leader: bool,
    /// How long establishing a connection to a member may take.
    pub connect_timeout: Option<Duration>,
    /// HTTP/2 keep-alive: the interval between pings on a connection with requests in flight,
    /// and how long to wait for a ping's answer before dropping the connection.
    pub keep_alive: Option<(Duration, Duration)>,
}

/// A connection to an etcd cluster, balancing requests over its members; cheap to clone.
///
/// Connections are made lazily, by the first request to each member, so connecting succeeds
/// while members are down and requests fail (as `Unavailable`) until one is reachable.
#[derive(Clone)]
pub struct Client {
    grpc: Grpc<Channel>,
    require_leader: bool,
}

impl Client {
    /// A client of the members at `endpoints` (client URLs such as `http://127.0.0.1:2379`;
    /// `http://` is assumed when no scheme is given). Must be called inside a Tokio runtime,
    /// which runs the connections.
    pub async fn connect<E: AsRef<str>>(
        endpoints: impl IntoIterator<Item = E>,
        options: &ConnectOptions,
    ) -> Result<Client, ConnectError> {
        let endpoints = endpoints
            .into_iter()
            .map(|endpoint| self::endpoint(endpoint.as_ref(), options))
            .collect::<Result<Vec<_>, _>>()?;
        if endpoints.is_empty() {
            return Err(ConnectError::NoEndpoints);
        }
        let (channel, changes) = Channel::balance_channel(endpoints.len());
        for endpoint in endpoints {
            // The channel holds the receiver, so sending cannot fail.
            let _ = changes
                .send(Change::Insert(endpoint.uri().clone(), endpoint))
                .await;
        }
        Ok(Client {
            grpc: Grpc::new(channel).max_decoding_message_size(MAX_MESSAGE),
            require_leader: options.require_leader,
        })
    }

    /// Writes `value` at `key` (a plain put, which always succeeds).
    pub async fn put(
        &self,
        key: impl Into<Vec<u8>>,
        value: impl Into<Vec<u8>>,
    ) -> Result<(), Status> {
        let request = PutRequest {
            key: key.into(),
            value: value.into(),
            prev_kv: false,
        };
        let _: PutResponse = self.unary("/etcdserverpb.KV/Put", request).await?;
        Ok(())
    }

    /// Reads a key or a range of keys.
    pub(crate) async fn range(&self, request: RangeRequest) -> Result<RangeResponse, Status> {
        self.unary("/etcdserverpb.KV/Range", request).await
    }

    /// Runs a transaction.
    pub(crate) async fn txn(&self, request: TxnRequest) -> Result<TxnResponse, Status> {
        self.unary("/etcdserverpb.KV/Txn", request).await
    }

    /// Compacts the history below `revision`.
    pub(crate) async fn compact(&self, revision: i64) -> Result<CompactionResponse, Status> {
        let request = CompactionRequest { revision };
        self.unary("/etcdserverpb.KV/Compact", request).await
    }

    /// The status of the member that answers.
    pub(crate) async fn status(&self) -> Result<StatusResponse, Status> {
        self.unary("/etcdserverpb.Maintenance/Status", StatusRequest {})
            .await
    }

    /// Opens a watch stream with one watch, created by `request`.
    pub(crate) async fn watch(&self, request: WatchCreateRequest) -> Result<Watch, Status> {
        let (requests, more) = mpsc::channel(WATCH_REQUESTS);
        let create = WatchRequest::from(RequestUnion::CreateRequest(request));
        let outgoing = stream::once(async { create }).chain(more);
        let path = PathAndQuery::from_static("/etcdserverpb.Watch/Watch");
        let responses = self
            .ready()
            .await?
            .streaming(self.request(outgoing), path, ProstCodec::default())
            .await?
            .into_inner();
        Ok(Watch {
            requests,
            responses,
        })
    }

    /// Sends one request and returns the answer.
    async fn unary<Req, Resp>(&self, path: &'static str, message: Req) -> Result<Resp, Status>
    where
        Req: Message + 'static,
        Resp: Message + Default + 'static,
    {
        let path = PathAndQuery::from_static(path);
        let response = self
            .ready()
            .await?
            .unary(self.request(message), path, ProstCodec::default())
            .await?;
        Ok(response.into_inner())
    }

    /// The channel, once it can take a request.
    async fn ready(&self) -> Result<Grpc<Channel>, Status> {
        let mut grpc = self.grpc.clone();
        grpc.ready()
            .await
            .map_err(|error| Status::unknown(format!("service was not ready: {error}")))?;
        Ok(grpc)
    }

    /// `message` as a request, with the metadata every request carries.
    fn request<T>(&self, message: T) -> tonic::Request<T> {
        let mut request = tonic::Request::new(message);
        if self.require_leader {
            request
                .metadata_mut()
                .insert("hasleader", MetadataValue::from_static("true"));
        }
        request
    }
}

/// The tonic endpoint of one member's client URL.
fn endpoint(url: &str, options: &ConnectOptions) -> Result<Endpoint, ConnectError> {
    let invalid = |reason: String| ConnectError::InvalidEndpoint {
        endpoint: url.to_owned(),
        reason,
    };
    if url.starts_with("https://") {
        return Err(invalid("TLS is not supported".to_owned()));
    }
    let url = if url.starts_with("http://") {
        url.to_owned()
    } else {
        format!("http://{url}")
    };
    let mut endpoint = Endpoint::from_shared(url).map_err(|error| invalid(error.to_string()))?;
    if let Some((interval, timeout)) = options.keep_alive {
        endpoint = endpoint
            .http2_keep_alive_interval(interval)
            .keep_alive_timeout(timeout);
    }
    if let Some(timeout) = options.connect_timeout {
        endpoint = endpoint.connect_timeout(timeout);
    }
    Ok(endpoint)
}

/// An open watch stream: progress requests go out, responses come in. Dropping it ends the
/// stream and its watch.
pub(crate) struct Watch {
    requests: mpsc::Sender<WatchRequest>,
    responses: Streaming<WatchResponse>,
}

impl Watch {
    /// Asks etcd to report the stream's progress (a response with the current revision).
    pub(crate) async fn request_progress(&mut self) -> Result<(), String> {
        let progress = RequestUnion::ProgressRequest(WatchProgressRequest {});
        self.requests
            .send(progress.into())
            .await
            .map_err(|error| format!("watch request not sent: {error}"))
    }

    /// The next response; `None` once etcd closed the stream.
    pub(crate) async fn next(&mut self) -> Option<Result<WatchResponse, Status>> {
        self.responses.message().await.transpose()
    }
}
