//! Whether a member cluster may receive new placements: KubeFleet's cluster eligibility
//! rules as a pure function of the MemberCluster and the current time.
//!
//! A cluster is eligible when it is not being deleted, its member agent has sent a heartbeat
//! within the heartbeat window (5 minutes), the agent reports `Joined=True`, and its `Healthy`
//! condition is present and has not been anything but `True` for longer than the health window
//! (5 minutes). An ineligible cluster keeps what is already placed on it; the scheduler only
//! stops choosing it.

use std::fmt;

use k8s_openapi::jiff::{SignedDuration, Timestamp};

use super::member_cluster::{AgentType, MemberCluster};
use crate::conditions::find;

/// How long a cluster may go without a heartbeat, or stay unhealthy, and remain eligible.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EligibilityWindows {
    /// Longest allowed time since the member agent's last heartbeat.
    pub heartbeat: SignedDuration,
    /// Longest allowed time the agent's `Healthy` condition may be other than `True`.
    pub health: SignedDuration,
}

impl Default for EligibilityWindows {
    fn default() -> Self {
        Self {
            heartbeat: SignedDuration::from_mins(5),
            health: SignedDuration::from_mins(5),
        }
    }
}

/// Why a member cluster may not receive new placements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ineligible {
    /// The MemberCluster is being deleted (the member is leaving).
    Deleting,
    /// No member agent has reported yet.
    NoAgentStatus,
    /// The agent has never sent a heartbeat.
    NoHeartbeat,
    /// The last heartbeat is older than the window.
    HeartbeatStale {
        /// When the last heartbeat arrived.
        last: Timestamp,
        /// The window it fell out of.
        window: SignedDuration,
    },
    /// The agent does not report `Joined=True`.
    NotJoined {
        /// The reason the agent gives, if any.
        reason: Option<String>,
    },
    /// The agent reports no `Healthy` condition.
    HealthUnknown,
    /// `Healthy` has been other than `True` for longer than the window.
    Unhealthy {
        /// Since when.
        since: Timestamp,
        /// The agent's message.
        message: String,
    },
}

impl fmt::Display for Ineligible {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ineligible::Deleting => write!(f, "cluster is leaving the fleet (being deleted)"),
            Ineligible::NoAgentStatus => write!(f, "cluster's member agent has not reported yet"),
            Ineligible::NoHeartbeat => {
                write!(f, "cluster's member agent has never sent a heartbeat")
            }
            Ineligible::HeartbeatStale { last, window } => write!(
                f,
                "cluster's member agent last sent a heartbeat at {last}, more than {} ago",
                human(*window)
            ),
            Ineligible::NotJoined { reason } => match reason {
                Some(r) => write!(f, "cluster has not joined the fleet ({r})"),
                None => write!(f, "cluster has not joined the fleet"),
            },
            Ineligible::HealthUnknown => {
                write!(f, "cluster's member agent does not report its health")
            }
            Ineligible::Unhealthy { since, message } => {
                write!(f, "cluster has been unhealthy since {since}: {message}")
            }
        }
    }
}

fn human(d: SignedDuration) -> String {
    let secs = d.as_secs();
    if secs % 60 == 0 {
        format!("{}m", secs / 60)
    } else {
        format!("{secs}s")
    }
}

/// Decides whether `cluster` may receive new placements at `now`.
pub fn check(
    cluster: &MemberCluster,
    now: Timestamp,
    windows: &EligibilityWindows,
) -> Result<(), Ineligible> {
    if cluster.metadata.deletion_timestamp.is_some() {
        return Err(Ineligible::Deleting);
    }
    let agent = cluster
        .status
        .as_ref()
        .and_then(|s| s.agent_status.as_ref())
        .and_then(|a| a.iter().find(|a| a.type_ == AgentType::MemberAgent))
        .ok_or(Ineligible::NoAgentStatus)?;
    let last = agent
        .last_received_heartbeat
        .as_ref()
        .ok_or(Ineligible::NoHeartbeat)?
        .0;
    if now.duration_since(last) > windows.heartbeat {
        return Err(Ineligible::HeartbeatStale {
            last,
            window: windows.heartbeat,
        });
    }
    let conditions = agent.conditions.as_deref().unwrap_or_default();
    let joined = find(conditions, "Joined");
    if joined.map(|c| c.status.as_str()) != Some("True") {
        return Err(Ineligible::NotJoined {
            reason: joined.map(|c| c.reason.clone()).filter(|r| !r.is_empty()),
        });
    }
    let healthy = find(conditions, "Healthy").ok_or(Ineligible::HealthUnknown)?;
    if healthy.status != "True" {
        let since = healthy.last_transition_time.0;
        if now.duration_since(since) > windows.health {
            return Err(Ineligible::Unhealthy {
                since,
                message: healthy.message.clone(),
            });
        }
    }
    Ok(())
}

/// When `cluster`'s eligibility will next change by itself (the heartbeat or health window
/// running out), so a controller can look again exactly then; `None` if nothing is pending.
pub fn next_change(
    cluster: &MemberCluster,
    now: Timestamp,
    windows: &EligibilityWindows,
) -> Option<Timestamp> {
    let agent = cluster
        .status
        .as_ref()?
        .agent_status
        .as_ref()?
        .iter()
        .find(|a| a.type_ == AgentType::MemberAgent)?;
    let mut deadlines = Vec::new();
    if let Some(hb) = &agent.last_received_heartbeat {
        deadlines.push(hb.0.checked_add(windows.heartbeat).ok()?);
    }
    if let Some(h) = find(agent.conditions.as_deref().unwrap_or_default(), "Healthy")
        && h.status != "True"
    {
        deadlines.push(h.last_transition_time.0.checked_add(windows.health).ok()?);
    }
    deadlines.into_iter().filter(|d| *d >= now).min()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::member_cluster::{AgentStatus, MemberClusterStatus};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

    fn ts(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn cond(type_: &str, status: &str, at: &str) -> Condition {
        Condition {
            type_: type_.into(),
            status: status.into(),
            reason: format!("{type_}{status}"),
            message: format!("{type_} is {status}"),
            last_transition_time: Time(ts(at)),
            observed_generation: None,
        }
    }

    fn cluster(heartbeat: Option<&str>, conditions: Vec<Condition>) -> MemberCluster {
        let mut mc: MemberCluster = serde_json::from_value(serde_json::json!({
            "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
            "kind": "MemberCluster",
            "metadata": {"name": "m1"},
            "spec": {"identity": {"kind": "ServiceAccount", "name": "fleet-member-agent", "namespace": "fleet-system"}}
        }))
        .unwrap();
        mc.status = Some(MemberClusterStatus {
            agent_status: Some(vec![AgentStatus {
                type_: AgentType::MemberAgent,
                conditions: Some(conditions),
                last_received_heartbeat: heartbeat.map(|h| Time(ts(h))),
            }]),
            ..Default::default()
        });
        mc
    }

    const T0: &str = "2026-11-21T10:00:00Z";

    #[test]
    fn table() {
        let w = EligibilityWindows::default();
        let healthy = || vec![cond("Joined", "True", T0), cond("Healthy", "True", T0)];
        let cases: Vec<(&str, MemberCluster, &str, Result<(), &str>)> = vec![
            (
                "fresh and healthy",
                cluster(Some(T0), healthy()),
                "2026-11-21T10:04:59Z",
                Ok(()),
            ),
            (
                "heartbeat exactly at the window",
                cluster(Some(T0), healthy()),
                "2026-11-21T10:05:00Z",
                Ok(()),
            ),
            (
                "heartbeat stale",
                cluster(Some(T0), healthy()),
                "2026-11-21T10:05:01Z",
                Err("HeartbeatStale"),
            ),
            (
                "never heartbeated",
                cluster(None, healthy()),
                T0,
                Err("NoHeartbeat"),
            ),
            (
                "left",
                cluster(
                    Some(T0),
                    vec![cond("Joined", "False", T0), cond("Healthy", "True", T0)],
                ),
                T0,
                Err("NotJoined"),
            ),
            (
                "no health",
                cluster(Some(T0), vec![cond("Joined", "True", T0)]),
                T0,
                Err("HealthUnknown"),
            ),
            (
                "briefly unhealthy",
                cluster(
                    Some("2026-11-21T10:04:00Z"),
                    vec![cond("Joined", "True", T0), cond("Healthy", "False", T0)],
                ),
                "2026-11-21T10:04:30Z",
                Ok(()),
            ),
            (
                "long unhealthy",
                cluster(
                    Some("2026-11-21T10:06:00Z"),
                    vec![cond("Joined", "True", T0), cond("Healthy", "Unknown", T0)],
                ),
                "2026-11-21T10:06:30Z",
                Err("Unhealthy"),
            ),
        ];
        for (name, mc, now, want) in cases {
            let got = check(&mc, ts(now), &w).map_err(|e| format!("{e:?}"));
            match want {
                Ok(()) => assert!(got.is_ok(), "{name}: {got:?}"),
                Err(prefix) => assert!(
                    got.as_ref().is_err_and(|e| e.starts_with(prefix)),
                    "{name}: want {prefix}, got {got:?}"
                ),
            }
        }
    }

    #[test]
    fn deleting_and_unreported_clusters_are_ineligible() {
        let mut mc = cluster(Some(T0), vec![]);
        mc.metadata.deletion_timestamp = Some(Time(ts(T0)));
        assert_eq!(
            check(&mc, ts(T0), &EligibilityWindows::default()),
            Err(Ineligible::Deleting)
        );
        mc.metadata.deletion_timestamp = None;
        mc.status = None;
        assert_eq!(
            check(&mc, ts(T0), &EligibilityWindows::default()),
            Err(Ineligible::NoAgentStatus)
        );
        assert_eq!(
            Ineligible::HeartbeatStale {
                last: ts(T0),
                window: SignedDuration::from_mins(5)
            }
            .to_string(),
            "cluster's member agent last sent a heartbeat at 2026-11-21T10:00:00Z, more than 5m ago"
        );
    }

    #[test]
    fn next_change_is_the_heartbeat_deadline() {
        let mc = cluster(
            Some(T0),
            vec![cond("Joined", "True", T0), cond("Healthy", "True", T0)],
        );
        let w = EligibilityWindows::default();
        assert_eq!(
            next_change(&mc, ts(T0), &w),
            Some(ts("2026-11-21T10:05:00Z"))
        );
        assert_eq!(next_change(&mc, ts("2026-11-21T11:00:00Z"), &w), None);
    }

    proptest::proptest! {
        /// Eligibility flips exactly once as time passes the heartbeat window.
        #[test]
        fn heartbeat_window_is_monotone(offset in 0i64..1_000) {
            let mc = cluster(Some(T0), vec![cond("Joined", "True", T0), cond("Healthy", "True", T0)]);
            let now = ts(T0).checked_add(SignedDuration::from_secs(offset)).unwrap();
            let eligible = check(&mc, now, &EligibilityWindows::default()).is_ok();
            proptest::prop_assert_eq!(eligible, offset <= 300);
        }
    }
}
