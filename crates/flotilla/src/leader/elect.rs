//! The election loop: acquire the lease, run the controllers while renewing it, stop them
//! when a renewal does not succeed within the renew deadline, release the lease on shutdown.
//! Every decision is [`decide`](super::decide)'s; this module only reads and writes.

use std::future::Future;
use std::sync::Arc;

use anyhow::{Result, bail};
use flotilla_apiserver::{Clock, ClockExt};
use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::Lease;
use kube::Api;
use kube::api::PostParams;
use tokio::task::JoinHandle;

use super::config::LeaseConfig;
use super::decide::{self, Action, Write, WriteKind};
use super::lease;
use super::term::Term;

/// One replica's candidacy for one lease.
pub struct Election {
    api: Api<Lease>,
    namespace: String,
    name: String,
    identity: String,
    config: LeaseConfig,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for Election {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Election")
            .field("lease", &format!("{}/{}", self.namespace, self.name))
            .field("identity", &self.identity)
            .field("config", &self.config)
            .finish()
    }
}

/// What one read-decide-write round found.
enum Round {
    /// The write landed: I lead until then.
    Leading(Timestamp, WriteKind),
    /// Another replica holds the lease; look again at `until`.
    Held { holder: String, until: Timestamp },
    /// Someone wrote the lease between my read and my write.
    Conflict,
}

impl Election {
    /// A candidacy for the lease `namespace/name` through `client`, as `identity`, on
    /// `clock` (real time: lease times are compared across replicas).
    pub fn new(
        client: kube::Client,
        namespace: &str,
        name: &str,
        identity: String,
        config: LeaseConfig,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            api: Api::namespaced(client, namespace),
            namespace: namespace.to_string(),
            name: name.to_string(),
            identity,
            config,
            clock,
        }
    }

    /// Runs until `shutdown`: whenever this replica acquires the lease, starts a term with
    /// `start` (whose `tokio::spawn`s land on the term's own runtime); when a renewal has not
    /// succeeded within the renew deadline, stops the term (every task ended) before it
    /// reports the loss and competes again. On `shutdown`, stops the term and releases the
    /// lease so another replica takes over at once. Fails when a controller task ends on its
    /// own (after releasing the lease) or when `start` fails.
    pub async fn run(
        &self,
        mut start: impl FnMut() -> Result<Vec<JoinHandle<()>>>,
        shutdown: impl Future<Output = ()>,
    ) -> Result<()> {
        tracing::info!(
            identity = %self.identity,
            lease = %self.lease(),
            "competing for controller leadership",
        );
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            let (leading_until, how) = tokio::select! {
                acquired = self.acquire() => acquired,
                () = &mut shutdown => return Ok(()),
            };
            tracing::info!(
                identity = %self.identity,
                lease = %self.lease(),
                ?how,
                "acquired leadership; starting the controllers",
            );
            let mut term = match Term::start(&mut start) {
                Ok(term) => term,
                Err(e) => {
                    self.release().await;
                    return Err(e);
                }
            };
            enum End {
                Lost(&'static str),
                TaskEnded,
                Shutdown,
            }
            let end = tokio::select! {
                reason = self.hold(leading_until) => End::Lost(reason),
                () = term.ended() => End::TaskEnded,
                () = &mut shutdown => End::Shutdown,
            };
            term.stop().await;
            match end {
                End::Lost(reason) => {
                    tracing::info!(
                        identity = %self.identity,
                        lease = %self.lease(),
                        reason,
                        "lost leadership; the controllers are stopped",
                    );
                }
                End::TaskEnded => {
                    self.release().await;
                    bail!("a controller task ended on its own; its lease is released");
                }
                End::Shutdown => {
                    self.release().await;
                    return Ok(());
                }
            }
        }
    }

    /// `namespace/name`, for logs.
    fn lease(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// Competes until this replica holds the lease; returns until when it leads, and how it
    /// got the lease.
    async fn acquire(&self) -> (Timestamp, WriteKind) {
        let mut waiting_for: Option<String> = None;
        loop {
            match self.round().await {
                Ok(Round::Leading(until, how)) if self.clock.now() < until => return (until, how),
                Ok(Round::Held { holder, until }) => {
                    if waiting_for.as_ref() != Some(&holder) {
                        tracing::info!(
                            identity = %self.identity,
                            %holder,
                            "another replica leads; standing by",
                        );
                        waiting_for = Some(holder);
                    }
                    self.clock.sleep_until(until).await;
                    continue;
                }
                Ok(Round::Leading(..) | Round::Conflict) => {}
                Err(e) => {
                    tracing::warn!(
                        identity = %self.identity,
                        lease = %self.lease(),
                        error = %e,
                        "could not read or write the lease; retrying",
                    );
                }
            }
            self.clock.sleep(self.config.retry_period()).await;
        }
    }

    /// Renews every retry period while leading; returns why leadership ended: a renewal
    /// did not succeed before `leading_until`, or another replica holds the lease.
    async fn hold(&self, mut leading_until: Timestamp) -> &'static str {
        loop {
            let next = self
                .clock
                .now()
                .checked_add(
                    jiff::SignedDuration::try_from(self.config.retry_period())
                        .unwrap_or(jiff::SignedDuration::MAX),
                )
                .unwrap_or(leading_until);
            self.clock.sleep_until(next.min(leading_until)).await;
            let round = tokio::select! {
                biased;
                () = self.clock.sleep_until(leading_until) => {
                    return "the lease was not renewed within the renew deadline";
                }
                round = self.round() => round,
            };
            match round {
                Ok(Round::Leading(until, _)) => leading_until = leading_until.max(until),
                Ok(Round::Held { .. }) => return "another replica holds the lease",
                Ok(Round::Conflict) => {
                    tracing::warn!(
                        identity = %self.identity,
                        "the lease changed under a renewal; retrying",
                    );
                }
                Err(e) => {
                    tracing::warn!(
                        identity = %self.identity,
                        error = %e,
                        "could not renew the lease; retrying",
                    );
                }
            }
        }
    }

    /// Reads the lease, decides, and writes if so decided.
    async fn round(&self) -> Result<Round, kube::Error> {
        let observed = self.api.get_opt(&self.name).await?;
        let observed = observed.as_ref().map(lease::observe);
        match decide::decide(
            observed.as_ref(),
            &self.identity,
            self.clock.now(),
            &self.config,
        ) {
            Action::Wait { holder, until } => Ok(Round::Held { holder, until }),
            Action::Write(write) => match self.write(&write).await {
                Ok(()) => Ok(Round::Leading(
                    write.leading_until.unwrap_or(Timestamp::MIN),
                    write.kind,
                )),
                Err(e) if is_conflict(&e) => Ok(Round::Conflict),
                Err(e) => Err(e),
            },
        }
    }

    /// Creates or compare-and-swaps the lease.
    async fn write(&self, write: &Write) -> Result<(), kube::Error> {
        let object = lease::object(&self.namespace, &self.name, write);
        let params = PostParams::default();
        match write.resource_version {
            None => self.api.create(&params, &object).await.map(drop),
            Some(_) => self
                .api
                .replace(&self.name, &params, &object)
                .await
                .map(drop),
        }
    }

    /// Clears the holder if it is still this replica (best effort, bounded by the renew
    /// deadline: a lease left held simply expires).
    async fn release(&self) {
        let release = async {
            let Some(current) = self.api.get_opt(&self.name).await? else {
                return Ok(false);
            };
            let observed = lease::observe(&current);
            match decide::release(&observed, &self.identity, self.clock.now()) {
                Some(write) => self.write(&write).await.map(|()| true),
                None => Ok(false),
            }
        };
        let outcome = tokio::select! {
            r = release => r,
            () = self.clock.sleep(self.config.renew_deadline()) => Ok(false),
        };
        match outcome {
            Ok(true) => {
                tracing::info!(
                    identity = %self.identity,
                    lease = %self.lease(),
                    "released the lease",
                );
            }
            Ok(false) => {}
            Err(e) => {
                tracing::warn!(
                    identity = %self.identity,
                    error = %e,
                    "could not release the lease; it will expire",
                );
            }
        }
    }
}

/// A 409: the lease was created or changed by someone else since it was read.
fn is_conflict(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(status) if status.code == 409)
}
