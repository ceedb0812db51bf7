//! The member agent's Work applier: a kube-rs controller over the Works in the member's hub
//! namespace that applies their manifests to the member cluster and reports back, as
//! KubeFleet's work applier does. Every decision is the pure core's ([`crate::work`]); this
//! shell reads, writes and schedules.
//!
//! For each Work:
//!
//! 1. its finalizer [`FINALIZER`] goes on, and the AppliedWork of the same name is ensured on
//!    the member ([`applied_work`]): it owns every object the Work places, so deleting it
//!    removes exactly those. When that fails (the member does not serve AppliedWork yet, the
//!    agent may not write it), the Work's `Applied` condition says why and what to do
//!    ([`crate::setup::explain`]), and the Work is retried after a wait that doubles with each
//!    failure in a row, from 1 s to a minute;
//! 2. the manifests are planned into waves and applied wave by wave (the manifests of one wave
//!    concurrently), each through [`process`]: read, decide, create / three-way merge /
//!    server-side apply / report differences, judge availability;
//! 3. objects the AppliedWork recorded that the Work no longer carries are deleted, or only
//!    disowned when others own them too ([`stale`]);
//! 4. the AppliedWork's `appliedResources` and the Work's status are written, each only if it
//!    changed; a first "applied, awaiting workloads" status is held back for up to
//!    [`hold::SETTLE`] (10 s), so that when the workloads become available meanwhile one
//!    write reports both;
//! 5. the Work is looked at again on the injected clock as [`Pace`] says: quickly, backing
//!    off, while it is not yet applied and available; every minute once it is, so drift made
//!    on the member is noticed.
//!
//! A deleted Work's AppliedWork is deleted in the foreground (the member's garbage collector
//! removes the objects it owns first); once it is gone, the finalizer comes off.
//!
//! The Work watch only wakes the controller for spec changes and deletion (not for the status
//! it writes itself). The member's AppliedWorks are watched for their deletion only (not for
//! the records the applier writes itself), so an AppliedWork deleted on the member is
//! recreated, and a Work's deletion finishes as soon as its AppliedWork is gone. The member's
//! Deployments, StatefulSets and DaemonSets ([`pace::WATCHED_WORKLOADS`]) are watched for
//! flips of their availability ([`AvailabilityFlips`]): a workload a Work placed becoming
//! available brings the Work's check at once, instead of a poll every second while its pods
//! start, or a check for every step of their start; either was most of the applier's load at
//! thousands of members.

mod applied_work;
mod process;
mod stale;

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use flotilla_api::placement::work::{WorkResourceIdentifier, WorkStatus};
use flotilla_api::placement::{AppliedWork, Work};
use flotilla_apiserver::clock::{Clock, Deadlines};
use flotilla_apiserver::metrics::controller::Queue;
use futures::StreamExt;
use futures::future::join_all;
use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use kube::api::{Patch, PatchParams};
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, ResourceExt};
use serde_json::json;
use tokio::task::JoinHandle;

use crate::membership::member_namespace;
use crate::setup;
use crate::work::flips::AvailabilityFlips;
use crate::work::hold::{self, Report};
use crate::work::identifier;
use crate::work::manifest::FIELD_MANAGER;
use crate::work::merge::MemberPatch;
use crate::work::pace::{self, Pace};
use crate::work::{
    AppliedWorkOwner, Availability, ManifestResult, Strategy, applied_resources, availability,
    plan, unrecorded, work_status,
};
use flotilla_apiserver::finalizer;

/// Finalizer the applier keeps on a Work until what it placed is removed from the member
/// (KubeFleet's).
pub const FINALIZER: &str = "kubernetes-fleet.io/work-cleanup";

/// The API group of AppliedWork, which owns every object a Work places.
const APPLIED_WORK_GROUP: &str = "placement.kubernetes-fleet.io/";

/// How long to wait, in real time, before retrying a reconcile that failed on an API call
/// the first time; each further failure in a row doubles it, up to [`RETRY_MAX`].
const RETRY: Duration = Duration::from_secs(1);
/// The longest wait before retrying a Work whose reconciles keep failing.
const RETRY_MAX: Duration = Duration::from_secs(60);

/// The Work applier of one member cluster.
#[derive(Clone)]
pub struct Applier {
    /// The member's name: its Works are in hub namespace `fleet-member-<name>`.
    pub member_name: String,
    /// Client for the hub.
    pub hub: Client,
    /// Client for the member cluster's API.
    pub member: Client,
    /// The clock the applier's checks follow.
    pub clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for Applier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Applier")
            .field("member_name", &self.member_name)
            .finish_non_exhaustive()
    }
}

/// A running applier; dropping it stops the applier.
#[derive(Debug)]
pub struct Running(JoinHandle<()>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Why one reconcile of a Work failed (it is retried).
#[derive(Debug, thiserror::Error)]
enum ApplierError {
    /// A hub API call failed.
    #[error("hub API: {0}")]
    Hub(#[source] kube::Error),
    /// A member API call about the Work's AppliedWork failed.
    #[error("member API: {0}")]
    Member(#[source] kube::Error),
}

/// The pace of the checks of one Work, and when the next is due.
#[derive(Debug, Clone, Copy)]
struct Tracked {
    /// The Work generation the pace was set for.
    generation: Option<i64>,
    pace: Pace,
    /// When the check last scheduled is due.
    due: Timestamp,
    /// When the hold of the Work's computed status ends, while one is held ([`hold`]).
    held_until: Option<Timestamp>,
}

struct Context {
    hub: Client,
    member: Client,
    namespace: String,
    clock: Arc<dyn Clock>,
    deadlines: Deadlines<ObjectRef<Work>>,
    tracked: Mutex<HashMap<String, Tracked>>,
    /// Failed reconciles in a row, by Work name, for the retry back-off.
    failures: Mutex<HashMap<String, u32>>,
}

impl Context {
    /// How the checks of the Work `name` are tracked, if they are.
    fn tracked(&self, name: &str) -> Option<Tracked> {
        self.tracked
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .copied()
    }
}

impl Applier {
    /// Starts the applier as a task; it runs until the returned handle is dropped.
    pub fn spawn(self) -> Running {
        Running(tokio::spawn(self.run()))
    }

    /// Runs the applier until the hub's Work watch ends.
    pub async fn run(self) {
        let namespace = member_namespace(&self.member_name);
        let (deadlines, due) = Deadlines::new(self.clock.clone());
        let works: Api<Work> = Api::namespaced(self.hub.clone(), &namespace);
        let (reader, writer) = reflector::store();
        let triggers = watcher(works, watcher::Config::default())
            .default_backoff()
            .reflect(writer)
            .applied_objects()
            .predicate_filter(spec_or_deletion, Default::default());
        let member = self.member.clone();
        let work_namespace = namespace.clone();
        let namespace_of_works = namespace.clone();
        let ctx = Arc::new(Context {
            hub: self.hub,
            member: self.member,
            namespace,
            clock: self.clock,
            deadlines,
            tracked: Mutex::default(),
            failures: Mutex::default(),
        });
        let queue = Queue::new("work-applier");
        let results = Controller::for_stream(queue.watched(triggers), reader)
            .watches_stream(
                Queue::watching(applied_work_deletions(&member)),
                queue.mapped(move |aw: AppliedWork| {
                    (aw.spec.work_namespace == work_namespace)
                        .then(|| ObjectRef::new(&aw.spec.work_name).within(&work_namespace))
                }),
            )
            .watches_stream(
                Queue::watching(availability_flips::<Deployment>(&member)),
                queue.mapped(placed_by(namespace_of_works.clone())),
            )
            .watches_stream(
                Queue::watching(availability_flips::<StatefulSet>(&member)),
                queue.mapped(placed_by(namespace_of_works.clone())),
            )
            .watches_stream(
                Queue::watching(availability_flips::<DaemonSet>(&member)),
                queue.mapped(placed_by(namespace_of_works)),
            )
            .reconcile_on(queue.triggered(due))
            .run(queue.instrument(reconcile), error_policy, ctx);
        queue.drive(results).await;
    }
}

/// The member's AppliedWorks being deleted or gone: an AppliedWork deleted on the member is
/// recreated, and a deleted Work lets go once its AppliedWork is gone. Their other changes
/// are the applier's own records and wake nothing.
fn applied_work_deletions(
    member: &Client,
) -> impl futures::Stream<Item = Result<AppliedWork, watcher::Error>> + Send + 'static {
    watcher(
        Api::<AppliedWork>::all(member.clone()),
        watcher::Config::default(),
    )
    .default_backoff()
    .filter_map(|event| {
        futures::future::ready(match event {
            Ok(watcher::Event::Delete(aw)) => Some(Ok(aw)),
            Ok(watcher::Event::Apply(aw) | watcher::Event::InitApply(aw))
                if aw.metadata.deletion_timestamp.is_some() =>
            {
                Some(Ok(aw))
            }
            Ok(_) => None,
            Err(e) => Some(Err(e)),
        })
    })
}

/// The member's objects of kind `K` (one of [`pace::WATCHED_WORKLOADS`]) whose availability
/// flipped ([`AvailabilityFlips`]): a workload placed by a Work becoming available, or no
/// longer, brings the Work's next check at once.
fn availability_flips<K>(
    member: &Client,
) -> impl futures::Stream<Item = Result<K, watcher::Error>> + Send + 'static
where
    K: kube::Resource<DynamicType = ()>
        + Clone
        + serde::Serialize
        + serde::de::DeserializeOwned
        + std::fmt::Debug
        + Send
        + 'static,
{
    let mut flips = AvailabilityFlips::default();
    watcher(Api::<K>::all(member.clone()), watcher::Config::default())
        .default_backoff()
        .filter_map(move |event| {
            let flipped = match event {
                Ok(watcher::Event::Apply(object) | watcher::Event::InitApply(object)) => {
                    let available = serde_json::to_value(&object)
                        .is_ok_and(|value| matches!(availability(&value), Availability::Available));
                    let uid = object.meta().uid.as_deref().unwrap_or_default();
                    flips.observe(uid, available).then_some(Ok(object))
                }
                Ok(watcher::Event::Delete(object)) => {
                    flips.forget(object.meta().uid.as_deref().unwrap_or_default());
                    None
                }
                Ok(watcher::Event::Init) => {
                    flips.relist_started();
                    None
                }
                Ok(watcher::Event::InitDone) => {
                    flips.relist_done();
                    None
                }
                Err(e) => Some(Err(e)),
            };
            futures::future::ready(flipped)
        })
}

/// Maps a member object to the Work of hub namespace `namespace` that placed it: the Work
/// named as the AppliedWork that owns it.
fn placed_by<K: kube::Resource>(
    namespace: String,
) -> impl Fn(K) -> Vec<ObjectRef<Work>> + Send + Sync + 'static {
    move |object| {
        object
            .owner_references()
            .iter()
            .filter(|o| o.kind == "AppliedWork" && o.api_version.starts_with(APPLIED_WORK_GROUP))
            .map(|o| ObjectRef::new(&o.name).within(&namespace))
            .collect()
    }
}

/// What of a Work wakes the controller: its spec (generation) and its deletion, not the
/// status the applier writes itself.
fn spec_or_deletion(work: &Work) -> Option<u64> {
    let mut hasher = DefaultHasher::new();
    (
        work.metadata.generation,
        work.metadata.deletion_timestamp.is_some(),
    )
        .hash(&mut hasher);
    Some(hasher.finish())
}

/// Retries a failed reconcile after [`retry_after`] the failures in a row so far.
fn error_policy(work: Arc<Work>, error: &ApplierError, ctx: Arc<Context>) -> Action {
    let name = work.name_any();
    let mut failures = ctx.failures.lock().unwrap_or_else(|e| e.into_inner());
    let count = failures.entry(name.clone()).or_default();
    *count = count.saturating_add(1);
    let wait = retry_after(*count);
    tracing::warn!(work = %name, %error, retry_in = ?wait, "work applier: reconcile failed");
    Action::requeue(wait)
}

/// The wait before retrying after `failures` failed reconciles in a row: [`RETRY`],
/// doubling, at most [`RETRY_MAX`].
fn retry_after(failures: u32) -> Duration {
    RETRY
        .saturating_mul(1 << failures.saturating_sub(1).min(16))
        .min(RETRY_MAX)
}

async fn reconcile(work: Arc<Work>, ctx: Arc<Context>) -> Result<Action, ApplierError> {
    let result = if work.metadata.deletion_timestamp.is_some() {
        remove(&work, &ctx).await
    } else {
        apply(&work, &ctx).await
    };
    if result.is_ok() {
        ctx.failures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&work.name_any());
    }
    result
}

/// Applies a Work and reports its status (see the module docs).
async fn apply(work: &Work, ctx: &Context) -> Result<Action, ApplierError> {
    let works: Api<Work> = Api::namespaced(ctx.hub.clone(), &ctx.namespace);
    let stored;
    let work = if finalizer::has(work, FINALIZER) {
        work
    } else {
        stored = finalizer::ensure(&works, work, FINALIZER)
            .await
            .map_err(ApplierError::Hub)?;
        &stored
    };
    let name = work.name_any();
    let strategy = Strategy::of(work.spec.apply_strategy.as_ref());
    let recorded = match applied_work::ensure(&ctx.member, &name, &ctx.namespace).await {
        Ok(recorded) => recorded,
        Err(error) => {
            report_unrecorded(&works, work, strategy, &error, ctx).await?;
            return Err(ApplierError::Member(error));
        }
    };
    if recorded.metadata.deletion_timestamp.is_some() {
        // Deleted on the member: recreated once it is gone (its watch event wakes us).
        check_again(work, ctx, pace::Progress::Unsettled, None);
        return Ok(Action::await_change());
    }
    let owner = AppliedWorkOwner {
        name: name.clone(),
        uid: recorded.metadata.uid.clone().unwrap_or_default(),
    };
    let plan = plan(&work.spec.workload.manifests);
    let mut results: Vec<ManifestResult> =
        plan.rejected.iter().map(ManifestResult::rejected).collect();
    for wave in &plan.waves {
        let applying = wave
            .manifests
            .iter()
            .map(|planned| process::process(&ctx.member, planned, strategy, &owner));
        results.extend(join_all(applying).await);
    }
    crate::metrics::applied(&results);

    let previous = recorded
        .status
        .clone()
        .unwrap_or_default()
        .applied_resources;
    let mut resources = applied_resources(&previous, &results);
    let stale = crate::work::stale(&previous, &plan);
    resources.extend(stale::release_all(&ctx.member, stale, &owner).await);
    applied_work::record(&ctx.member, &recorded, resources)
        .await
        .map_err(ApplierError::Member)?;

    // Status times have second precision, as stored, so an unchanged status compares equal.
    let now = Timestamp::from_second(ctx.clock.now().as_second()).unwrap_or(Timestamp::UNIX_EPOCH);
    let before = work.status.clone().unwrap_or_default();
    let status = work_status(
        &before,
        work.metadata.generation.unwrap_or(0),
        strategy,
        &results,
        now,
    );
    let held_until = ctx.tracked(&name).and_then(|t| t.held_until);
    let report = hold::report(&before, &status, held_until, ctx.clock.now());
    if report == Report::Write {
        write_status(&works, &name, &status)
            .await
            .map_err(ApplierError::Hub)?;
    }
    let held_until = match report {
        Report::HoldUntil(until) => Some(until),
        Report::Write | Report::Unchanged => None,
    };
    check_again(work, ctx, pace::progress(&status), held_until);
    Ok(Action::await_change())
}

/// Reports in the Work's status that its AppliedWork could not be recorded on the member
/// (`error`), saying why and what to do ([`setup::explain`]), if the status does not say so
/// already.
async fn report_unrecorded(
    works: &Api<Work>,
    work: &Work,
    strategy: Strategy,
    error: &kube::Error,
    ctx: &Context,
) -> Result<(), ApplierError> {
    let code = setup::status_code(error);
    let step = format!(
        "record this Work as AppliedWork {} on the member",
        work.name_any()
    );
    let message = setup::explain(&step, code, &setup::api_message(error));
    let now = Timestamp::from_second(ctx.clock.now().as_second()).unwrap_or(Timestamp::UNIX_EPOCH);
    let before = work.status.clone().unwrap_or_default();
    let status = unrecorded(
        &before,
        work.metadata.generation.unwrap_or(0),
        strategy,
        message,
        now,
    );
    if status != before {
        write_status(works, &work.name_any(), &status)
            .await
            .map_err(ApplierError::Hub)?;
    }
    Ok(())
}

/// Writes a Work's status (the status subresource), replacing both lists.
async fn write_status(
    works: &Api<Work>,
    name: &str,
    status: &WorkStatus,
) -> Result<(), kube::Error> {
    let patch = json!({"status": {
        "conditions": status.conditions,
        "manifestConditions": status.manifest_conditions,
    }});
    works
        .patch_status(name, &PatchParams::default(), &Patch::Merge(patch))
        .await
        .map(drop)
}

/// A deleted Work: deletes its AppliedWork in the foreground, waits until it is gone, then
/// removes the finalizer.
async fn remove(work: &Work, ctx: &Context) -> Result<Action, ApplierError> {
    if !finalizer::has(work, FINALIZER) {
        return Ok(Action::await_change());
    }
    let name = work.name_any();
    if applied_work::delete(&ctx.member, &name)
        .await
        .map_err(ApplierError::Member)?
    {
        // Still there: its deletion wakes us through the AppliedWork watch; the clock is the
        // backstop.
        check_again(work, ctx, pace::Progress::Unsettled, None);
        return Ok(Action::await_change());
    }
    let works: Api<Work> = Api::namespaced(ctx.hub.clone(), &ctx.namespace);
    match finalizer::remove(&works, work, FINALIZER).await {
        Ok(_) => {}
        Err(kube::Error::Api(e)) if e.code == 404 => {}
        Err(e) => return Err(ApplierError::Hub(e)),
    }
    ctx.tracked
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&name);
    tracing::info!(work = %name, "work applier: work removed from the member");
    Ok(Action::await_change())
}

/// Schedules the next check of `work` on the clock, at the pace its state calls for
/// ([`pace::next_check`]), and no later than the end of the hold of its status, if one is
/// held.
fn check_again(
    work: &Work,
    ctx: &Context,
    progress: pace::Progress,
    held_until: Option<Timestamp>,
) {
    let now = ctx.clock.now();
    let generation = work.metadata.generation;
    let mut tracked = ctx.tracked.lock().unwrap_or_else(|e| e.into_inner());
    let previous = tracked.get(&work.name_any()).copied();
    let same_spec = previous.filter(|p| p.generation == generation);
    let pace = Pace::next(same_spec.map(|p| p.pace), progress);
    let (due, new) = pace::next_check(previous.map(|p| p.due), now, pace, held_until);
    if new {
        ctx.deadlines.schedule(due, ObjectRef::from_obj(work));
    }
    tracked.insert(
        work.name_any(),
        Tracked {
            generation,
            pace,
            due,
            held_until,
        },
    );
}

/// The member API of the object a manifest names: namespaced iff the manifest has a namespace.
fn member_api(member: &Client, id: &WorkResourceIdentifier) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk(&id.group, &id.version, &id.kind);
    let resource = ApiResource::from_gvk_with_plural(&gvk, &id.resource);
    if id.namespace.is_empty() {
        Api::all_with(member.clone(), &resource)
    } else {
        Api::namespaced_with(member.clone(), &id.namespace, &resource)
    }
}

/// Sends a computed patch to the member object `name`, as the agent's field manager.
async fn send(
    api: &Api<DynamicObject>,
    name: &str,
    patch: &MemberPatch,
) -> Result<DynamicObject, kube::Error> {
    let body = match patch {
        MemberPatch::Strategic(body) => Patch::Strategic(body),
        MemberPatch::Merge(body) => Patch::Merge(body),
    };
    let params = PatchParams {
        field_manager: Some(FIELD_MANAGER.to_owned()),
        ..PatchParams::default()
    };
    api.patch(name, &params, &body).await
}

/// A member API failure as a manifest's message: what was being done, and the API's answer.
fn failure(doing: &str, id: &WorkResourceIdentifier, error: &kube::Error) -> String {
    let answer = match error {
        kube::Error::Api(status) => {
            format!("{} ({} {})", status.message, status.code, status.reason)
        }
        other => other.to_string(),
    };
    format!(
        "{doing} {} on the member cluster failed: {answer}",
        identifier::describe(id)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::Resource;

    /// The applier watches exactly the kinds whose Works `pace` lets back off.
    #[test]
    fn the_watched_workloads_are_those_pace_counts_on() {
        let watched = [
            (Deployment::group(&()), Deployment::kind(&())),
            (StatefulSet::group(&()), StatefulSet::kind(&())),
            (DaemonSet::group(&()), DaemonSet::kind(&())),
        ];
        assert_eq!(
            watched.map(|(group, kind)| (group.into_owned(), kind.into_owned())),
            pace::WATCHED_WORKLOADS.map(|(group, kind)| (group.to_owned(), kind.to_owned()))
        );
    }

    #[test]
    fn retries_back_off_from_a_second_to_a_minute() {
        let waits: Vec<u64> = (1..=9).map(|n| retry_after(n).as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 32, 60, 60, 60]);
        assert_eq!(retry_after(u32::MAX), RETRY_MAX);
    }
}
