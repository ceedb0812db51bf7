//! One reconcile of an `UpdateRun`: plan it while it has not started, run a pass, carry out
//! the pass's actions, record the status it reached (stored behind the pass by
//! [`super::statuses`]). Every decision is taken by the pure core over a [`FleetView`] of the
//! controller's caches; only fetching a named strategy and the writes happen here.

use std::sync::Arc;
use std::time::{Duration, Instant};

use flotilla_api::cluster::member_cluster::MEMBER_NAMESPACE_PREFIX;
use flotilla_api::updates::gate::{GateResourceStatus, GateState};
use flotilla_api::updates::member_upgrade::{MemberUpgradeSpec, UPGRADE_RUN_LABEL};
use flotilla_api::updates::update_run::{
    ErrorDetail, RunAction, UpdateRunStatus, UpdateState, UpgradeType,
};
use flotilla_api::updates::{FleetUpdateStrategy, Gate, MemberUpgrade, UpdateRun};
use flotilla_apiserver::recorder::reference;
use futures::{FutureExt, StreamExt, TryStreamExt};
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::{Patch, PatchParams, PostParams};
use kube::runtime::controller::Action as Requeue;
use kube::runtime::reflector::ObjectRef;
use kube::{Api, Resource, ResourceExt};
use serde_json::json;

use super::statuses::Before;
use super::{Context, ControllerError, MANAGER, caches_ready, observe};
use crate::fleet::{FleetView, run_strategy, strategy_to_fetch};
use crate::run::{Action, Observed, advance};
use crate::window::next_scheduled_start;

/// How many of a pass's actions (member upgrades and gates to create) are carried out at once:
/// enough that the creates of a pass over a 50-wide stage (AKS's cap) share a few commits,
/// few enough that a pass starting a thousand upgrades does not flood the hub.
const CONCURRENT_ACTIONS: usize = 25;

/// Error code of a run whose strategy cannot be used.
pub const INVALID_STRATEGY: &str = "InvalidStrategy";

/// Plans, advances and records one run.
pub(crate) async fn reconcile(
    run: Arc<UpdateRun>,
    ctx: Arc<Context>,
) -> Result<Requeue, ControllerError> {
    if run.metadata.deletion_timestamp.is_some() {
        ctx.statuses.forget(&run);
        return Ok(Requeue::await_change());
    }
    let ready = caches_ready(vec![
        ctx.members.wait_until_ready().boxed(),
        ctx.windows.wait_until_ready().boxed(),
        ctx.kubernetes.wait_until_ready().boxed(),
        ctx.images.wait_until_ready().boxed(),
        ctx.upgrades.wait_until_ready().boxed(),
        ctx.gates.wait_until_ready().boxed(),
    ]);
    if !ready.await {
        return Ok(Requeue::await_change());
    }
    let deciding = Instant::now();
    let now = ctx.clock.now();
    let name = run.name_any();
    // Where the last pass left the status (it may not be stored yet), or the run's as read.
    let (before, stored) = match ctx.statuses.before(&run) {
        Before::Book(latest) => (latest, true),
        Before::Cache => (
            Arc::new(run.status.clone().unwrap_or_default()),
            run.status.is_some(),
        ),
        // The watch brings the status just stored soon, and with it another reconcile.
        Before::Stale => return Ok(Requeue::requeue(Duration::from_millis(100))),
    };
    let mut status = (*before).clone();
    let (members, windows) = (ctx.members.state(), ctx.windows.state());
    let (kubernetes, images) = (ctx.kubernetes.state(), ctx.images.state());
    let fleet = FleetView::new(
        members.iter().map(|m| &**m),
        windows.iter().map(|w| &**w),
        kubernetes.iter().map(|k| &**k),
        images.iter().map(|i| &**i),
    );
    if status.progress.state == UpdateState::NotStarted
        && !prepare(&ctx, &run, &mut status, &fleet, now).await?
    {
        return Ok(record(&ctx, &run, &before, stored, status));
    }
    let upgrade_type = run.spec.managed_cluster_update.upgrade.upgrade_type;
    let outcome = {
        let target = fleet.target(&run.spec, &status, now);
        let windows = fleet.window_facts(&status, upgrade_type, now);
        let upgrades = observe::upgrades(&ctx, &name);
        let gates = observe::gates(&ctx, &name);
        let ready = |member: &str| fleet.readiness(&target, member, now);
        let scheduled = |config: &_| next_scheduled_start(config, now).ok();
        let obs = Observed {
            now,
            run: &name,
            action: run.spec.state.unwrap_or_default(),
            attempt: run.spec.attempt.unwrap_or(0),
            skip: &run.spec.skip,
            windows: &windows,
            upgrades: &upgrades,
            gates: &gates,
            readiness: &ready,
            scheduled_start: &scheduled,
        };
        advance(&mut status, &obs)
    };
    let decided_in = deciding.elapsed();
    // Several at a time: each create waits for its durable write, and concurrent ones share a
    // commit; the pass does not wait for its status write, so its creates are its pace.
    futures::stream::iter(outcome.actions)
        .map(|action| carry_out(&ctx, &run, upgrade_type, action))
        .buffer_unordered(CONCURRENT_ACTIONS)
        .try_collect::<Vec<()>>()
        .await?;
    if let Some(at) = outcome.recheck_at {
        ctx.deadlines.schedule(at, ObjectRef::from_obj(&*run));
    }
    let requeue = record(&ctx, &run, &before, stored, status);
    // Rest as long as deciding took (the view of the fleet, the observations, the pass), so
    // that passes over a large fleet take at most half of the hub's time from the upgrades
    // they start, and more upgrades end between two passes. The run's next reconcile waits.
    tokio::time::sleep(decided_in).await;
    Ok(requeue)
}

/// Lays the run's strategy over the fleet while it has not started (fetching the strategy it
/// names, the first time). Returns false (with the reason in the status) when the strategy
/// cannot be used yet.
async fn prepare(
    ctx: &Context,
    run: &UpdateRun,
    status: &mut UpdateRunStatus,
    fleet: &FleetView<'_>,
    now: Timestamp,
) -> Result<bool, ControllerError> {
    let fetched = match strategy_to_fetch(&run.spec, status) {
        Some(name) => Api::<FleetUpdateStrategy>::all(ctx.client.clone())
            .get_opt(name)
            .await?
            .map(|found| found.spec),
        None => None,
    };
    let strategy = match run_strategy(&run.spec, status, fetched.as_ref()) {
        Ok(strategy) => strategy,
        Err(error) => {
            status.progress.error = Some(ErrorDetail {
                code: INVALID_STRATEGY.to_string(),
                message: error.to_string(),
            });
            return Ok(false);
        }
    };
    match fleet.prepare(&run.spec, status, strategy, now) {
        Ok(()) => {
            status.progress.error = None;
            Ok(true)
        }
        Err(e) => {
            if run.spec.state == Some(RunAction::Run) {
                status.progress.state = UpdateState::Failed;
            }
            status.progress.error = Some(ErrorDetail {
                code: INVALID_STRATEGY.to_string(),
                message: e.to_string(),
            });
            Ok(false)
        }
    }
}

/// The run as owner of what it creates, so deleting it deletes them.
fn owner(run: &UpdateRun) -> OwnerReference {
    run.controller_owner_ref(&())
        .expect("a stored run has a name and uid")
}

/// Carries out one action of a pass; objects that already exist are left as they are.
async fn carry_out(
    ctx: &Context,
    run: &UpdateRun,
    upgrade_type: UpgradeType,
    action: Action,
) -> Result<(), ControllerError> {
    let params = PostParams {
        field_manager: Some(MANAGER.into()),
        ..Default::default()
    };
    let created = match action {
        Action::CreateUpgrade {
            member,
            name,
            order,
        } => {
            let namespace = format!("{MEMBER_NAMESPACE_PREFIX}{member}");
            let upgrade = MemberUpgrade {
                metadata: ObjectMeta {
                    name: Some(name),
                    namespace: Some(namespace.clone()),
                    labels: Some([(UPGRADE_RUN_LABEL.to_string(), run.name_any())].into()),
                    owner_references: Some(vec![owner(run)]),
                    ..Default::default()
                },
                spec: MemberUpgradeSpec {
                    update_run: run.name_any(),
                    upgrade_type,
                    kubernetes_version: order.kubernetes_version,
                    node_images: order.node_images,
                },
                status: None,
            };
            Api::<MemberUpgrade>::namespaced(ctx.client.clone(), &namespace)
                .create(&params, &upgrade)
                .await
                .map(|_| ())
        }
        Action::CreateGate { name, spec } => {
            let gate = Gate {
                metadata: ObjectMeta {
                    name: Some(name.clone()),
                    labels: Some(
                        [(
                            flotilla_api::updates::gate::GATE_RUN_LABEL.to_string(),
                            run.name_any(),
                        )]
                        .into(),
                    ),
                    owner_references: Some(vec![owner(run)]),
                    ..Default::default()
                },
                spec,
                status: None,
            };
            let api = Api::<Gate>::all(ctx.client.clone());
            match api.create(&params, &gate).await {
                Ok(_) => set_gate(&api, &name, GateState::Pending).await,
                Err(e) => Err(e),
            }
        }
        Action::SetGateState { name, state } => {
            set_gate(&Api::<Gate>::all(ctx.client.clone()), &name, state).await
        }
    };
    match created {
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
        other => other.map_err(Into::into),
    }
}

/// Sets a gate's state through its status subresource.
async fn set_gate(api: &Api<Gate>, name: &str, state: GateState) -> Result<(), kube::Error> {
    let status = json!({"status": GateResourceStatus { state }});
    api.patch_status(name, &PatchParams::default(), &Patch::Merge(status))
        .await
        .map(|_| ())
}

/// Records the status a pass reached when it changed (or was never stored), for the run's
/// writer to store, and the events the change is worth ([`crate::run::events`]).
fn record(
    ctx: &Context,
    run: &UpdateRun,
    before: &UpdateRunStatus,
    stored: bool,
    status: UpdateRunStatus,
) -> Requeue {
    if !stored || *before != status {
        let events = crate::run::events::transitions(before, &status);
        if !events.is_empty() {
            let recorder = ctx.recorder.clone();
            let regarding = reference::<UpdateRun>(&run.metadata);
            tokio::spawn(async move {
                for e in events {
                    recorder
                        .record(&regarding, e.warning, e.reason, &e.note, "Update")
                        .await;
                }
            });
        }
        ctx.statuses.record(&ctx.client, run, status);
    }
    Requeue::await_change()
}
