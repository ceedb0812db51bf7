//! The member agent's Prometheus families: Work applies and their failures, drift found, and
//! each member's last heartbeat. They go into the process registry: `flotilla member` serves
//! them on its `--metrics-bind-address`; in `flotilla up` the simulated members' agents run in
//! the hub's process and the hub's `/metrics` shows them.

use flotilla_apiserver::metrics::{Desc, process};
use jiff::Timestamp;

use crate::work::status::ManifestResult;

/// Work applies by result: `applied` (every manifest applied or its difference reported) or
/// `failed` (at least one manifest not).
pub const WORK_APPLIES: Desc = Desc::counter(
    "flotilla_agent_work_applies_total",
    "Passes of the agent applying a Work to its member, by result (applied: every manifest applied or diffed; failed: at least one not).",
    &["result"],
);
/// Manifests that failed, by KubeFleet's condition reason.
pub const APPLY_ERRORS: Desc = Desc::counter(
    "flotilla_agent_apply_errors_total",
    "Manifests the agent could not apply, by reason (ManifestApplyFailed, FailedToTakeOver, FoundDrifts, ...).",
    &["reason"],
);
/// Manifests whose member object had drifted from what was placed.
pub const DRIFTS_FOUND: Desc = Desc::counter(
    "flotilla_agent_drifts_found_total",
    "Manifests whose object on the member had drifted from what the fleet placed, found when applying.",
    &[],
);
/// The last heartbeat each member's agent wrote (seconds since the epoch, on the agent's
/// clock): its age is `time() - flotilla_agent_last_heartbeat_timestamp_seconds`.
pub const LAST_HEARTBEAT: Desc = Desc::gauge(
    "flotilla_agent_last_heartbeat_timestamp_seconds",
    "When the member's agent last wrote its heartbeat to the hub (Unix seconds).",
    &["member"],
);

/// Declares every family, so they are listed before the first Work arrives.
pub fn describe() {
    for desc in [&WORK_APPLIES, &APPLY_ERRORS, &DRIFTS_FOUND, &LAST_HEARTBEAT] {
        process().describe(desc);
    }
}

/// Records one pass applying a Work whose manifests ended as `results`.
pub fn applied(results: &[ManifestResult]) {
    let registry = process();
    let mut failed = false;
    for manifest in results {
        let result = manifest.outcome.result;
        if !result.is_applied() && !result.is_diff_reported() {
            failed = true;
            registry.inc(&APPLY_ERRORS, &[result.reason()]);
        }
        if !manifest.outcome.drifts.is_empty() {
            registry.inc(&DRIFTS_FOUND, &[]);
        }
    }
    let result = if failed { "failed" } else { "applied" };
    registry.inc(&WORK_APPLIES, &[result]);
}

/// Records `member`'s heartbeat at `now`.
pub fn heartbeat(member: &str, now: Timestamp) {
    process().set(&LAST_HEARTBEAT, &[member], now.as_second() as f64);
}
