//! The hub side of fleet membership: a kube-rs controller over MemberClusters.
//!
//! Joining: the controller puts its finalizer on the MemberCluster, creates namespace
//! `fleet-member-<name>` and the InternalMemberCluster in it (state `Join`, the heartbeat
//! period), and mirrors what the member agent reports there into the MemberCluster's status
//! (see [`status::member_status`]). It looks again exactly when the heartbeat window would run
//! out, on the injected clock, so a silent agent shows up as `Healthy=Unknown`.
//!
//! Leaving (the MemberCluster is deleted): the InternalMemberCluster is switched to `Leave`;
//! once the agent confirms it removed everything the fleet placed on the member (or has been
//! silent past the heartbeat window, so nobody is left to confirm), the namespace, with every
//! Work and the InternalMemberCluster in it, is deleted (the Works are first released from the
//! agent's Work applier finalizer, which nobody is left to remove), and then the finalizer is
//! removed.

pub mod status;

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;
use std::time::Duration;

use flotilla_api::cluster::eligibility::{self, EligibilityWindows};
use flotilla_api::cluster::member_cluster::{AgentType, MEMBER_NAMESPACE_PREFIX};
use flotilla_api::cluster::{ClusterState, InternalMemberCluster, MemberCluster};
use flotilla_api::conditions::find;
use flotilla_api::placement::Work;
use flotilla_apiserver::clock::{Clock, Deadlines};
use flotilla_apiserver::metrics::controller::Queue;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, Resource, ResourceExt};

use serde_json::json;

use crate::applier;
use flotilla_apiserver::finalizer;

/// Finalizer the hub keeps on a MemberCluster until the member has left.
pub const FINALIZER: &str = "kubernetes-fleet.io/membercluster-finalizer";
/// Label on a member namespace naming its member.
pub const MEMBER_LABEL: &str = "kubernetes-fleet.io/member-cluster-name";
/// Field manager of the hub's membership writes.
const MANAGER: &str = "flotilla-membership";
/// Default heartbeat period (KubeFleet's).
pub const DEFAULT_HEARTBEAT_SECONDS: i32 = 60;
/// How often to look at a leaving member while its namespace is being deleted.
const LEAVE_POLL: Duration = Duration::from_millis(500);

/// The namespace of member `name` on the hub.
pub fn member_namespace(name: &str) -> String {
    format!("{MEMBER_NAMESPACE_PREFIX}{name}")
}

/// Errors of one reconcile.
#[derive(Debug, thiserror::Error)]
pub enum MembershipError {
    /// A hub API call failed.
    #[error("hub API: {0}")]
    Api(#[from] kube::Error),
}

struct Context {
    client: Client,
    clock: Arc<dyn Clock>,
    windows: EligibilityWindows,
    deadlines: Deadlines<ObjectRef<MemberCluster>>,
    /// Every InternalMemberCluster, as the watch last saw it.
    imcs: Store<InternalMemberCluster>,
}

/// Runs the membership controller against the hub until the client's API goes away.
pub async fn run(client: Client, clock: Arc<dyn Clock>) {
    let (deadlines, due) = Deadlines::new(clock.clone());
    let (members, members_writer) = reflector::store();
    let member_changes = watcher(
        Api::<MemberCluster>::all(client.clone()),
        watcher::Config::default(),
    )
    .default_backoff()
    .reflect(members_writer)
    .applied_objects()
    .predicate_filter(spec_or_lifecycle, Default::default());
    let (imcs, imcs_writer) = reflector::store();
    let imc_changes = watcher(
        Api::<InternalMemberCluster>::all(client.clone()),
        watcher::Config::default(),
    )
    .default_backoff()
    .reflect(imcs_writer)
    .applied_objects();
    let ctx = Arc::new(Context {
        client,
        clock,
        windows: EligibilityWindows::default(),
        deadlines,
        imcs,
    });
    let queue = Queue::new("membercluster");
    let results = Controller::for_stream(queue.watched(member_changes), members)
        .watches_stream(
            Queue::watching(imc_changes),
            queue.mapped(|imc: InternalMemberCluster| {
                let name = imc.name_any();
                imc.namespace()
                    .filter(|ns| member_of_namespace(ns) == Some(name.as_str()))
                    .map(|_| ObjectRef::new(&name))
            }),
        )
        .reconcile_on(queue.triggered(due))
        .run(queue.instrument(reconcile), error_policy, ctx);
    queue.drive(results).await;
}

/// What of a MemberCluster wakes the controller: its spec (generation), labels, annotations,
/// finalizers and deletion; not the status it writes itself.
fn spec_or_lifecycle(mc: &MemberCluster) -> Option<u64> {
    let meta = &mc.metadata;
    let mut hasher = DefaultHasher::new();
    (
        meta.generation,
        &meta.labels,
        &meta.annotations,
        &meta.finalizers,
        meta.deletion_timestamp.is_some(),
    )
        .hash(&mut hasher);
    Some(hasher.finish())
}

fn error_policy(mc: Arc<MemberCluster>, error: &MembershipError, _: Arc<Context>) -> Action {
    tracing::warn!(member = %mc.name_any(), %error, "membership reconcile failed; retrying");
    Action::requeue(Duration::from_secs(1))
}

async fn reconcile(mc: Arc<MemberCluster>, ctx: Arc<Context>) -> Result<Action, MembershipError> {
    if mc.metadata.deletion_timestamp.is_some() {
        leave(&mc, &ctx).await
    } else {
        join(&mc, &ctx).await
    }
}

async fn join(mc: &MemberCluster, ctx: &Context) -> Result<Action, MembershipError> {
    let name = mc.name_any();
    let members: Api<MemberCluster> = Api::all(ctx.client.clone());
    if !finalizer::has(mc, FINALIZER) {
        finalizer::add(&members, mc, FINALIZER).await?;
        // The update comes back through the watch and continues from here.
        return Ok(Action::await_change());
    }
    let namespace = member_namespace(&name);
    let imc = ensure_imc(&ctx.client, &ctx.imcs, mc, &namespace).await?;
    let now = ctx.clock.now();
    let status = status::member_status(mc, Some(&imc), now, &ctx.windows);
    if mc.status.as_ref() != Some(&status) {
        let patch = json!({"status": status});
        members
            .patch_status(&name, &PatchParams::default(), &Patch::Merge(patch))
            .await?;
    }
    let mut observed = mc.clone();
    observed.status = Some(status);
    if let Some(at) = eligibility::next_change(&observed, now, &ctx.windows) {
        // One second past the window, so the check that follows sees it run out.
        let at = at
            .checked_add(k8s_openapi::jiff::SignedDuration::from_secs(1))
            .unwrap_or(at);
        ctx.deadlines.schedule(at, ObjectRef::from_obj(mc));
    }
    Ok(Action::await_change())
}

/// Creates member `member`'s hub namespace `namespace` (labelled with [`MEMBER_LABEL`]) unless
/// it exists. The membership controller calls it before creating the InternalMemberCluster;
/// whoever seeds the namespace with objects ahead of the controller (`flotilla up` writes the
/// members' maintenance configurations there) calls it too.
pub async fn ensure_namespace(
    client: &Client,
    namespace: &str,
    member: &str,
) -> Result<(), kube::Error> {
    let api: Api<Namespace> = Api::all(client.clone());
    let ns: Namespace = serde_json::from_value(json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": namespace, "labels": {MEMBER_LABEL: member}},
    }))
    .map_err(kube::Error::SerdeError)?;
    match api.create(&PostParams::default(), &ns).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(e)) if e.code == 409 => Ok(()),
        Err(e) => Err(e),
    }
}

/// Gets or creates the member's InternalMemberCluster and keeps its spec in line with the
/// MemberCluster's. One the watch has seen (`cached`) in line already is taken as it is: each
/// report the agent writes there wakes this controller, through that same watch, and reading
/// it from the hub again every time doubled the hub's reads of a large fleet's heartbeats.
async fn ensure_imc(
    client: &Client,
    cached: &Store<InternalMemberCluster>,
    mc: &MemberCluster,
    namespace: &str,
) -> Result<InternalMemberCluster, kube::Error> {
    let name = mc.name_any();
    let api: Api<InternalMemberCluster> = Api::namespaced(client.clone(), namespace);
    let period = mc
        .spec
        .heartbeat_period_seconds
        .unwrap_or(DEFAULT_HEARTBEAT_SECONDS);
    let in_line = |imc: &InternalMemberCluster| {
        imc.spec.state == ClusterState::Join && imc.spec.heartbeat_period_seconds == Some(period)
    };
    if let Some(seen) = cached.get(&ObjectRef::new(&name).within(namespace))
        && in_line(&seen)
    {
        return Ok((*seen).clone());
    }
    if let Some(existing) = api.get_opt(&name).await? {
        // The InternalMemberCluster lives in the namespace, so the namespace exists too.
        if in_line(&existing) {
            return Ok(existing);
        }
        let patch = json!({"spec": {"state": "Join", "heartbeatPeriodSeconds": period}});
        return api
            .patch(&name, &PatchParams::apply(MANAGER), &Patch::Merge(patch))
            .await;
    }
    ensure_namespace(client, namespace, &name).await?;
    let owner = mc.controller_owner_ref(&()).map(|mut o| {
        o.block_owner_deletion = Some(false);
        o
    });
    let imc: InternalMemberCluster = serde_json::from_value(json!({
        "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "InternalMemberCluster",
        "metadata": {"name": name, "namespace": namespace, "ownerReferences": owner.into_iter().collect::<Vec<_>>()},
        "spec": {"state": "Join", "heartbeatPeriodSeconds": period},
    }))
    .map_err(kube::Error::SerdeError)?;
    match api.create(&PostParams::default(), &imc).await {
        Err(kube::Error::Api(e)) if e.code == 409 => api.get(&name).await,
        other => other,
    }
}

async fn leave(mc: &MemberCluster, ctx: &Context) -> Result<Action, MembershipError> {
    if !finalizer::has(mc, FINALIZER) {
        return Ok(Action::await_change());
    }
    let name = mc.name_any();
    let namespace = member_namespace(&name);
    let imcs: Api<InternalMemberCluster> = Api::namespaced(ctx.client.clone(), &namespace);
    if let Some(imc) = imcs.get_opt(&name).await? {
        if imc.spec.state != ClusterState::Leave {
            let patch = json!({"spec": {"state": "Leave"}});
            imcs.patch(&name, &PatchParams::default(), &Patch::Merge(patch))
                .await?;
            return Ok(Action::await_change());
        }
        if !agent_done(mc, &imc, ctx) {
            // Wait for the agent's confirmation; if it falls silent, give up on it when the
            // heartbeat window runs out.
            if let Some(at) = eligibility::next_change(mc, ctx.clock.now(), &ctx.windows) {
                ctx.deadlines.schedule(at, ObjectRef::from_obj(mc));
            }
            return Ok(Action::await_change());
        }
    }
    let namespaces: Api<Namespace> = Api::all(ctx.client.clone());
    match namespaces.get_opt(&namespace).await? {
        Some(ns) => {
            release_works(&ctx.client, &namespace).await?;
            if ns.metadata.deletion_timestamp.is_none() {
                namespaces
                    .delete(&namespace, &DeleteParams::default())
                    .await?;
            }
            Ok(Action::requeue(LEAVE_POLL))
        }
        None => {
            let members: Api<MemberCluster> = Api::all(ctx.client.clone());
            finalizer::remove(&members, mc, FINALIZER).await?;
            tracing::info!(member = %name, "member cluster left the fleet");
            Ok(Action::await_change())
        }
    }
}

/// Releases the Works in a leaving member's namespace from the Work applier's finalizer: the
/// agent has removed everything they placed (or is gone and never will), so the finalizer has
/// nothing left to guard, and the namespace's deletion must not wait for an applier that no
/// longer runs (KubeFleet's hub does the same when a member leaves).
async fn release_works(client: &Client, namespace: &str) -> Result<(), kube::Error> {
    let works: Api<Work> = Api::namespaced(client.clone(), namespace);
    for work in works.list(&ListParams::default()).await?.items {
        if finalizer::has(&work, applier::FINALIZER) {
            finalizer::remove(&works, &work, applier::FINALIZER).await?;
        }
    }
    Ok(())
}

/// Whether the member agent has confirmed leaving, or has been silent long enough that no
/// confirmation will come.
fn agent_done(mc: &MemberCluster, imc: &InternalMemberCluster, ctx: &Context) -> bool {
    let agent = imc
        .status
        .as_ref()
        .and_then(|s| s.agent_status.as_ref())
        .and_then(|a| a.iter().find(|a| a.type_ == AgentType::MemberAgent));
    let left = agent
        .and_then(|a| a.conditions.as_deref())
        .and_then(|c| find(c, status::JOINED))
        .is_some_and(|c| c.status == "False");
    if left {
        return true;
    }
    let mut probe = mc.clone();
    probe.metadata.deletion_timestamp = None;
    probe.status = imc
        .status
        .as_ref()
        .map(|s| flotilla_api::cluster::MemberClusterStatus {
            agent_status: s.agent_status.clone(),
            ..Default::default()
        });
    matches!(
        eligibility::check(&probe, ctx.clock.now(), &ctx.windows),
        Err(eligibility::Ineligible::HeartbeatStale { .. }
            | eligibility::Ineligible::NoHeartbeat
            | eligibility::Ineligible::NoAgentStatus)
    )
}

/// The member a hub namespace belongs to, if it is a member namespace.
pub fn member_of_namespace(namespace: &str) -> Option<&str> {
    namespace.strip_prefix(MEMBER_NAMESPACE_PREFIX)
}
