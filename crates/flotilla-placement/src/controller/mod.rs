//! The hub's placement controllers: thin kube-rs shells around the pure core of this crate.
//! They talk to the hub only through a `kube::Client`, so they run the same in-process and
//! against any Kubernetes API server with Flotilla's CRDs.
//!
//! - [`placement`]: one reconcile ([`reconcile`]) per `ClusterResourcePlacement` or
//!   `ResourcePlacement` brings its policy and resource snapshots up to date
//!   ([`crate::snapshot`] over [`crate::selection`]), runs the scheduler
//!   ([`crate::scheduler`]) and writes its bindings, rolls the latest resources out to them,
//!   and writes the placement's status. Both kinds run the same code, written once over a
//!   [`family`] of kinds.
//! - [`eviction`]: a placement eviction deletes one binding when the disruption budget allows.
//! - [`override_snapshots`]: an immutable snapshot per version of every override.
//! - [`work_generator`]: one reconcile per `ClusterResourceBinding` or `ResourceBinding` turns
//!   a bound binding into the `Work` in its member's namespace, and the Work's status back
//!   into the binding's.
//! - [`update_run`]: one reconcile per `ClusterStagedUpdateRun` initializes the run and
//!   moves it on, stage by stage ([`crate::update_run`]), for placements under the External
//!   rollout strategy.
//! - [`changes`] tells the placement controller when hub objects a placement may select
//!   change, and [`discovery`] keeps the list of kinds the hub serves.

mod binding_cache;
mod changes;
mod desired_work;
mod discovery;
pub mod eviction;
mod family;
mod naming;
pub mod override_snapshots;
mod pacing;
pub mod placement;
pub mod placement_status;
mod reconcile;
mod rolling;
mod scheduling;
mod snapshots;
pub mod update_run;
pub mod work_generator;
mod writes;
mod written_statuses;

use std::sync::Arc;

use flotilla_apiserver::clock::Clock;
use kube::Client;

use binding_cache::BindingCache;
use family::{ClusterFamily, NamespacedFamily};

/// Field manager of the placement controllers' writes.
pub(crate) const MANAGER: &str = "flotilla-placement";

/// Errors of one reconcile; every one is retried.
#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    /// A hub API call failed.
    #[error("hub API: {0}")]
    Api(#[from] kube::Error),
    /// The hub's discovery could not be read.
    #[error("hub discovery: {0}")]
    Discovery(String),
    /// An object could not be converted.
    #[error("object conversion: {0}")]
    Json(#[from] serde_json::Error),
}

impl ControllerError {
    /// Whether another writer changed the object since it was read: expected when
    /// controllers share objects, and retried at once from a fresh read.
    pub fn is_conflict(&self) -> bool {
        matches!(self, ControllerError::Api(kube::Error::Api(status)) if status.code == 409)
    }

    /// What the failed reconcile does next: a conflict is retried almost at once and quietly,
    /// anything else after a second with a warning naming `what`.
    pub(crate) fn retry(&self, what: &str) -> kube::runtime::controller::Action {
        use kube::runtime::controller::Action;
        if self.is_conflict() {
            tracing::debug!(%what, error = %self, "write conflict; retrying");
            return Action::requeue(std::time::Duration::from_millis(50));
        }
        tracing::warn!(%what, error = %self, "reconcile failed; retrying");
        Action::requeue(std::time::Duration::from_secs(1))
    }
}

/// Runs every placement controller against the hub until the client's API goes away.
pub async fn run(client: Client, clock: Arc<dyn Clock>) {
    // One binding watch per family, shared by the three controllers of bindings.
    let [cluster_placements, cluster_works, cluster_runs] =
        BindingCache::<ClusterFamily>::watch_shared(client.clone());
    let [namespaced_placements, namespaced_works, namespaced_runs] =
        BindingCache::<NamespacedFamily>::watch_shared(client.clone());
    tokio::join!(
        placement::run(
            client.clone(),
            clock.clone(),
            cluster_placements,
            namespaced_placements
        ),
        work_generator::run(
            client.clone(),
            clock.clone(),
            cluster_works,
            namespaced_works
        ),
        eviction::run(client.clone(), clock.clone()),
        update_run::run(client.clone(), clock, cluster_runs, namespaced_runs),
        override_snapshots::run(client),
    );
}
