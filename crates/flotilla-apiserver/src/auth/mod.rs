//! Who is calling: bearer tokens (a static token file for administrators, per-member tokens
//! stored hashed on the hub) and x509 client certificates signed by the hub's CA.
//!
//! Authentication yields a [`UserInfo`]; RBAC ([`crate::rbac`]) then decides what that user
//! may do. Every authenticated user is also in the group `system:authenticated`.

pub mod impersonation;
pub mod member_tokens;
pub mod revocations;
pub mod token_file;
pub mod x509;

use std::sync::Arc;

use http::{HeaderMap, header};

use crate::engine::Engine;
use crate::status::{ApiError, ApiResult};

pub use token_file::TokenFile;

/// The group every authenticated user belongs to.
pub const AUTHENTICATED_GROUP: &str = "system:authenticated";

/// An authenticated user.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UserInfo {
    /// User name (a certificate's common name, a token file's user column).
    pub name: String,
    /// Unique id, when the source has one.
    pub uid: String,
    /// Groups, `system:authenticated` included.
    pub groups: Vec<String>,
}

impl UserInfo {
    /// A user with `name` and `groups`, plus `system:authenticated`.
    pub fn new(name: impl Into<String>, groups: impl IntoIterator<Item = String>) -> Self {
        let mut groups: Vec<String> = groups.into_iter().collect();
        if !groups.iter().any(|g| g == AUTHENTICATED_GROUP) {
            groups.push(AUTHENTICATED_GROUP.to_string());
        }
        Self {
            name: name.into(),
            uid: String::new(),
            groups,
        }
    }
}

/// What a connection's TLS client certificate says, attached to each request of the connection
/// by the TLS listener.
#[derive(Debug, Clone)]
pub enum PeerIdentity {
    /// A certificate whose chain verified against the hub's CA: the user it names.
    Verified(Arc<UserInfo>),
    /// A certificate the hub does not accept (expired, from another CA, naming no user), and
    /// why. As with kube-apiserver, the handshake still succeeds and each request is a 401
    /// saying why, which the client can show; a refused handshake only shows a broken pipe.
    Refused(Arc<str>),
}

/// The bearer token a request carries, if any.
pub fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")
        .map(str::trim)
}

/// Resolves request credentials to users.
#[derive(Debug, Clone)]
pub struct Authenticator {
    tokens: Arc<TokenFile>,
    engine: Engine,
}

impl Authenticator {
    /// An authenticator accepting `tokens` and the member tokens stored in `engine`.
    pub fn new(tokens: Arc<TokenFile>, engine: Engine) -> Self {
        Self { tokens, engine }
    }

    /// The user `token` (a static or a member token) authenticates, if any.
    pub async fn authenticate_token(&self, token: &str) -> ApiResult<Option<Arc<UserInfo>>> {
        if let Some(user) = self.tokens.lookup(token) {
            return Ok(Some(user));
        }
        Ok(member_tokens::authenticate(&self.engine, token)
            .await?
            .map(Arc::new))
    }

    /// The user a request with `headers` (and, for certificate clients, `peer`) is; a
    /// 401 `Status` when it carries no valid credentials.
    pub async fn authenticate(
        &self,
        headers: &HeaderMap,
        peer: Option<&PeerIdentity>,
    ) -> ApiResult<Arc<UserInfo>> {
        match bearer_token(headers) {
            // kube-apiserver: a presented token that fails is a 401 even with a certificate.
            Some(token) => self
                .authenticate_token(token)
                .await?
                .ok_or_else(ApiError::unauthorized),
            None => match peer {
                Some(PeerIdentity::Verified(user)) => Ok(user.clone()),
                Some(PeerIdentity::Refused(why)) => Err(ApiError::unauthorized_because(format!(
                    "client certificate refused: {why}"
                ))),
                None => Err(ApiError::unauthorized()),
            },
        }
    }
}
