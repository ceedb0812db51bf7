//! What a pass reads from the controller's caches besides the fleet (which
//! [`crate::fleet::FleetView`] gives): the run's member upgrades and gates.

use std::collections::HashMap;

use flotilla_api::cluster::member_cluster::MEMBER_NAMESPACE_PREFIX;
use flotilla_api::updates::member_upgrade::UPGRADE_RUN_LABEL;
use kube::ResourceExt;

use super::Context;
use crate::run::{GateReport, UpgradeReport};

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
