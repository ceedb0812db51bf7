//! The member agent: one per member cluster, talking to the hub (its own namespace and
//! InternalMemberCluster) and to the member cluster's API, both through kube-rs, so it runs
//! the same against a simulated member and a real cluster.
//!
//! While the InternalMemberCluster says `Join`, the agent installs what it needs on the member
//! ([`crate::setup`]; until that succeeds it tries again at every heartbeat and reports
//! `Healthy=False` with reason `MemberSetupFailed` saying why) and heartbeats every
//! `heartbeatPeriodSeconds` of the injected clock: it collects the member's properties and
//! resource usage ([`crate::report`]) and writes them, with `Joined=True` and its health, into
//! the InternalMemberCluster's status; from the first heartbeat on, it runs the Work applier
//! ([`crate::applier`]) and, when it has a [`Provider`], reports what the member runs
//! (`status.versions`) with each heartbeat and carries out the member's MemberUpgrades
//! ([`crate::upgrade::executor`]). When it says `Leave`, the agent stops both, deletes every
//! AppliedWork in the member (and, through ownership, everything the fleet placed there),
//! waits for that to finish, reports `Joined=False` (saying how to remove the agent) and stops
//! heartbeating.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use flotilla_api::cluster::member_cluster::AgentType;
use flotilla_api::cluster::{ClusterState, InternalMemberCluster, InternalMemberClusterStatus};
use flotilla_api::conditions::{NewCondition, set_condition};
use flotilla_api::placement::AppliedWork;
use flotilla_apiserver::clock::{Clock, rfc3339};
use futures::StreamExt;
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{DeleteParams, ListParams, Patch, PatchParams};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client};
use serde_json::{Map, Value, json};

use crate::applier::{self, Applier};
use crate::membership::{DEFAULT_HEARTBEAT_SECONDS, member_namespace};
use crate::report::{self, PriceSource, Report};
use crate::setup::REMOVE_AGENT;
use crate::upgrade::{Provider, VersionReports, executor};

/// How long to wait, in real time, before retrying a failed hub write.
const RETRY: Duration = Duration::from_secs(1);
/// How often to check whether the fleet's objects are gone from a leaving member.
const LEAVE_POLL: Duration = Duration::from_millis(200);
/// Longest wait for a leaving member's placed objects to be deleted.
const LEAVE_TIMEOUT: Duration = Duration::from_secs(120);

/// Everything an agent needs.
#[derive(Clone)]
pub struct Agent {
    /// The member's name (its MemberCluster's name on the hub).
    pub name: String,
    /// Client for the hub.
    pub hub: Client,
    /// Client for the member cluster's API.
    pub member: Client,
    /// The clock heartbeats follow.
    pub clock: Arc<dyn Clock>,
    /// Where node prices come from.
    pub prices: Arc<dyn PriceSource>,
    /// Property values that add to or override what the agent observes.
    pub overrides: BTreeMap<String, String>,
    /// What reads and upgrades the member's control plane and node pools; without one the
    /// agent reports no versions and leaves MemberUpgrades alone.
    pub provider: Option<Arc<dyn Provider>>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent").field("name", &self.name).finish()
    }
}

/// Whether what the agent needs on the member is installed, and what stood in the way last.
#[derive(Debug, Default)]
struct Setup {
    done: bool,
    problem: Option<String>,
}

/// Where the agent is in the membership protocol.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    /// No instruction from the hub yet.
    Waiting,
    /// Joined; the next heartbeat is due at `next`, every `period`.
    Joined {
        next: Timestamp,
        period: SignedDuration,
    },
    /// Left the fleet.
    Left,
}

impl Agent {
    /// Runs the agent until its hub watch ends.
    pub async fn run(self) {
        crate::metrics::describe();
        let namespace = member_namespace(&self.name);
        let imcs: Api<InternalMemberCluster> = Api::namespaced(self.hub.clone(), &namespace);
        let config = watcher::Config::default().fields(&format!("metadata.name={}", self.name));
        let mut events = Box::pin(watcher(imcs.clone(), config).default_backoff());
        let mut latest: Option<InternalMemberCluster> = None;
        let mut phase = Phase::Waiting;
        let mut retry = false;
        // The Work applier and the upgrade executor, while joined.
        let mut applier: Option<applier::Running> = None;
        let mut upgrades: Option<executor::Running> = None;
        let version_reports = VersionReports::default();
        // Whether what the agent needs on the member is installed ([`crate::setup`]).
        let mut set_up = Setup::default();
        loop {
            let heartbeat_due = async {
                match phase {
                    _ if retry => tokio::time::sleep(RETRY).await,
                    Phase::Joined { next, .. } => self.clock.sleep_until(next).await,
                    _ => std::future::pending().await,
                }
            };
            tokio::select! {
                event = events.next() => match event {
                    Some(Ok(watcher::Event::Apply(o) | watcher::Event::InitApply(o))) => latest = Some(o),
                    Some(Ok(watcher::Event::Delete(_))) => latest = None,
                    Some(Ok(_)) => continue,
                    Some(Err(e)) => {
                        tracing::debug!(member = %self.name, error = %e, "hub watch");
                        continue;
                    }
                    None => return,
                },
                () = heartbeat_due => {}
            }
            let Some(imc) = &latest else { continue };
            if imc.spec.state == ClusterState::Leave {
                // Stop applying Works before removing what they placed.
                applier = None;
                upgrades = None;
            }
            match self
                .step(&imcs, imc, phase, &version_reports, &mut set_up)
                .await
            {
                Ok(next) => {
                    phase = next;
                    retry = false;
                    if matches!(phase, Phase::Joined { .. }) && applier.is_none() {
                        applier = Some(self.applier().spawn());
                    }
                    if matches!(phase, Phase::Joined { .. }) && upgrades.is_none() {
                        upgrades = self
                            .executor(&version_reports)
                            .map(executor::Executor::spawn);
                    }
                }
                Err(e) => {
                    tracing::warn!(member = %self.name, error = %e, "member agent: hub write failed; retrying");
                    retry = true;
                }
            }
        }
    }

    /// The member's Work applier.
    fn applier(&self) -> Applier {
        Applier {
            member_name: self.name.clone(),
            hub: self.hub.clone(),
            member: self.member.clone(),
            clock: self.clock.clone(),
        }
    }

    /// The member's upgrade executor, if the agent has a provider; it takes turns with the
    /// heartbeat at reporting the versions.
    fn executor(&self, version_reports: &VersionReports) -> Option<executor::Executor> {
        Some(executor::Executor {
            member_name: self.name.clone(),
            hub: self.hub.clone(),
            provider: self.provider.clone()?,
            clock: self.clock.clone(),
            announce_after: executor::ANNOUNCE_AFTER,
            version_reports: version_reports.clone(),
        })
    }

    /// Acts on the hub's instruction: heartbeat when due, or leave.
    async fn step(
        &self,
        imcs: &Api<InternalMemberCluster>,
        imc: &InternalMemberCluster,
        phase: Phase,
        version_reports: &VersionReports,
        set_up: &mut Setup,
    ) -> Result<Phase, kube::Error> {
        let now = self.clock.now();
        let period = SignedDuration::from_secs(i64::from(
            imc.spec
                .heartbeat_period_seconds
                .unwrap_or(DEFAULT_HEARTBEAT_SECONDS)
                .max(1),
        ));
        match (imc.spec.state, phase) {
            (ClusterState::Join, Phase::Joined { next, period: p })
                if p == period && now < next =>
            {
                Ok(phase)
            }
            (ClusterState::Join, Phase::Joined { next, period: p })
                if p != period && now < next =>
            {
                // The period changed: reschedule from the last heartbeat.
                let last = next.checked_sub(p).unwrap_or(now);
                Ok(Phase::Joined {
                    next: last.checked_add(period).unwrap_or(now).max(now),
                    period,
                })
            }
            (ClusterState::Join, _) => {
                self.heartbeat(imcs, imc, now, version_reports, set_up)
                    .await?;
                Ok(Phase::Joined {
                    next: now.checked_add(period).unwrap_or(now),
                    period,
                })
            }
            (ClusterState::Leave, Phase::Left) => Ok(phase),
            (ClusterState::Leave, _) => {
                self.leave(imcs, imc).await?;
                Ok(Phase::Left)
            }
        }
    }

    /// Installs what the agent needs on the member until that succeeds ([`crate::setup`]),
    /// collects the member's report and writes it, with a heartbeat, into the status; the
    /// versions are read and written in a turn of `version_reports`.
    async fn heartbeat(
        &self,
        imcs: &Api<InternalMemberCluster>,
        imc: &InternalMemberCluster,
        now: Timestamp,
        version_reports: &VersionReports,
        set_up: &mut Setup,
    ) -> Result<(), kube::Error> {
        let setup_problem = self.set_up(set_up).await;
        let previous = imc.status.clone().unwrap_or_default();
        let mut collected = self.collect().await;
        let _turn = version_reports.turn().await;
        let versions = match &self.provider {
            Some(provider) => match provider.current_versions().await {
                Ok(current) => Some(current.report(provider.expected_durations(), now)),
                Err(e) => {
                    if let Ok(report) = &mut collected {
                        report.problems.push(format!("versions not reported: {e}"));
                    }
                    None
                }
            },
            None => None,
        };
        let (healthy, collection) = match &collected {
            Ok(r) if r.problems.is_empty() => (
                (
                    "True",
                    "MemberAgentHealthy",
                    "the member agent reaches the member cluster's API".to_string(),
                ),
                (
                    "True",
                    "ClusterPropertyCollectionSucceeded",
                    "all properties were collected".to_string(),
                ),
            ),
            Ok(r) => (
                (
                    "True",
                    "MemberAgentHealthy",
                    "the member agent reaches the member cluster's API".to_string(),
                ),
                (
                    "False",
                    "ClusterPropertyCollectionFailed",
                    r.problems.join("; "),
                ),
            ),
            Err(e) => (
                (
                    "False",
                    "MemberClusterUnreachable",
                    format!("the member cluster's API failed: {e}"),
                ),
                (
                    "False",
                    "ClusterPropertyCollectionFailed",
                    format!("the member cluster's API failed: {e}"),
                ),
            ),
        };
        let healthy = match setup_problem {
            Some(problem) => ("False", "MemberSetupFailed", problem),
            None => healthy,
        };
        let mut conditions = previous.conditions.clone();
        for (type_, (status, reason, message)) in [
            (
                "ClusterPropertyProviderStarted",
                (
                    "True",
                    "ClusterPropertyProviderStarted",
                    "the property provider is running".to_string(),
                ),
            ),
            ("ClusterPropertyCollectionSucceeded", collection),
        ] {
            set_condition(
                &mut conditions,
                NewCondition {
                    type_,
                    status,
                    reason,
                    message,
                    observed_generation: imc.metadata.generation,
                },
                now,
            );
        }
        let mut agent_conditions = agent_conditions(&previous);
        set_agent_condition(
            &mut agent_conditions,
            "Joined",
            (
                "True",
                "MemberClusterJoined",
                "the member agent has joined the fleet".into(),
            ),
            imc,
            now,
        );
        set_agent_condition(&mut agent_conditions, "Healthy", healthy, imc, now);
        let mut status = json!({
            "conditions": conditions,
            "agentStatus": member_agent_status(agent_conditions, now),
        });
        if let Ok(report) = &collected {
            status["properties"] = properties_patch(&previous, report, now);
            status["resourceUsage"] = json!({
                "capacity": report.usage.capacity,
                "allocatable": report.usage.allocatable,
                "available": report.usage.available,
                "observationTime": rfc3339(now),
            });
        }
        if let Some(versions) = versions {
            status["versions"] = json!(versions);
        }
        self.write_status(imcs, status).await?;
        crate::metrics::heartbeat(&self.name, now);
        Ok(())
    }

    /// Installs what the agent needs on the member, unless done already; returns what stands
    /// in the way, logged when it changes.
    async fn set_up(&self, state: &mut Setup) -> Option<String> {
        if state.done {
            return None;
        }
        match crate::setup::ensure(&self.member).await {
            Ok(()) => {
                if state.problem.take().is_some() {
                    tracing::info!(member = %self.name, "member agent: the member is set up");
                }
                state.done = true;
                None
            }
            Err(e) => {
                let problem = e.to_string();
                if state.problem.as_ref() != Some(&problem) {
                    tracing::warn!(member = %self.name, "member agent: setting up the member failed: {problem}");
                    state.problem = Some(problem.clone());
                }
                Some(problem)
            }
        }
    }

    /// Merges `status` into the InternalMemberCluster's status.
    async fn write_status(
        &self,
        imcs: &Api<InternalMemberCluster>,
        status: Value,
    ) -> Result<(), kube::Error> {
        let patch = Patch::Merge(json!({"status": status}));
        imcs.patch_status(&self.name, &PatchParams::default(), &patch)
            .await
            .map(drop)
    }

    /// Reads the member's nodes, pods and version and computes the report.
    async fn collect(&self) -> Result<Report, kube::Error> {
        let nodes: Api<Node> = Api::all(self.member.clone());
        let pods: Api<Pod> = Api::all(self.member.clone());
        let nodes = nodes.list(&ListParams::default()).await?.items;
        let pods = pods.list(&ListParams::default()).await?.items;
        let version = self.member.apiserver_version().await?.git_version;
        Ok(report::report(
            &nodes,
            &pods,
            &version,
            self.prices.as_ref(),
            &self.overrides,
        ))
    }

    /// Removes everything the fleet placed on the member, then reports having left.
    async fn leave(
        &self,
        imcs: &Api<InternalMemberCluster>,
        imc: &InternalMemberCluster,
    ) -> Result<(), kube::Error> {
        let removed = self.remove_placed().await;
        let now = self.clock.now();
        let message = match &removed {
            Ok(0) => format!(
                "the member agent left the fleet; nothing had been placed on the member. To remove the agent from the member: {REMOVE_AGENT}"
            ),
            Ok(n) => format!(
                "the member agent removed {n} AppliedWork(s) and everything placed through them, and left the fleet. To remove the agent from the member: {REMOVE_AGENT}"
            ),
            Err(e) => {
                format!("the member agent left the fleet but could not remove what was placed: {e}")
            }
        };
        tracing::info!(member = %self.name, "{message}");
        let previous = imc.status.clone().unwrap_or_default();
        let mut agent_conditions = agent_conditions(&previous);
        set_agent_condition(
            &mut agent_conditions,
            "Joined",
            ("False", "MemberClusterLeft", message),
            imc,
            now,
        );
        let status = json!({"agentStatus": member_agent_status(agent_conditions, now)});
        self.write_status(imcs, status).await
    }

    /// Deletes every AppliedWork (foreground, so their owned objects go first) and waits until
    /// they are gone. Returns how many there were.
    async fn remove_placed(&self) -> Result<usize, kube::Error> {
        let api: Api<AppliedWork> = Api::all(self.member.clone());
        let works = match api.list(&ListParams::default()).await {
            Ok(list) => list.items,
            // A cluster without the AppliedWork kind has nothing placed by the fleet.
            Err(kube::Error::Api(e)) if e.code == 404 => return Ok(0),
            Err(e) => return Err(e),
        };
        for work in &works {
            let name = work.metadata.name.as_deref().unwrap_or_default();
            match api.delete(name, &DeleteParams::foreground()).await {
                Ok(_) => {}
                Err(kube::Error::Api(e)) if e.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
        let deadline = tokio::time::Instant::now() + LEAVE_TIMEOUT;
        while !api
            .list(&ListParams::default().limit(1))
            .await?
            .items
            .is_empty()
        {
            if tokio::time::Instant::now() > deadline {
                tracing::warn!(member = %self.name, "placed objects still being deleted; leaving anyway");
                break;
            }
            tokio::time::sleep(LEAVE_POLL).await;
        }
        Ok(works.len())
    }
}

/// The member agent's conditions as last written, so transition times carry over.
fn agent_conditions(status: &InternalMemberClusterStatus) -> Vec<Condition> {
    status
        .agent_status
        .iter()
        .flatten()
        .find(|a| a.type_ == AgentType::MemberAgent)
        .and_then(|a| a.conditions.clone())
        .unwrap_or_default()
}

/// `status.agentStatus`: the member agent's conditions and a heartbeat at `now`.
fn member_agent_status(conditions: Vec<Condition>, now: Timestamp) -> Value {
    json!([{
        "type": "MemberAgent",
        "conditions": conditions,
        "lastReceivedHeartbeat": rfc3339(now),
    }])
}

fn set_agent_condition(
    conditions: &mut Vec<Condition>,
    type_: &str,
    (status, reason, message): (&str, &str, String),
    imc: &InternalMemberCluster,
    now: Timestamp,
) {
    set_condition(
        conditions,
        NewCondition {
            type_,
            status,
            reason,
            message,
            observed_generation: imc.metadata.generation,
        },
        now,
    );
}

/// The `status.properties` merge patch: every reported property with its observation time,
/// and `null` for properties reported before but no longer, so they disappear.
fn properties_patch(
    previous: &InternalMemberClusterStatus,
    report: &Report,
    now: Timestamp,
) -> Value {
    let observed = rfc3339(now);
    let mut patch: Map<String, Value> = previous
        .properties
        .iter()
        .flatten()
        .filter(|(name, _)| !report.properties.contains_key(*name))
        .map(|(name, _)| (name.clone(), Value::Null))
        .collect();
    for (name, value) in &report.properties {
        patch.insert(
            name.clone(),
            json!({"value": value, "observationTime": observed}),
        );
    }
    Value::Object(patch)
}
