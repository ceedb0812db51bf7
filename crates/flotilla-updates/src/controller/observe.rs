//! What a pass reads, gathered from the controller's caches: the fleet's members and their
//! versions, their maintenance windows, the release catalog, and the run's member upgrades and
//! gates.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use flotilla_api::cluster::MemberCluster;
use flotilla_api::cluster::member_cluster::MEMBER_NAMESPACE_PREFIX;
use flotilla_api::updates::maintenance::{AUTO_UPGRADE_SCHEDULE, NODE_OS_UPGRADE_SCHEDULE};
use flotilla_api::updates::member_upgrade::UPGRADE_RUN_LABEL;
use flotilla_api::updates::update_run::{UpdateRunStatus, UpgradeType};
use flotilla_api::updates::{LONG_TERM_SUPPORT_LABEL, REGION_LABEL};
use jiff::Timestamp;
use kube::ResourceExt;

use super::Context;
use crate::run::init::PlanMember;
use crate::run::{GateReport, UpgradeReport, WindowFacts};
use crate::target::MemberFacts;
use crate::window::Window;

/// The fleet's members, by name.
pub(crate) struct Members(BTreeMap<String, Arc<MemberCluster>>);

impl Members {
    /// Every member not being deleted.
    pub(crate) fn of(ctx: &Context) -> Members {
        Members(
            ctx.members
                .state()
                .into_iter()
                .filter(|m| m.metadata.deletion_timestamp.is_none())
                .map(|m| (m.name_any(), m))
                .collect(),
        )
    }

    /// The members as a plan lays them out.
    pub(crate) fn plan(&self) -> Vec<PlanMember> {
        self.0
            .values()
            .map(|m| PlanMember {
                name: m.name_any(),
                labels: m.labels().clone(),
            })
            .collect()
    }

    /// `(region, image family)` of every node pool of the run's members, for Consistent
    /// selection.
    pub(crate) fn image_usage(&self, status: &UpdateRunStatus) -> Vec<(String, String)> {
        run_members(status)
            .filter_map(|name| self.0.get(name))
            .flat_map(|m| {
                let region = region(m).to_string();
                versions(m)
                    .map(|v| v.node_pools.clone())
                    .unwrap_or_default()
                    .into_iter()
                    .map(move |p| (region.clone(), p.image_family))
            })
            .collect()
    }

    /// What the release rules need about member `name`.
    pub(crate) fn facts(&self, name: &str) -> Option<MemberFacts<'_>> {
        let member = self.0.get(name)?;
        Some(MemberFacts {
            region: region(member),
            versions: versions(member),
            long_term_support: member
                .labels()
                .get(LONG_TERM_SUPPORT_LABEL)
                .is_some_and(|v| v == "true"),
        })
    }
}

/// A member's region label (empty when unset: no release is available there).
fn region(member: &MemberCluster) -> &str {
    member.labels().get(REGION_LABEL).map_or("", String::as_str)
}

/// The versions a member's agent reported.
fn versions(member: &MemberCluster) -> Option<&flotilla_api::cluster::versions::ClusterVersions> {
    member.status.as_ref().and_then(|s| s.versions.as_ref())
}

/// The names of the members in a run's plan.
pub(crate) fn run_members(status: &UpdateRunStatus) -> impl Iterator<Item = &str> {
    status
        .stages
        .iter()
        .flat_map(|s| &s.groups)
        .flat_map(|g| &g.members)
        .map(|m| m.name.as_str())
}

/// Window facts at `now` of every member of the run that is still waiting, for the
/// configuration governing `upgrade` (Kubernetes or node image upgrades).
pub(crate) fn windows(
    ctx: &Context,
    status: &UpdateRunStatus,
    upgrade: UpgradeType,
    now: Timestamp,
) -> HashMap<String, WindowFacts> {
    let name = match upgrade {
        UpgradeType::NodeImageOnly => NODE_OS_UPGRADE_SCHEDULE,
        UpgradeType::Full | UpgradeType::ControlPlaneOnly => AUTO_UPGRADE_SCHEDULE,
    };
    let configured: HashMap<String, Window> = ctx
        .windows
        .state()
        .iter()
        .filter(|c| c.name_any() == name)
        .filter_map(|c| {
            let member = c
                .namespace()?
                .strip_prefix(MEMBER_NAMESPACE_PREFIX)?
                .to_string();
            let window = Window::parse(&c.spec.maintenance_window).ok()?;
            Some((member, window))
        })
        .collect();
    status
        .stages
        .iter()
        .flat_map(|s| &s.groups)
        .flat_map(|g| &g.members)
        .filter(|m| !m.progress.state.is_final())
        .filter_map(|m| {
            let facts = WindowFacts::of(Some(configured.get(&m.name)?), now);
            Some((m.name.clone(), facts))
        })
        .collect()
}

/// The run's member upgrades, by (member, upgrade name).
pub(crate) fn upgrades(ctx: &Context, run: &str) -> HashMap<(String, String), UpgradeReport> {
    ctx.upgrades
        .state()
        .iter()
        .filter(|u| u.labels().get(UPGRADE_RUN_LABEL).is_some_and(|r| r == run))
        .filter_map(|u| {
            let member = u
                .namespace()?
                .strip_prefix(MEMBER_NAMESPACE_PREFIX)?
                .to_string();
            let status = u.status.clone().unwrap_or_default();
            Some((
                (member, u.name_any()),
                UpgradeReport {
                    phase: status.phase,
                    message: status.message,
                },
            ))
        })
        .collect()
}

/// The run's gates, by name.
pub(crate) fn gates(ctx: &Context, run: &str) -> HashMap<String, GateReport> {
    ctx.gates
        .state()
        .iter()
        .filter(|g| g.spec.target.update_run == run)
        .map(|g| {
            (
                g.name_any(),
                GateReport {
                    state: g.status.as_ref().map(|s| s.state).unwrap_or_default(),
                    scheduled_start: g.spec.scheduled_start_time.as_ref().map(|t| t.0),
                },
            )
        })
        .collect()
}
