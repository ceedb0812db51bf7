//! What controllers read off a pod: phase, readiness and availability.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Pod, PodCondition};

use crate::objects::after;

/// The pod's phase (`Pending` if unset).
pub fn phase(pod: &Pod) -> &str {
    pod.status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or("Pending")
}

/// Whether the pod has finished (`Succeeded` or `Failed`).
pub fn is_terminal(pod: &Pod) -> bool {
    matches!(phase(pod), "Succeeded" | "Failed")
}

/// Whether a controller counts the pod as one of its replicas: not finished, not being deleted.
pub fn is_active(pod: &Pod) -> bool {
    !is_terminal(pod) && pod.metadata.deletion_timestamp.is_none()
}

/// The pod's condition of type `kind`.
pub fn condition<'a>(pod: &'a Pod, kind: &str) -> Option<&'a PodCondition> {
    pod.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == kind)
}

/// When the pod became Ready, if it is Ready.
pub fn ready_since(pod: &Pod) -> Option<Timestamp> {
    let ready = condition(pod, "Ready").filter(|c| c.status == "True")?;
    Some(
        ready
            .last_transition_time
            .as_ref()
            .map_or(Timestamp::UNIX_EPOCH, |t| t.0),
    )
}

/// Whether the pod is active and Ready.
pub fn is_ready(pod: &Pod) -> bool {
    is_active(pod) && ready_since(pod).is_some()
}

/// Whether the pod has been Ready for at least `min_ready_seconds` at `now`
/// (`podutil.IsPodAvailable`).
pub fn is_available(pod: &Pod, min_ready_seconds: i32, now: Timestamp) -> bool {
    is_active(pod)
        && ready_since(pod).is_some_and(|since| {
            min_ready_seconds <= 0 || after(since, min_ready_seconds.into()) <= now
        })
}

/// When a Ready pod that is not yet available becomes available (to wake up then).
pub fn available_at(pod: &Pod, min_ready_seconds: i32, now: Timestamp) -> Option<Timestamp> {
    let since = ready_since(pod).filter(|_| is_active(pod) && min_ready_seconds > 0)?;
    let at = after(since, min_ready_seconds.into());
    (at > now).then_some(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::time;
    use k8s_openapi::api::core::v1::PodStatus;

    fn pod(phase: &str, ready_at: Option<&str>) -> Pod {
        Pod {
            status: Some(PodStatus {
                phase: Some(phase.into()),
                conditions: ready_at.map(|t| {
                    vec![PodCondition {
                        type_: "Ready".into(),
                        status: "True".into(),
                        last_transition_time: Some(time(t.parse().unwrap())),
                        ..Default::default()
                    }]
                }),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn availability_waits_for_min_ready_seconds() {
        let now: Timestamp = "2026-01-01T00:00:10Z".parse().unwrap();
        let p = pod("Running", Some("2026-01-01T00:00:05Z"));
        assert!(is_ready(&p));
        assert!(is_available(&p, 0, now));
        assert!(is_available(&p, 5, now));
        assert!(!is_available(&p, 6, now));
        assert_eq!(
            available_at(&p, 6, now),
            Some("2026-01-01T00:00:11Z".parse().unwrap())
        );
        assert_eq!(available_at(&p, 5, now), None);
        let done = pod("Succeeded", Some("2026-01-01T00:00:05Z"));
        assert!(is_terminal(&done) && !is_active(&done) && !is_ready(&done));
        assert!(!is_available(&done, 0, now));
        assert_eq!(phase(&Pod::default()), "Pending");
    }
}
