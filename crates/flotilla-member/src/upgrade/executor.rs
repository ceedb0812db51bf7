//! The upgrade executor: watches the MemberUpgrades in the member's hub namespace and carries
//! them out through the [`Provider`], one at a time, oldest first (a `Running` one, left by a
//! previous agent, before any `Pending` one). For each: `Running` with `startTime`, then each
//! step of the [`plan`] with its message and `done/total` progress, then `Succeeded` with
//! `completedTime` or `Failed` with the provider's error. Every status write is a merge patch
//! of the status subresource. A step is announced (`Running` with its message) once it has
//! taken [`Executor::announce_after`]; a step done sooner is covered by the next write, so an
//! upgrade whose steps take no noticeable time (nothing to do, or a provider that answers at
//! once) costs one status write rather than one per step, while every step a person could
//! watch is shown. Afterwards the agent's report of what the member runs (`status.versions` of its
//! InternalMemberCluster) is refreshed at once rather than at the next heartbeat.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use flotilla_api::cluster::InternalMemberCluster;
use flotilla_api::updates::{MemberUpgrade, UpgradePhase};
use flotilla_apiserver::clock::{Clock, rfc3339};
use futures::StreamExt;
use kube::api::{Patch, PatchParams};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, ResourceExt};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use super::plan::{Plan, Step, plan};
use super::provider::{Provider, ProviderError};
use crate::membership::member_namespace;

/// How long to wait, in real time, before retrying after a failed hub write.
const RETRY: Duration = Duration::from_secs(1);

/// The agent's [`Executor::announce_after`]: shorter than anyone could read a status, long
/// enough that instant steps cost no hub write.
pub const ANNOUNCE_AFTER: Duration = Duration::from_millis(20);

/// Orders the writes of a member's reported versions (`status.versions` of its
/// InternalMemberCluster). The agent's heartbeat and the executor both read the provider's
/// versions and write them; each holds a turn from its read to the end of its write, so a
/// heartbeat that read the versions before a step finished cannot write them after the
/// executor's fresher report (which, until the next heartbeat, would leave the hub showing
/// what the member ran before).
#[derive(Clone, Default, Debug)]
pub struct VersionReports(Arc<tokio::sync::Mutex<()>>);

impl VersionReports {
    /// Waits for the turn to read and write the versions; it lasts while the guard lives.
    pub async fn turn(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.0.lock().await
    }
}

/// Carries out one member's MemberUpgrades.
#[derive(Clone)]
pub struct Executor {
    /// The member's name: its MemberUpgrades are in hub namespace `fleet-member-<name>`.
    pub member_name: String,
    /// Client for the hub.
    pub hub: Client,
    /// What changes the member cluster.
    pub provider: Arc<dyn Provider>,
    /// The clock status times are read from.
    pub clock: Arc<dyn Clock>,
    /// How long, in real time, a step runs before its start is written to the upgrade's
    /// status ([`ANNOUNCE_AFTER`] in the agent).
    pub announce_after: Duration,
    /// Shared with the agent's heartbeat, which reports the versions too.
    pub version_reports: VersionReports,
}

impl std::fmt::Debug for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor")
            .field("member_name", &self.member_name)
            .finish_non_exhaustive()
    }
}

/// A running executor; dropping it stops the executor and the upgrade it was carrying out
/// (a later executor resumes that upgrade).
#[derive(Debug)]
pub struct Running(JoinHandle<()>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// One upgrade being carried out, stopped when dropped.
struct InFlight {
    name: String,
    task: JoinHandle<Result<(), kube::Error>>,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The upgrade to carry out next: a `Running` one (resumed) before any `Pending` one, oldest
/// first (by creation time, then name). `ended` is the upgrade this executor last carried to
/// its end while the watch has not yet shown that end: its cached copy still says `Running`,
/// but carrying it out again would plan afresh from the member as it is now and overwrite the
/// final status (with a different count of steps, say, while a node is being replaced).
pub fn next_upgrade<'a>(
    upgrades: impl IntoIterator<Item = &'a MemberUpgrade>,
    ended: Option<&str>,
) -> Option<&'a MemberUpgrade> {
    upgrades
        .into_iter()
        .filter(|u| u.metadata.deletion_timestamp.is_none())
        .filter(|u| ended != u.metadata.name.as_deref())
        .filter_map(|u| {
            let rank = match phase(u) {
                UpgradePhase::Running => 0,
                UpgradePhase::Pending => 1,
                UpgradePhase::Succeeded | UpgradePhase::Failed => return None,
            };
            Some((rank, u.metadata.creation_timestamp.clone(), u.name_any(), u))
        })
        .min_by(|a, b| (a.0, &a.1, &a.2).cmp(&(b.0, &b.1, &b.2)))
        .map(|(.., u)| u)
}

/// How an upgrade ended.
enum Outcome {
    /// Every step is done.
    Succeeded { total: usize, summary: String },
    /// Planning or a step failed: the message, and the progress when a step failed.
    Failed {
        message: String,
        progress: Option<String>,
    },
}

/// Merges `status` into the status of MemberUpgrade `name`.
async fn write_status(
    api: &Api<MemberUpgrade>,
    name: &str,
    status: Value,
) -> Result<(), kube::Error> {
    let patch = Patch::Merge(json!({ "status": status }));
    api.patch_status(name, &PatchParams::default(), &patch)
        .await
        .map(drop)
}

/// Clears `ended` once the watch shows that upgrade `Succeeded` or `Failed`.
fn forget_if_seen_ended(ended: &mut Option<String>, seen: &MemberUpgrade) {
    let finished = matches!(phase(seen), UpgradePhase::Succeeded | UpgradePhase::Failed);
    if finished && ended.as_deref() == seen.metadata.name.as_deref() {
        *ended = None;
    }
}

fn phase(upgrade: &MemberUpgrade) -> UpgradePhase {
    upgrade.status.as_ref().map(|s| s.phase).unwrap_or_default()
}

impl Executor {
    /// Runs the executor in a task of its own.
    pub fn spawn(self) -> Running {
        Running(tokio::spawn(self.run()))
    }

    /// Runs the executor until its hub watch ends.
    pub async fn run(self) {
        let namespace = member_namespace(&self.member_name);
        let api: Api<MemberUpgrade> = Api::namespaced(self.hub.clone(), &namespace);
        let mut events =
            Box::pin(watcher(api.clone(), watcher::Config::default()).default_backoff());
        let mut upgrades: BTreeMap<String, MemberUpgrade> = BTreeMap::new();
        // Until the first listing is complete, a Running upgrade may not have been seen yet.
        let mut listing = BTreeMap::new();
        let mut synced = false;
        let mut current: Option<InFlight> = None;
        // The upgrade last carried to its end, until the watch shows it ended.
        let mut ended: Option<String> = None;
        let mut retry = false;
        loop {
            if current.is_none() && synced && !retry {
                current = next_upgrade(upgrades.values(), ended.as_deref()).map(|u| InFlight {
                    name: u.name_any(),
                    task: tokio::spawn(self.clone().execute(api.clone(), u.clone())),
                });
            }
            tokio::select! {
                event = events.next() => match event {
                    Some(Ok(watcher::Event::Init)) => listing.clear(),
                    Some(Ok(watcher::Event::InitApply(u))) => {
                        forget_if_seen_ended(&mut ended, &u);
                        listing.insert(u.name_any(), u);
                    }
                    Some(Ok(watcher::Event::InitDone)) => {
                        upgrades = std::mem::take(&mut listing);
                        synced = true;
                        if current.as_ref().is_some_and(|c| !upgrades.contains_key(&c.name)) {
                            current = None;
                        }
                    }
                    Some(Ok(watcher::Event::Apply(u))) => {
                        forget_if_seen_ended(&mut ended, &u);
                        upgrades.insert(u.name_any(), u);
                    }
                    Some(Ok(watcher::Event::Delete(u))) => {
                        let name = u.name_any();
                        upgrades.remove(&name);
                        if ended.as_ref() == Some(&name) {
                            ended = None;
                        }
                        if current.as_ref().is_some_and(|c| c.name == name) {
                            tracing::info!(member = %self.member_name, upgrade = %name, "member upgrade deleted; stopped carrying it out");
                            current = None;
                        }
                    }
                    Some(Err(e)) => tracing::debug!(member = %self.member_name, error = %e, "member upgrade watch"),
                    None => return,
                },
                done = async { (&mut current.as_mut().expect("guarded").task).await }, if current.is_some() => {
                    let name = current.take().map(|c| c.name.clone()).unwrap_or_default();
                    match done {
                        Ok(Ok(())) => ended = Some(name),
                        Ok(Err(e)) => {
                            tracing::warn!(member = %self.member_name, upgrade = %name, error = %e, "member upgrade: hub write failed; retrying");
                            retry = true;
                        }
                        Err(e) => {
                            tracing::warn!(member = %self.member_name, upgrade = %name, error = %e, "member upgrade task ended abnormally; retrying");
                            retry = true;
                        }
                    }
                }
                () = tokio::time::sleep(RETRY), if retry => retry = false,
            }
        }
    }

    /// Carries out `upgrade` to the end, writing its status. Errs only when a hub write fails
    /// (the upgrade is then picked up again and resumed).
    async fn execute(
        self,
        api: Api<MemberUpgrade>,
        upgrade: MemberUpgrade,
    ) -> Result<(), kube::Error> {
        let name = upgrade.name_any();
        let started = upgrade
            .status
            .as_ref()
            .and_then(|s| s.start_time.as_ref())
            .map(|t| t.0)
            .unwrap_or_else(|| self.clock.now());
        let planned = match self.provider.current_versions().await {
            Ok(current) => plan(&current, &upgrade.spec).map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        let outcome = match planned {
            Ok(plan) => self.carry_out(&api, &name, &plan, started).await?,
            Err(message) => Outcome::Failed {
                message,
                progress: None,
            },
        };
        let now = rfc3339(self.clock.now());
        let status = match outcome {
            Outcome::Succeeded { total, summary } => json!({
                "phase": "Succeeded",
                "progress": format!("{total}/{total}"),
                "message": format!("done: {summary}"),
                "startTime": rfc3339(started),
                "completedTime": now,
            }),
            Outcome::Failed { message, progress } => {
                tracing::info!(member = %self.member_name, upgrade = %name, %message, "member upgrade failed");
                json!({
                    "phase": "Failed",
                    "progress": progress,
                    "message": message,
                    "startTime": rfc3339(started),
                    "completedTime": now,
                })
            }
        };
        write_status(&api, &name, status).await?;
        self.report_versions().await;
        Ok(())
    }

    /// Does each step of `plan`, writing `Running` with the step's message and the progress
    /// before it once the step has taken [`Executor::announce_after`].
    async fn carry_out(
        &self,
        api: &Api<MemberUpgrade>,
        name: &str,
        plan: &Plan,
        started: jiff::Timestamp,
    ) -> Result<Outcome, kube::Error> {
        for (i, step) in plan.steps.iter().enumerate() {
            let progress = format!("{}/{}", plan.done() + i, plan.total);
            let work = self.step(step);
            tokio::pin!(work);
            let done = tokio::select! {
                biased;
                done = &mut work => done,
                () = tokio::time::sleep(self.announce_after) => {
                    let running = json!({
                        "phase": "Running",
                        "progress": progress,
                        "message": step.describe(),
                        "startTime": rfc3339(started),
                        "completedTime": null,
                    });
                    write_status(api, name, running).await?;
                    work.await
                }
            };
            if let Err(e) = done {
                return Ok(Outcome::Failed {
                    message: e.to_string(),
                    progress: Some(progress),
                });
            }
        }
        Ok(Outcome::Succeeded {
            total: plan.total,
            summary: plan.summary.clone(),
        })
    }

    async fn step(&self, step: &Step) -> Result<(), ProviderError> {
        match step {
            Step::ControlPlane { version } => self.provider.upgrade_control_plane(version).await,
            Step::Node {
                pool, node, image, ..
            } => self.provider.upgrade_node(pool, node, image).await,
        }
    }

    /// Refreshes `status.versions` of the member's InternalMemberCluster (best effort: the
    /// next heartbeat writes it anyway).
    async fn report_versions(&self) {
        let _turn = self.version_reports.turn().await;
        let current = match self.provider.current_versions().await {
            Ok(current) => current,
            Err(e) => {
                tracing::debug!(member = %self.member_name, error = %e, "reading versions");
                return;
            }
        };
        let versions = current.report(self.provider.expected_durations(), self.clock.now());
        let imcs: Api<InternalMemberCluster> =
            Api::namespaced(self.hub.clone(), &member_namespace(&self.member_name));
        let patch = Patch::Merge(json!({"status": {"versions": versions}}));
        if let Err(e) = imcs
            .patch_status(&self.member_name, &PatchParams::default(), &patch)
            .await
        {
            tracing::debug!(member = %self.member_name, error = %e, "writing versions");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn upgrade(name: &str, created: &str, phase: Option<&str>) -> MemberUpgrade {
        let mut value = json!({
            "apiVersion": "updates.flotilla.dev/v1beta1",
            "kind": "MemberUpgrade",
            "metadata": {"name": name, "namespace": "fleet-member-m1", "creationTimestamp": created},
            "spec": {"updateRun": "run", "type": "NodeImageOnly"},
        });
        if let Some(phase) = phase {
            value["status"] = json!({ "phase": phase });
        }
        serde_json::from_value(value).unwrap()
    }

    fn next(upgrades: &[MemberUpgrade]) -> Option<String> {
        next_upgrade(upgrades, None).map(|u| u.name_any())
    }

    #[test]
    fn an_upgrade_carried_to_its_end_is_not_taken_up_again_from_a_stale_cache() {
        let at = "2026-03-01T10:00:00Z";
        let cached = [
            upgrade("done", at, Some("Running")),
            upgrade("next", at, Some("Pending")),
        ];
        assert_eq!(
            next_upgrade(&cached, Some("done")).map(|u| u.name_any()),
            Some("next".into())
        );
        assert_eq!(
            next(&cached),
            Some("done".into()),
            "a resumed one goes first"
        );

        let mut ended = Some("done".to_string());
        forget_if_seen_ended(&mut ended, &upgrade("done", at, Some("Running")));
        assert_eq!(ended.as_deref(), Some("done"), "the watch still lags");
        forget_if_seen_ended(&mut ended, &upgrade("other", at, Some("Succeeded")));
        assert_eq!(ended.as_deref(), Some("done"), "another upgrade's end");
        forget_if_seen_ended(&mut ended, &upgrade("done", at, Some("Succeeded")));
        assert_eq!(ended, None, "the watch caught up");
    }

    #[test]
    fn a_running_upgrade_goes_first_then_the_oldest_pending() {
        let old = "2026-03-01T10:00:00Z";
        let new = "2026-03-01T11:00:00Z";
        assert_eq!(
            next(&[
                upgrade("b", old, None),
                upgrade("a", new, Some("Pending")),
                upgrade("c", old, Some("Succeeded")),
            ]),
            Some("b".into())
        );
        assert_eq!(
            next(&[upgrade("b", old, None), upgrade("a", old, None)]),
            Some("a".into()),
            "same age: by name"
        );
        assert_eq!(
            next(&[
                upgrade("old", old, None),
                upgrade("resumed", new, Some("Running"))
            ]),
            Some("resumed".into())
        );
        assert_eq!(
            next(&[
                upgrade("x", old, Some("Failed")),
                upgrade("y", old, Some("Succeeded"))
            ]),
            None
        );
    }
}
