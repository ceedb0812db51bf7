//! The MemberCluster status the hub derives from its InternalMemberCluster, as a pure function
//! of the two objects and the current time.

use flotilla_api::cluster::eligibility::{self, EligibilityWindows, Ineligible};
use flotilla_api::cluster::member_cluster::AgentType;
use flotilla_api::cluster::{InternalMemberCluster, MemberCluster, MemberClusterStatus};
use flotilla_api::conditions::{NewCondition, find, set_condition};
use k8s_openapi::jiff::Timestamp;

/// MemberCluster condition: the hub has prepared the member's namespace and
/// InternalMemberCluster.
pub const READY_TO_JOIN: &str = "ReadyToJoin";
/// MemberCluster condition: the member agent has joined.
pub const JOINED: &str = "Joined";
/// MemberCluster condition: the member agent is heartbeating and reports itself healthy.
pub const HEALTHY: &str = "Healthy";

/// The status the hub should write on `mc`, given its InternalMemberCluster (if created yet)
/// at `now`. Conditions keep their transition times when their status does not change.
pub fn member_status(
    mc: &MemberCluster,
    imc: Option<&InternalMemberCluster>,
    now: Timestamp,
    windows: &EligibilityWindows,
) -> MemberClusterStatus {
    let previous = mc.status.clone().unwrap_or_default();
    let generation = mc.metadata.generation;
    let reported = imc.and_then(|i| i.status.as_ref());
    let mut conditions = previous.conditions;
    let status = MemberClusterStatus {
        conditions: Vec::new(), // filled in last, from `conditions`
        properties: reported.and_then(|r| r.properties.clone()),
        resource_usage: reported.and_then(|r| r.resource_usage.clone()),
        namespaces: previous.namespaces,
        agent_status: reported.and_then(|r| r.agent_status.clone()),
        versions: reported.and_then(|r| r.versions.clone()),
    };
    let mut set = |type_: &str, status_: &str, reason: &str, message: String| {
        set_condition(
            &mut conditions,
            NewCondition {
                type_,
                status: status_,
                reason,
                message,
                observed_generation: generation,
            },
            now,
        );
    };
    let name = mc.metadata.name.as_deref().unwrap_or_default();
    match imc {
        Some(_) => set(
            READY_TO_JOIN,
            "True",
            "MemberClusterReadyToJoin",
            format!(
                "namespace fleet-member-{name} and its InternalMemberCluster are ready for the member agent"
            ),
        ),
        None => set(
            READY_TO_JOIN,
            "False",
            "MemberClusterNotReadyToJoin",
            format!("creating namespace fleet-member-{name} and its InternalMemberCluster"),
        ),
    }
    let agent = status
        .agent_status
        .as_ref()
        .and_then(|a| a.iter().find(|a| a.type_ == AgentType::MemberAgent))
        .cloned();
    let agent_conditions = agent
        .as_ref()
        .and_then(|a| a.conditions.clone())
        .unwrap_or_default();
    match find(&agent_conditions, JOINED) {
        Some(c) if c.status == "True" => {
            set(JOINED, "True", "MemberClusterJoined", c.message.clone())
        }
        Some(c) if c.status == "False" => {
            set(JOINED, "False", "MemberClusterLeft", c.message.clone())
        }
        _ => set(
            JOINED,
            "Unknown",
            "MemberClusterJoinPending",
            "waiting for the member agent to report".into(),
        ),
    }
    // Health as the scheduler sees it: the agent's own view, unless its heartbeats stopped.
    let mut probe = mc.clone();
    probe.status = Some(MemberClusterStatus {
        agent_status: status.agent_status.clone(),
        ..Default::default()
    });
    match (
        eligibility::check(&probe, now, windows),
        find(&agent_conditions, HEALTHY),
    ) {
        (Err(e @ (Ineligible::HeartbeatStale { .. } | Ineligible::NoHeartbeat)), _) => set(
            HEALTHY,
            "Unknown",
            "MemberAgentHeartbeatStale",
            format!("{e}; the cluster receives no new placements until it heartbeats again"),
        ),
        (_, Some(c)) => set(HEALTHY, &c.status, &c.reason, c.message.clone()),
        (_, None) => set(
            HEALTHY,
            "Unknown",
            "MemberAgentNotReporting",
            "the member agent has not reported its health yet".into(),
        ),
    }
    for c in reported
        .map(|r| r.conditions.as_slice())
        .unwrap_or_default()
    {
        set(&c.type_, &c.status, &c.reason, c.message.clone());
    }
    MemberClusterStatus {
        conditions,
        ..status
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn mc() -> MemberCluster {
        serde_json::from_value(json!({
            "metadata": {"name": "m1", "generation": 1},
            "spec": {"identity": {"kind": "ServiceAccount", "name": "a", "namespace": "fleet-system"}}
        }))
        .unwrap()
    }

    fn imc(heartbeat: &str, joined: &str) -> InternalMemberCluster {
        serde_json::from_value(json!({
            "metadata": {"name": "m1", "namespace": "fleet-member-m1"},
            "spec": {"state": "Join"},
            "status": {
                "conditions": [{"type": "ClusterPropertyCollectionSucceeded", "status": "True", "reason": "Collected", "message": "", "lastTransitionTime": "2026-11-21T10:00:00Z"}],
                "properties": {"kubernetes-fleet.io/node-count": {"value": "3", "observationTime": heartbeat}},
                "resourceUsage": {"available": {"cpu": "4"}},
                "agentStatus": [{"type": "MemberAgent", "lastReceivedHeartbeat": heartbeat, "conditions": [
                    {"type": "Joined", "status": joined, "reason": "R", "message": "joined by agent", "lastTransitionTime": "2026-11-21T10:00:00Z"},
                    {"type": "Healthy", "status": "True", "reason": "MemberAgentHealthy", "message": "ok", "lastTransitionTime": "2026-11-21T10:00:00Z"}
                ]}]
            }
        }))
        .unwrap()
    }

    fn cond<'a>(s: &'a MemberClusterStatus, t: &str) -> (&'a str, &'a str) {
        let c = find(&s.conditions, t).unwrap();
        (c.status.as_str(), c.reason.as_str())
    }

    const NOW: &str = "2026-11-21T10:01:00Z";

    #[test]
    fn before_the_namespace_exists_nothing_is_joined() {
        let s = member_status(&mc(), None, NOW.parse().unwrap(), &Default::default());
        assert_eq!(
            cond(&s, READY_TO_JOIN),
            ("False", "MemberClusterNotReadyToJoin")
        );
        assert_eq!(cond(&s, JOINED), ("Unknown", "MemberClusterJoinPending"));
        assert_eq!(cond(&s, HEALTHY), ("Unknown", "MemberAgentNotReporting"));
    }

    #[test]
    fn a_heartbeating_agent_makes_the_member_joined_and_healthy() {
        let i = imc("2026-11-21T10:00:30Z", "True");
        let s = member_status(&mc(), Some(&i), NOW.parse().unwrap(), &Default::default());
        assert_eq!(cond(&s, READY_TO_JOIN).0, "True");
        assert_eq!(cond(&s, JOINED), ("True", "MemberClusterJoined"));
        assert_eq!(cond(&s, HEALTHY), ("True", "MemberAgentHealthy"));
        assert_eq!(cond(&s, "ClusterPropertyCollectionSucceeded").0, "True");
        assert_eq!(
            s.properties.unwrap()["kubernetes-fleet.io/node-count"].value,
            "3"
        );
    }

    #[test]
    fn a_silent_agent_turns_health_unknown_and_keeps_transition_times() {
        let i = imc("2026-11-21T10:00:30Z", "True");
        let mut m = mc();
        m.status = Some(member_status(
            &m,
            Some(&i),
            NOW.parse().unwrap(),
            &Default::default(),
        ));
        let later: Timestamp = "2026-11-21T10:06:00Z".parse().unwrap();
        let s = member_status(&m, Some(&i), later, &Default::default());
        assert_eq!(cond(&s, HEALTHY), ("Unknown", "MemberAgentHeartbeatStale"));
        assert_eq!(
            find(&s.conditions, HEALTHY).unwrap().last_transition_time.0,
            later
        );
        assert_eq!(
            find(&s.conditions, JOINED).unwrap().last_transition_time.0,
            NOW.parse::<Timestamp>().unwrap()
        );
    }

    #[test]
    fn a_departed_agent_is_left() {
        let i = imc("2026-11-21T10:00:30Z", "False");
        let s = member_status(&mc(), Some(&i), NOW.parse().unwrap(), &Default::default());
        assert_eq!(cond(&s, JOINED), ("False", "MemberClusterLeft"));
    }
}
