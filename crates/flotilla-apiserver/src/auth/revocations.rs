//! Revoking a member token ends what that token already has open. Each request
//! authenticates afresh, so a revoked token's next request is a 401; but a watch (or a
//! proxied stream) opened before the revocation would flow on until it timed out. Every
//! replica follows the token Secrets in the store, and when a member's Secret changes or goes,
//! each open stream of that member's token checks whether its token still authenticates and,
//! if not, ends (its client re-watches and gets the 401).

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;
use tokio::task::JoinHandle;

use super::member_tokens::{self, TOKEN_NAMESPACE};
use crate::engine::Engine;

/// Which open streams must check their token again.
#[derive(Debug, Clone)]
enum Recheck {
    /// Those of this member's token (its Secret changed or was deleted).
    Member(Arc<str>),
    /// All of them (the follow restarted, and changes may have been missed).
    Everyone,
}

/// A future that resolves when a stream's token has been revoked.
pub type Revoked = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The follower of member-token Secrets on one replica. Dropping it stops following.
#[derive(Debug)]
pub struct Revocations {
    engine: Engine,
    rechecks: broadcast::Sender<Recheck>,
    task: JoinHandle<()>,
}

impl Revocations {
    /// Starts following the token Secrets from the store's current revision.
    pub fn start(engine: &Engine) -> Self {
        let (rechecks, _) = broadcast::channel(1024);
        let prefix = engine
            .registry()
            .snapshot()
            .get("", "v1", "secrets")
            .map(|info| info.namespace_prefix(Some(TOKEN_NAMESPACE)));
        let task = tokio::spawn(follow(engine.clone(), prefix, rechecks.clone()));
        Self {
            engine: engine.clone(),
            rechecks,
            task,
        }
    }

    /// For a stream answered to a request bearing `token`: a future that resolves once the
    /// token no longer authenticates, or `None` when `token` is not a member token (static
    /// tokens and certificates are not revoked at run time). It listens from this call on and
    /// checks the token once first, so a revocation while the request was being served is not
    /// missed either.
    pub fn watch(&self, token: &str) -> Option<Revoked> {
        let member: Arc<str> = member_tokens::member_of(token)?.into();
        let token = token.to_string();
        let engine = self.engine.clone();
        let mut rechecks = self.rechecks.subscribe();
        Some(Box::pin(async move {
            loop {
                // A store that cannot answer revokes nothing; only a definite "no such
                // token" does.
                if let Ok(None) = member_tokens::authenticate(&engine, &token).await {
                    return;
                }
                loop {
                    match rechecks.recv().await {
                        Ok(Recheck::Member(m)) if m != member => continue,
                        Ok(_) | Err(RecvError::Lagged(_)) => break,
                        Err(RecvError::Closed) => return std::future::pending().await,
                    }
                }
            }
        }))
    }
}

impl Drop for Revocations {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The member a token Secret's key belongs to (`…/fleet-member-<m>-token`).
fn member_of_key(key: &str) -> Option<&str> {
    key.rsplit('/')
        .next()?
        .strip_prefix("fleet-member-")?
        .strip_suffix("-token")
}

async fn follow(engine: Engine, prefix: Option<String>, rechecks: broadcast::Sender<Recheck>) {
    let Some(prefix) = prefix else { return };
    let mut revision = engine.store().current_revision();
    loop {
        let mut events = engine.store().watch(&prefix, revision);
        while let Some(Ok(event)) = events.next().await {
            if let Some(member) = member_of_key(&event.kv.key) {
                let _ = rechecks.send(Recheck::Member(member.into()));
            }
        }
        // The watch ended (compaction, a slow consumer, a store restart): what happened
        // meanwhile is unknown, so every stream checks.
        tokio::time::sleep(Duration::from_millis(200)).await;
        revision = engine.store().current_revision();
        let _ = rechecks.send(Recheck::Everyone);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_secrets_name_their_member_in_the_key() {
        let key = "/registry/secrets/fleet-system/fleet-member-east-1-token";
        assert_eq!(member_of_key(key), Some("east-1"));
        assert_eq!(member_of_key("/registry/secrets/fleet-system/other"), None);
        assert_eq!(
            member_of_key(&format!(
                "/registry/secrets/fleet-system/{}",
                member_tokens::secret_name("m")
            )),
            Some("m")
        );
    }
}
