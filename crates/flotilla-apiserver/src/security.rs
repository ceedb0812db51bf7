//! The secured hub's request gate: authenticate (401), take a per-client slot (429),
//! authorize with RBAC (403), and audit mutating requests. In-process clients (the hub's own
//! controllers, simulated members) use routers without a gate.

use std::path::PathBuf;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use futures::StreamExt;
use http::HeaderMap;
use http_body::Body as _;

use crate::audit::{AuditEntry, AuditLog};
use crate::auth::revocations::{Revocations, Revoked};
use crate::auth::{
    Authenticator, PeerIdentity, TokenFile, UserInfo, bearer_token, impersonation, member_tokens,
};
use crate::clock::rfc3339;
use crate::engine::Engine;
use crate::http::error_response;
use crate::limits::{ClientLimits, Limiter, Slot, SlotKind};
use crate::rbac::cache::PolicyCache;
use crate::rbac::{Attributes, reconcile};
use crate::status::{ApiError, ApiResult};

/// How a hub secures its API.
#[derive(Debug, Clone)]
pub struct SecurityOptions {
    /// Static bearer tokens (administrators).
    pub tokens: Arc<TokenFile>,
    /// Where the audit log is appended; `None` keeps no audit log.
    pub audit_log: Option<PathBuf>,
    /// Per-client request limits.
    pub limits: ClientLimits,
}

/// Authentication, authorization, limits and audit of one hub.
#[derive(Debug)]
pub struct Security {
    /// The engine whose clock stamps audit lines.
    engine: Engine,
    authenticator: Authenticator,
    policy: PolicyCache,
    audit: Option<AuditLog>,
    limiter: Arc<Limiter>,
    revocations: Revocations,
    /// The task keeping the built-in roles as they should be.
    reconciler: tokio::task::JoinHandle<()>,
}

/// A request that passed the gate: who made it, why it was allowed, and its slot (held until
/// the response, or the watch stream, ends).
#[derive(Debug)]
pub struct Admitted {
    /// The user the request runs as.
    pub user: Arc<UserInfo>,
    /// Who made it, when that is not `user` (an impersonating request).
    pub impersonator: Option<Arc<UserInfo>>,
    /// Which binding allowed it.
    pub reason: String,
    /// The per-client slot.
    pub slot: Slot,
}

/// A request the gate refused, with the user when authentication succeeded.
#[derive(Debug)]
pub struct Refused {
    /// The user the request would have run as, when known.
    pub user: Option<Arc<UserInfo>>,
    /// Who made it, when it impersonated `user`.
    pub impersonator: Option<Arc<UserInfo>>,
    /// The `Status` to answer with.
    pub error: ApiError,
}

impl Security {
    /// Creates (or repairs) the built-in roles and keeps them so, starts following the stored
    /// RBAC policy and revoked member tokens, and opens the audit log.
    pub async fn start(engine: &Engine, options: &SecurityOptions) -> ApiResult<Arc<Self>> {
        reconcile::reconcile(engine).await?;
        let audit = match &options.audit_log {
            Some(path) => Some(AuditLog::open(path).map_err(|e| {
                ApiError::internal(format!("opening audit log {}: {e}", path.display()))
            })?),
            None => None,
        };
        let policy = PolicyCache::start(engine).await;
        let reconciler = reconcile::spawn(engine.clone(), policy.changed());
        Ok(Arc::new(Self {
            engine: engine.clone(),
            authenticator: Authenticator::new(options.tokens.clone(), engine.clone()),
            policy,
            reconciler,
            audit,
            limiter: Limiter::new(options.limits),
            revocations: Revocations::start(engine),
        }))
    }

    /// The stored RBAC policy, as this replica follows it.
    pub fn policy(&self) -> &PolicyCache {
        &self.policy
    }

    /// Who credentials are (for TokenReviews).
    pub fn authenticator(&self) -> &Authenticator {
        &self.authenticator
    }

    /// Authenticates, authorizes and limits one request.
    async fn admit(
        &self,
        headers: &HeaderMap,
        peer: Option<&PeerIdentity>,
        attrs: &Attributes,
    ) -> Result<Admitted, Refused> {
        let requester = self
            .authenticator
            .authenticate(headers, peer)
            .await
            .map_err(|error| Refused {
                user: None,
                impersonator: None,
                error,
            })?;
        let refuse = |error| Refused {
            user: Some(requester.clone()),
            impersonator: None,
            error,
        };
        let (user, impersonator) = match impersonation::requested(headers).map_err(refuse)? {
            None => (requester.clone(), None),
            Some(asked) => {
                if let Some(check) = asked
                    .checks()
                    .into_iter()
                    .find(|check| !self.policy.authorize(&requester, check).allowed)
                {
                    return Err(refuse(ApiError::forbidden_by_rbac(&requester.name, &check)));
                }
                (Arc::new(asked.user()), Some(requester.clone()))
            }
        };
        let decision = self.policy.authorize(&user, attrs);
        if !decision.allowed {
            return Err(Refused {
                error: ApiError::forbidden_by_rbac(&user.name, attrs),
                user: Some(user),
                impersonator,
            });
        }
        let kind = if attrs.verb() == "watch" {
            SlotKind::Watch
        } else {
            SlotKind::Request
        };
        // The slot is the requester's: impersonating others gains no one more slots.
        let slot = self
            .limiter
            .acquire(&requester.name, kind)
            .map_err(refuse)?;
        Ok(Admitted {
            user,
            impersonator,
            reason: decision.reason,
            slot,
        })
    }

    /// Serves `req` (described by `attrs`) through the gate: refused requests get their
    /// `Status`; admitted ones are answered by `inner` with the caller's identity, their slot
    /// held until the response body (a watch stream, say) ends. Mutating requests, refused
    /// or not, are audited. A stream answered to a member token ends when the token is
    /// revoked.
    pub async fn guard<F, Fut>(&self, req: Request, attrs: Attributes, inner: F) -> Response
    where
        F: FnOnce(Request, Arc<UserInfo>) -> Fut,
        Fut: Future<Output = Response>,
    {
        let peer = req.extensions().get::<PeerIdentity>().cloned();
        // Only a member token can be revoked while its stream flows; keep it for that.
        let member_token = bearer_token(req.headers())
            .filter(|t| member_tokens::member_of(t).is_some())
            .map(str::to_owned);
        let (response, user, impersonator, reason) =
            match self.admit(req.headers(), peer.as_ref(), &attrs).await {
                Ok(admitted) => {
                    let response = inner(req, admitted.user.clone()).await;
                    let revoked = || {
                        member_token
                            .as_deref()
                            .and_then(|t| self.revocations.watch(t))
                    };
                    let response = hold_until_sent(response, admitted.slot, revoked);
                    (
                        response,
                        Some(admitted.user),
                        admitted.impersonator,
                        admitted.reason,
                    )
                }
                Err(refused) => (
                    error_response(&refused.error),
                    refused.user,
                    refused.impersonator,
                    refused.error.message,
                ),
            };
        if let Some(log) = &self.audit
            && attrs.is_mutating()
        {
            log.record(&AuditEntry {
                time: &rfc3339(self.engine.clock.now()),
                user: user.as_deref(),
                impersonator: impersonator.as_deref(),
                attributes: &attrs,
                code: response.status().as_u16(),
                reason: &reason,
            });
        }
        response
    }
}

impl Drop for Security {
    fn drop(&mut self) {
        self.reconciler.abort();
    }
}

/// `response` with `slot` held until its body has been sent: a stream (a watch, a proxied
/// body) keeps its client's slot while it flows, and ends when its token is revoked (`revoked`
/// makes the future that says so, for streams only). A body already complete in memory (its size known: the
/// common case) is left
/// as it is and the slot freed now, since turning it into a stream would cost every request
/// an extra frame and its `content-length`.
fn hold_until_sent(
    response: Response,
    slot: Slot,
    revoked: impl FnOnce() -> Option<Revoked>,
) -> Response {
    if response.body().size_hint().exact().is_some() {
        return response;
    }
    let revoked = revoked().unwrap_or_else(|| Box::pin(std::future::pending()));
    response.map(|body| {
        Body::from_stream(
            body.into_data_stream()
                .map(move |chunk| {
                    let _held = &slot;
                    chunk
                })
                .take_until(revoked),
        )
    })
}
