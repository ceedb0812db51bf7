//! The auto-upgrade profile controller: one reconcile per `AutoUpgradeProfile` evaluates it
//! ([`crate::auto_upgrade::evaluate`]) over the release catalog and the fleet's members,
//! creates the run a new release calls for (a run that already exists under the generated
//! name is the same run), and writes the status once. It is woken by its profile, any change
//! to the catalog or the members, and when the next release reaches a region.

use std::sync::Arc;

use flotilla_api::cluster::MemberCluster;
use flotilla_api::updates::auto_upgrade::{AUTO_UPGRADE_PROFILE_LABEL, AutoUpgradeProfileStatus};
use flotilla_api::updates::{
    AutoUpgradeProfile, KubernetesVersion, LONG_TERM_SUPPORT_LABEL, NodeImageVersion, UpdateRun,
};
use flotilla_apiserver::clock::{Clock, Deadlines};
use flotilla_apiserver::metrics::controller::Queue;
use futures::FutureExt;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::PostParams;
use kube::runtime::controller::Action;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Api, Client, ResourceExt};

use super::{ControllerError, MANAGER, cached, cached_members, caches_ready, error_policy};
use crate::auto_upgrade::{GeneratedRun, evaluate, failed_trigger};
use crate::release::{Catalog, KubeVersion, MemberVersion};

/// What every profile reconcile shares.
struct Context {
    client: Client,
    clock: Arc<dyn Clock>,
    deadlines: Deadlines<ObjectRef<AutoUpgradeProfile>>,
    members: Store<MemberCluster>,
    kubernetes: Store<KubernetesVersion>,
    images: Store<NodeImageVersion>,
}

/// Runs the profile controller until the client's API goes away.
pub(crate) async fn run(client: Client, clock: Arc<dyn Clock>) {
    let (deadlines, due) = Deadlines::new(clock.clone());
    let (members, member_events) = cached_members(&client);
    let (kubernetes, kubernetes_events) = cached::<KubernetesVersion>(&client);
    let (images, image_events) = cached::<NodeImageVersion>(&client);
    let queue = Queue::new("autoupgradeprofile");
    let controller = queue.controller(
        Api::<AutoUpgradeProfile>::all(client.clone()),
        watcher::Config::default(),
    );
    let profiles = controller.store();
    let ctx = Arc::new(Context {
        client,
        clock,
        deadlines,
        members,
        kubernetes,
        images,
    });
    let results = controller
        .watches_stream(
            Queue::watching(member_events),
            queue.mapped(every(profiles.clone())),
        )
        .watches_stream(
            Queue::watching(kubernetes_events),
            queue.mapped(every(profiles.clone())),
        )
        .watches_stream(Queue::watching(image_events), queue.mapped(every(profiles)))
        .reconcile_on(queue.triggered(due))
        .run(queue.instrument(reconcile), error_policy, ctx);
    queue.drive(results).await;
}

/// A mapper from any change of the catalog or the fleet to every profile.
fn every<K>(
    profiles: Store<AutoUpgradeProfile>,
) -> impl Fn(K) -> Vec<ObjectRef<AutoUpgradeProfile>> + Send + Sync + 'static {
    move |_| {
        profiles
            .state()
            .iter()
            .map(|p| ObjectRef::from_obj(&**p))
            .collect()
    }
}

/// Evaluates one profile, creates the run it generates, and records the outcome.
async fn reconcile(
    profile: Arc<AutoUpgradeProfile>,
    ctx: Arc<Context>,
) -> Result<Action, ControllerError> {
    if profile.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let ready = caches_ready(vec![
        ctx.kubernetes.wait_until_ready().boxed(),
        ctx.images.wait_until_ready().boxed(),
        ctx.members.wait_until_ready().boxed(),
    ]);
    if !ready.await {
        return Ok(Action::await_change());
    }
    let now = ctx.clock.now();
    let name = profile.name_any();
    let before = profile.status.clone().unwrap_or_default();
    let kubernetes = ctx.kubernetes.state();
    let images = ctx.images.state();
    let catalog = Catalog::new(
        kubernetes.iter().map(|k| &k.spec),
        images.iter().map(|i| &i.spec),
    );
    let members = ctx.members.state();
    let versions = members.iter().filter_map(|m| {
        let reported = m.status.as_ref()?.versions.as_ref()?;
        Some(MemberVersion {
            name: m.metadata.name.as_deref()?,
            version: KubeVersion::parse(&reported.kubernetes_version).ok()?,
            long_term_support: m
                .labels()
                .get(LONG_TERM_SUPPORT_LABEL)
                .is_some_and(|v| v == "true"),
        })
    });
    let evaluation = evaluate(&name, &profile.spec, &before, &catalog, versions, now);
    let mut status = evaluation.status;
    if let Some(run) = &evaluation.generate
        && let Err(e) = create(&ctx, &name, run).await
    {
        status = failed_trigger(&before, &status, &run.name, &e.to_string(), now);
    }
    if let Some(at) = evaluation.recheck_at {
        ctx.deadlines.schedule(at, ObjectRef::from_obj(&*profile));
    }
    write(&ctx, &profile, &before, status).await
}

/// Creates (and so starts) a generated run; one that already exists is the same run.
async fn create(ctx: &Context, profile: &str, run: &GeneratedRun) -> Result<(), kube::Error> {
    let object = UpdateRun {
        metadata: ObjectMeta {
            name: Some(run.name.clone()),
            labels: Some([(AUTO_UPGRADE_PROFILE_LABEL.to_string(), profile.to_string())].into()),
            ..Default::default()
        },
        spec: run.spec.clone(),
        status: None,
    };
    let params = PostParams {
        field_manager: Some(MANAGER.into()),
        ..Default::default()
    };
    match Api::<UpdateRun>::all(ctx.client.clone())
        .create(&params, &object)
        .await
    {
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
        other => other.map(|_| ()),
    }
}

/// Writes the status when it changed, as one replace at the version read.
async fn write(
    ctx: &Context,
    profile: &AutoUpgradeProfile,
    before: &AutoUpgradeProfileStatus,
    status: AutoUpgradeProfileStatus,
) -> Result<Action, ControllerError> {
    if profile.status.is_some() && *before == status {
        return Ok(Action::await_change());
    }
    let mut updated = profile.clone();
    updated.status = Some(status);
    Api::<AutoUpgradeProfile>::all(ctx.client.clone())
        .replace_status(&profile.name_any(), &PostParams::default(), &updated)
        .await?;
    Ok(Action::await_change())
}
