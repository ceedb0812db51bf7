//! One reconcile of an `UpdateRun`: plan it while it has not started, run a pass, carry out
//! the pass's actions, write the status once.

use std::collections::BTreeMap;
use std::sync::Arc;

use flotilla_api::cluster::member_cluster::MEMBER_NAMESPACE_PREFIX;
use flotilla_api::updates::gate::{GateResourceStatus, GateState};
use flotilla_api::updates::member_upgrade::{MemberUpgradeSpec, UPGRADE_RUN_LABEL};
use flotilla_api::updates::update_run::{
    ErrorDetail, NodeImageSelectionType, NodeImageVersionRef, RunAction, SelectedNodeImages,
    UpdateRunStatus, UpdateState, UpgradeType,
};
use flotilla_api::updates::{FleetUpdateStrategy, Gate, MemberUpgrade, UpdateRun};
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::{Patch, PatchParams, PostParams};
use kube::runtime::controller::Action as Requeue;
use kube::runtime::reflector::ObjectRef;
use kube::{Api, Resource, ResourceExt};
use serde_json::json;

use super::observe::{self, Members};
use super::{Context, ControllerError, MANAGER};
use crate::release::{Catalog, KubeVersion, KubernetesTarget, NodeImage};
use crate::run::init::{implicit_strategy, plan};
use crate::run::{Action, Observed, advance};
use crate::target::{RunTarget, readiness};
use crate::window::next_scheduled_start;

/// Error code of a run whose strategy cannot be used.
pub const INVALID_STRATEGY: &str = "InvalidStrategy";

/// Plans, advances and records one run.
pub(crate) async fn reconcile(
    run: Arc<UpdateRun>,
    ctx: Arc<Context>,
) -> Result<Requeue, ControllerError> {
    if run.metadata.deletion_timestamp.is_some() {
        return Ok(Requeue::await_change());
    }
    let now = ctx.clock.now();
    let name = run.name_any();
    let before = run.status.clone().unwrap_or_default();
    let mut status = before.clone();
    let members = Members::of(&ctx);
    let kubernetes = ctx.kubernetes.state();
    let images = ctx.images.state();
    let catalog = Catalog::new(
        kubernetes.iter().map(|k| &k.spec),
        images.iter().map(|i| &i.spec),
    );
    let update = &run.spec.managed_cluster_update;
    let selection = update
        .node_image_selection
        .as_ref()
        .map(|s| s.selection_type)
        .unwrap_or_default();
    if status.progress.state == UpdateState::NotStarted {
        if !prepare(&ctx, &run, &mut status, &members).await? {
            return write(&ctx, &run, &before, status).await;
        }
        if selection == NodeImageSelectionType::Consistent {
            let usage = members.image_usage(&status);
            let chosen =
                catalog.consistent_images(usage.iter().map(|(r, f)| (r.as_str(), f.as_str())), now);
            status.node_image_selection = Some(SelectedNodeImages {
                selected_node_image_versions: chosen
                    .values()
                    .flatten()
                    .map(|image| NodeImageVersionRef {
                        version: image.to_string(),
                    })
                    .collect(),
            });
        }
    }
    let target = RunTarget {
        upgrade_type: update.upgrade.upgrade_type,
        kubernetes: kubernetes_target(&catalog, update.upgrade.kubernetes_version.as_deref(), now),
        selection,
        images: chosen_images(&run, &status, selection),
        catalog: &catalog,
    };
    let outcome = {
        let windows = observe::windows(&ctx, &status, update.upgrade.upgrade_type, now);
        let upgrades = observe::upgrades(&ctx, &name);
        let gates = observe::gates(&ctx, &name);
        let ready = |member: &str| match members.facts(member) {
            Some(facts) => readiness(&target, &facts, now),
            None => crate::run::Readiness::Skip("the member has left the fleet".to_string()),
        };
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
    for action in outcome.actions {
        carry_out(&ctx, &run, update.upgrade.upgrade_type, action).await?;
    }
    if let Some(at) = outcome.recheck_at {
        ctx.deadlines.schedule(at, ObjectRef::from_obj(&*run));
    }
    write(&ctx, &run, &before, status).await
}

/// Lays the run's strategy over the fleet while it has not started. Returns false (with the
/// reason in the status) when the strategy cannot be used yet.
async fn prepare(
    ctx: &Context,
    run: &UpdateRun,
    status: &mut UpdateRunStatus,
    members: &Members,
) -> Result<bool, ControllerError> {
    let strategy = match (&run.spec.strategy, &run.spec.update_strategy_name) {
        (Some(inline), _) => inline.clone(),
        (None, Some(name)) => match &status.strategy {
            Some(copied) => copied.clone(),
            None => {
                let api = Api::<FleetUpdateStrategy>::all(ctx.client.clone());
                match api.get_opt(name).await? {
                    Some(found) => found.spec,
                    None => {
                        status.progress.error = Some(ErrorDetail {
                            code: INVALID_STRATEGY.to_string(),
                            message: format!("FleetUpdateStrategy {name} not found"),
                        });
                        return Ok(false);
                    }
                }
            }
        },
        (None, None) => implicit_strategy(),
    };
    status.strategy = Some(strategy.clone());
    match plan(&strategy, &members.plan()) {
        Ok(stages) => {
            status.stages = stages;
            status.progress.error = None;
            Ok(true)
        }
        Err(e) => {
            let failed = run.spec.state == Some(RunAction::Run);
            if failed {
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

/// The run's Kubernetes target, judged against the support window now.
fn kubernetes_target(
    catalog: &Catalog,
    version: Option<&str>,
    now: Timestamp,
) -> Option<KubernetesTarget> {
    let version = KubeVersion::parse(version?).ok()?;
    Some(match catalog.support_window(now) {
        Some(window) => KubernetesTarget::new(version, &window),
        None => KubernetesTarget {
            version,
            requires_long_term_support: false,
        },
    })
}

/// Per family, the image a Consistent or Custom run upgrades to.
fn chosen_images(
    run: &UpdateRun,
    status: &UpdateRunStatus,
    selection: NodeImageSelectionType,
) -> BTreeMap<String, Option<NodeImage>> {
    let listed: Vec<&NodeImageVersionRef> = match selection {
        NodeImageSelectionType::Latest => Vec::new(),
        NodeImageSelectionType::Consistent => status
            .node_image_selection
            .iter()
            .flat_map(|s| &s.selected_node_image_versions)
            .collect(),
        NodeImageSelectionType::Custom => run
            .spec
            .managed_cluster_update
            .node_image_selection
            .iter()
            .flat_map(|s| &s.custom_node_image_versions)
            .collect(),
    };
    listed
        .into_iter()
        .filter_map(|r| NodeImage::parse(&r.version).ok())
        .map(|image| (image.family.clone(), Some(image)))
        .collect()
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

/// Writes the status when it changed, as one replace at the version read.
async fn write(
    ctx: &Context,
    run: &UpdateRun,
    before: &UpdateRunStatus,
    status: UpdateRunStatus,
) -> Result<Requeue, ControllerError> {
    if run.status.is_some() && *before == status {
        return Ok(Requeue::await_change());
    }
    let mut updated = run.clone();
    updated.status = Some(status);
    let api = Api::<UpdateRun>::all(ctx.client.clone());
    api.replace_status(&run.name_any(), &PostParams::default(), &updated)
        .await?;
    Ok(Requeue::await_change())
}
