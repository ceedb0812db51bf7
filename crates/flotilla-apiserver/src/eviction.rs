//! The `pods/eviction` subresource (`policy/v1` Eviction), as kube-apiserver serves it and
//! `kubectl drain` uses it: a pod is deleted only if the one PodDisruptionBudget selecting it
//! (if any) allows one more disruption, which the eviction takes from the budget's status
//! (`disruptionsAllowed` − 1, the pod recorded in `disruptedPods`) before deleting the pod.
//! Pods that are not running (Pending, Succeeded, Failed) or already terminating ignore
//! budgets; an unready pod is evicted without taking a disruption when its budget is healthy
//! (`unhealthyPodEvictionPolicy` IfHealthyBudget) or always (AlwaysAllow). A budget its
//! controller has not yet processed (`status.observedGeneration` behind) refuses, as does one
//! at zero: 429 TooManyRequests with a `DisruptionBudget` cause saying why. The decisions are
//! pure ([`decide`]); the engine reads, writes the budget's status at the version it read, and
//! deletes the pod with its uid as precondition.

use flotilla_apimachinery::selector::from_label_selector_json;
use serde_json::{Value, json};

use crate::engine::{DeleteOptions, Engine, WriteOptions, target};
use crate::object::{meta_str, metadata};
use crate::registry::ResourceInfo;
use crate::status::{ApiError, ApiResult};

/// kube's refusal when a budget does not allow the eviction.
pub const VIOLATES_BUDGET: &str =
    "Cannot evict pod as it would violate the pod's disruption budget.";

/// kube's refusal when several budgets select the pod.
pub const SEVERAL_BUDGETS: &str = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.";

/// Most pods a budget may record as disrupted and not yet confirmed (kube's limit).
pub const MAX_DISRUPTED_PODS: usize = 2000;

/// What an eviction does.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Delete the pod; no budget is involved.
    Delete,
    /// Take one disruption from budget `pdb` (its status becomes `status`), then delete.
    Disrupt {
        /// The budget's name.
        pdb: String,
        /// Its new status.
        status: Value,
    },
}

/// Whether budget `pdb` selects `pod` (policy/v1: an empty selector selects every pod of the
/// namespace, a missing one none).
pub fn selects(pdb: &Value, pod: &Value) -> bool {
    let Some(selector) = pdb.pointer("/spec/selector") else {
        return false;
    };
    let labels = metadata(pod)
        .get("labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    from_label_selector_json(selector).is_ok_and(|s| s.matches(&labels))
}

/// Whether the pod may be evicted regardless of budgets: not running, or already going.
fn ignores_budgets(pod: &Value) -> bool {
    let phase = pod.pointer("/status/phase").and_then(Value::as_str);
    matches!(phase, Some("Pending" | "Succeeded" | "Failed") | None)
        || metadata(pod).get("deletionTimestamp").is_some()
}

fn ready(pod: &Value) -> bool {
    pod.pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True")
}

fn number(pdb: &Value, field: &str) -> i64 {
    pdb.pointer(&format!("/status/{field}"))
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

/// 429 with a `DisruptionBudget` cause.
fn refused(why: String) -> ApiError {
    let mut e = ApiError::too_many_requests(VIOLATES_BUDGET);
    e.retry_after = None;
    e.causes = vec![json!({"reason": "DisruptionBudget", "message": why})];
    e
}

/// What evicting `pod` at `now` (RFC 3339) does, given the budgets in its namespace that
/// select it.
pub fn decide(pod: &Value, budgets: &[&Value], now: &str) -> ApiResult<Verdict> {
    if ignores_budgets(pod) {
        return Ok(Verdict::Delete);
    }
    let pdb = match budgets {
        [] => return Ok(Verdict::Delete),
        [one] => *one,
        _ => return Err(ApiError::internal(SEVERAL_BUDGETS)),
    };
    let name = meta_str(pdb, "name").unwrap_or_default().to_string();
    let (healthy, desired) = (number(pdb, "currentHealthy"), number(pdb, "desiredHealthy"));
    if !ready(pod) {
        let policy = pdb
            .pointer("/spec/unhealthyPodEvictionPolicy")
            .and_then(Value::as_str);
        if policy == Some("AlwaysAllow") || (healthy >= desired && desired > 0) {
            return Ok(Verdict::Delete);
        }
    }
    let generation = metadata(pdb)
        .get("generation")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if number(pdb, "observedGeneration") < generation {
        return Err(refused(format!(
            "The disruption budget {name} is still being processed by the server."
        )));
    }
    let allowed = number(pdb, "disruptionsAllowed");
    let pdb_target = || target_of(&name);
    if allowed < 0 {
        return Err(ApiError::forbidden(
            &pdb_target(),
            "pdb disruptions allowed is negative",
        ));
    }
    let disrupted = pdb
        .pointer("/status/disruptedPods")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if disrupted.len() > MAX_DISRUPTED_PODS {
        return Err(ApiError::forbidden(
            &pdb_target(),
            "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
        ));
    }
    if allowed == 0 {
        return Err(refused(format!(
            "The disruption budget {name} needs {desired} healthy pods and has {healthy} currently"
        )));
    }
    let mut status = pdb.get("status").cloned().unwrap_or_else(|| json!({}));
    status["disruptionsAllowed"] = json!(allowed - 1);
    let mut disrupted = disrupted;
    disrupted.insert(
        meta_str(pod, "name").unwrap_or_default().to_string(),
        json!(now),
    );
    status["disruptedPods"] = Value::Object(disrupted);
    Ok(Verdict::Disrupt { pdb: name, status })
}

fn target_of(pdb: &str) -> crate::status::Target {
    crate::status::Target {
        group: "policy".into(),
        resource: "poddisruptionbudgets".into(),
        name: pdb.into(),
    }
}

/// The Eviction's own checks: its name is the pod's, its delete options well formed.
pub fn check_body(eviction: &Value, pod: &str) -> ApiResult<DeleteOptions> {
    if let Some(name) = meta_str(eviction, "name")
        && name != pod
    {
        return Err(ApiError::bad_request(
            "name in URL does not match name in Eviction object",
        ));
    }
    let options = eviction
        .get("deleteOptions")
        .cloned()
        .unwrap_or(Value::Null);
    let text = |p: &str| options.pointer(p).and_then(Value::as_str).map(String::from);
    let dry_run = options
        .get("dryRun")
        .and_then(Value::as_array)
        .is_some_and(|d| d.iter().any(|v| v == "All"));
    Ok(DeleteOptions {
        propagation: text("/propagationPolicy"),
        precondition_uid: text("/preconditions/uid"),
        precondition_rv: text("/preconditions/resourceVersion"),
        dry_run,
    })
}

impl Engine {
    /// Evicts pod `name` in `ns` (the `pods/eviction` subresource), answering kube's 201
    /// `Success` Status.
    pub async fn evict(
        &self,
        pods: &ResourceInfo,
        ns: &str,
        name: &str,
        eviction: &Value,
    ) -> ApiResult<Value> {
        let mut options = check_body(eviction, name)?;
        let snap = self.registry().snapshot();
        let budgets_info = snap
            .get("policy", "v1", "poddisruptionbudgets")
            .ok_or_else(|| ApiError::internal("PodDisruptionBudgets are not served"))?;
        for _ in 0..16 {
            let pod = self.get(pods, Some(ns), name).await?;
            let listed = self
                .list(&budgets_info, Some(ns), &Default::default())
                .await?;
            let items = listed.items;
            let selecting: Vec<&Value> = items.iter().filter(|b| selects(b, &pod)).collect();
            let now = crate::clock::rfc3339(self.clock.now());
            match decide(&pod, &selecting, &now)? {
                Verdict::Delete => {}
                Verdict::Disrupt { pdb, status } => {
                    let current = selecting
                        .iter()
                        .find(|b| meta_str(b, "name") == Some(pdb.as_str()))
                        .map(|b| {
                            meta_str(b, "resourceVersion")
                                .unwrap_or_default()
                                .to_string()
                        })
                        .unwrap_or_default();
                    if !options.dry_run {
                        let written = self
                            .guaranteed_update(
                                &budgets_info,
                                Some(ns),
                                &pdb,
                                Some("status"),
                                &WriteOptions::default(),
                                |cur| {
                                    let cur = cur.ok_or_else(|| {
                                        ApiError::not_found(&target(&budgets_info, &pdb))
                                    })?;
                                    if meta_str(cur, "resourceVersion") != Some(current.as_str()) {
                                        return Err(ApiError::conflict(
                                            &target(&budgets_info, &pdb),
                                            "the budget changed",
                                        ));
                                    }
                                    let mut next = cur.clone();
                                    next["status"] = status.clone();
                                    Ok(next)
                                },
                            )
                            .await;
                        match written {
                            Ok(_) => {}
                            // Another eviction took a disruption first: decide again.
                            Err(e) if e.code == 409 => continue,
                            Err(e) => return Err(e),
                        }
                    }
                }
            }
            if options.precondition_uid.is_none() {
                options.precondition_uid = meta_str(&pod, "uid").map(String::from);
            }
            self.delete(pods, Some(ns), name, &options).await?;
            return Ok(json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
                              "status": "Success", "code": 201}));
        }
        Err(ApiError::conflict(
            &target(pods, name),
            "the disruption budget kept changing; retry the eviction",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: &str = "2026-01-01T00:00:00Z";

    fn pod(phase: &str, ready: bool) -> Value {
        json!({"metadata": {"name": "web-1", "uid": "u1", "labels": {"app": "web"}},
               "status": {"phase": phase, "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]}})
    }

    fn pdb(allowed: i64, healthy: i64, desired: i64, observed: i64) -> Value {
        json!({"metadata": {"name": "web", "generation": 2},
               "spec": {"selector": {"matchLabels": {"app": "web"}}},
               "status": {"disruptionsAllowed": allowed, "currentHealthy": healthy, "desiredHealthy": desired,
                          "observedGeneration": observed, "expectedPods": 3}})
    }

    fn cause(e: &ApiError) -> &str {
        e.causes[0]["message"].as_str().unwrap()
    }

    #[test]
    fn budgets_decide_evictions_as_kube_does() {
        let running = pod("Running", true);
        assert_eq!(decide(&running, &[], NOW), Ok(Verdict::Delete), "no budget");
        let budget = pdb(1, 3, 2, 2);
        let Ok(Verdict::Disrupt { pdb: name, status }) = decide(&running, &[&budget], NOW) else {
            panic!("one disruption allowed")
        };
        assert_eq!(name, "web");
        assert_eq!(status["disruptionsAllowed"], 0);
        assert_eq!(status["disruptedPods"]["web-1"], NOW);
        assert_eq!(
            status["currentHealthy"], 3,
            "the rest of the status is kept"
        );

        let e = decide(&running, &[&pdb(0, 2, 2, 2)], NOW).unwrap_err();
        assert_eq!(
            (e.code, e.reason, e.message.as_str()),
            (429, "TooManyRequests", VIOLATES_BUDGET)
        );
        assert_eq!(
            cause(&e),
            "The disruption budget web needs 2 healthy pods and has 2 currently"
        );
        assert_eq!(e.causes[0]["reason"], "DisruptionBudget");

        let e = decide(&running, &[&pdb(1, 3, 2, 1)], NOW).unwrap_err();
        assert_eq!(
            cause(&e),
            "The disruption budget web is still being processed by the server."
        );
        let e = decide(&running, &[&pdb(-1, 3, 2, 2)], NOW).unwrap_err();
        assert_eq!(e.code, 403);
        let e = decide(&running, &[&budget, &budget], NOW).unwrap_err();
        assert_eq!(e.code, 500);
        assert_eq!(
            e.message,
            format!("Internal error occurred: {SEVERAL_BUDGETS}"),
            "kube's internal error wording"
        );
    }

    #[test]
    fn pods_not_running_or_unready_under_a_healthy_budget_skip_the_budget() {
        let zero = pdb(0, 2, 2, 2);
        for phase in ["Pending", "Succeeded", "Failed"] {
            assert_eq!(
                decide(&pod(phase, false), &[&zero], NOW),
                Ok(Verdict::Delete),
                "{phase}"
            );
        }
        let mut going = pod("Running", true);
        going["metadata"]["deletionTimestamp"] = json!(NOW);
        assert_eq!(decide(&going, &[&zero], NOW), Ok(Verdict::Delete));
        // Unready, healthy budget: evicted without taking a disruption.
        assert_eq!(
            decide(&pod("Running", false), &[&zero], NOW),
            Ok(Verdict::Delete)
        );
        // Unready, budget short of healthy pods: refused unless AlwaysAllow.
        let short = pdb(0, 1, 2, 2);
        assert!(decide(&pod("Running", false), &[&short], NOW).is_err());
        let mut always = short.clone();
        always["spec"]["unhealthyPodEvictionPolicy"] = json!("AlwaysAllow");
        assert_eq!(
            decide(&pod("Running", false), &[&always], NOW),
            Ok(Verdict::Delete)
        );
    }

    #[test]
    fn a_budget_selects_by_its_selector() {
        let running = pod("Running", true);
        assert!(selects(&pdb(1, 1, 1, 1), &running));
        let mut other = pdb(1, 1, 1, 1);
        other["spec"]["selector"] = json!({"matchLabels": {"app": "db"}});
        assert!(!selects(&other, &running));
        other["spec"]["selector"] = json!({});
        assert!(selects(&other, &running), "empty selects all");
        other["spec"].as_object_mut().unwrap().remove("selector");
        assert!(!selects(&other, &running), "none selects none");
    }

    #[test]
    fn the_eviction_names_its_pod() {
        let e = check_body(&json!({"metadata": {"name": "other"}}), "web-1").unwrap_err();
        assert_eq!(e.code, 400);
        let opts = check_body(
            &json!({"metadata": {"name": "web-1"}, "deleteOptions": {"dryRun": ["All"], "preconditions": {"uid": "u1"}}}),
            "web-1",
        )
        .unwrap();
        assert!(opts.dry_run);
        assert_eq!(opts.precondition_uid.as_deref(), Some("u1"));
    }
}
