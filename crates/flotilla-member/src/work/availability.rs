//! Whether an applied object is available on the member, judged from the object read back
//! (with its status), as KubeFleet's availability tracker does (`availability_tracker.go`).
//!
//! - **Deployment**: the controller observed the current generation, and `updatedReplicas` and
//!   `availableReplicas` equal `spec.replicas` (default 1) with no `unavailableReplicas`; and,
//!   unlike KubeFleet, no pods of an older revision are left (`status.replicas` is no more
//!   than `updatedReplicas`), as `kubectl rollout status` requires. Mid-rollout, a surge pod
//!   of the new revision and a still-available old one satisfy KubeFleet's counts before the
//!   new pod is ready; now that the applier checks a Deployment as soon as its status changes,
//!   it would catch that moment and call a rollout available that is not.
//! - **StatefulSet**: generation observed, `currentRevision == updateRevision`, and
//!   `readyReplicas`, `availableReplicas` and `currentReplicas` equal `spec.replicas`
//!   (default 1).
//! - **DaemonSet**: generation observed, `numberAvailable` and `updatedNumberScheduled` equal
//!   `desiredNumberScheduled`, no `numberUnavailable`.
//! - **Service**: ClusterIP and NodePort services once a cluster IP is assigned, LoadBalancer
//!   services once their first ingress has an IP or hostname, ExternalName services at once
//!   (a DNS alias has nothing to wait for; KubeFleet leaves them untracked).
//! - **CustomResourceDefinition**: `Established` and `NamesAccepted` are True.
//! - **PodDisruptionBudget**: its status is current (Kubernetes'
//!   `poddisruptionbudget.ConditionsAreUpToDate`: `status.observedGeneration` is the
//!   generation and the `DisruptionAllowed` condition agrees with `disruptionsAllowed`).
//! - **Data and policy kinds** (Namespace, ConfigMap, Secret, ServiceAccount, LimitRange,
//!   ResourceQuota, RBAC roles and bindings, NetworkPolicy, IngressClass, StorageClass, CSI
//!   drivers/nodes/capacities, ControllerRevision, PriorityClass): available at once.
//! - **Everything else is not trackable**, notably Jobs (completion is not availability: a Job
//!   may run for hours or fail by design, and waiting for it would stall a rollout) and
//!   PersistentVolumeClaims (a `WaitForFirstConsumer` claim stays Pending until a pod uses it).
//!   KubeFleet does the same; a rollout then waits `unavailablePeriodSeconds` instead.
//!
//! Kinds are matched on group and kind, in any version. Absent counters count as 0, as
//! Kubernetes omits zero counters.

use flotilla_api::conditions::NewCondition;
use serde_json::Value;

use super::outcome::{AVAILABLE, condition};

/// The availability of an applied object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Availability {
    /// Ready to serve.
    Available,
    /// Not yet; the text says why, e.g. `2/3 replicas available`.
    NotYetAvailable(String),
    /// Fleet cannot tell for this kind and treats it as available.
    NotTrackable,
}

impl Availability {
    /// The manifest's `Available` condition, with KubeFleet's reasons. Not trackable is True:
    /// Fleet then assumes availability (and the rollout waits `unavailablePeriodSeconds`).
    pub fn condition(&self) -> NewCondition<'static> {
        match self {
            Availability::Available => condition(
                AVAILABLE,
                "True",
                "Available",
                "Manifest is available".to_owned(),
            ),
            Availability::NotYetAvailable(why) => condition(
                AVAILABLE,
                "False",
                "ManifestNotAvailableYet",
                format!("Manifest is not yet available ({why}); Fleet will check again later"),
            ),
            Availability::NotTrackable => condition(
                AVAILABLE,
                "True",
                "NotTrackable",
                "Manifest's availability is not trackable; Fleet assumes that the applied \
                 manifest is available"
                    .to_owned(),
            ),
        }
    }
}

/// The availability of `live`, an object read back from the member with its status.
pub fn availability(live: &Value) -> Availability {
    let group = live
        .get("apiVersion")
        .and_then(Value::as_str)
        .and_then(|api_version| api_version.split_once('/'))
        .map_or("", |(group, _)| group);
    let kind = live.get("kind").and_then(Value::as_str).unwrap_or_default();
    let object = Object(live);
    match (group, kind) {
        ("apps", "Deployment") => deployment(object),
        ("apps", "StatefulSet") => stateful_set(object),
        ("apps", "DaemonSet") => daemon_set(object),
        ("", "Service") => service(object),
        ("apiextensions.k8s.io", "CustomResourceDefinition") => custom_resource_definition(object),
        ("policy", "PodDisruptionBudget") => pod_disruption_budget(object),
        (
            "",
            "Namespace" | "ConfigMap" | "Secret" | "ServiceAccount" | "LimitRange"
            | "ResourceQuota",
        )
        | (
            "rbac.authorization.k8s.io",
            "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding",
        )
        | ("networking.k8s.io", "NetworkPolicy" | "IngressClass")
        | ("storage.k8s.io", "StorageClass" | "CSIDriver" | "CSINode" | "CSIStorageCapacity")
        | ("apps", "ControllerRevision")
        | ("scheduling.k8s.io", "PriorityClass") => Availability::Available,
        _ => Availability::NotTrackable,
    }
}

/// Read access to the fields the checks use.
#[derive(Clone, Copy)]
struct Object<'v>(&'v Value);

impl<'v> Object<'v> {
    /// The integer at `pointer`, 0 when absent.
    fn int(self, pointer: &str) -> i64 {
        self.0.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
    }

    /// The string at `pointer`, empty when absent.
    fn text(self, pointer: &str) -> &'v str {
        self.0
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// `spec.replicas`, 1 when unset (the API default).
    fn desired_replicas(self) -> i64 {
        self.0
            .pointer("/spec/replicas")
            .and_then(Value::as_i64)
            .unwrap_or(1)
    }

    /// The status condition of type `type_`.
    fn condition(self, type_: &str) -> Option<&'v Value> {
        self.0
            .pointer("/status/conditions")
            .and_then(Value::as_array)?
            .iter()
            .find(|c| c.get("type").and_then(Value::as_str) == Some(type_))
    }

    /// Why the workload controller's status is stale, if it is.
    fn stale_generation(self) -> Option<String> {
        let generation = self.int("/metadata/generation");
        let observed = self.int("/status/observedGeneration");
        (observed < generation).then(|| {
            format!("the controller has observed generation {observed}, not {generation} yet")
        })
    }
}

/// `Available` when nothing is unmet, else the unmet requirements joined.
fn verdict(unmet: Vec<String>) -> Availability {
    if unmet.is_empty() {
        Availability::Available
    } else {
        Availability::NotYetAvailable(unmet.join(", "))
    }
}

/// `"2/3 replicas available"` when `actual` is not `desired`.
fn count_short(unmet: &mut Vec<String>, actual: i64, desired: i64, what: &str) {
    if actual != desired {
        unmet.push(format!("{actual}/{desired} {what}"));
    }
}

fn deployment(d: Object<'_>) -> Availability {
    let desired = d.desired_replicas();
    let mut unmet: Vec<String> = d.stale_generation().into_iter().collect();
    count_short(
        &mut unmet,
        d.int("/status/updatedReplicas"),
        desired,
        "replicas updated",
    );
    count_short(
        &mut unmet,
        d.int("/status/availableReplicas"),
        desired,
        "replicas available",
    );
    let unavailable = d.int("/status/unavailableReplicas");
    if unavailable != 0 {
        unmet.push(format!("{unavailable} unavailable"));
    }
    let old = d.int("/status/replicas") - d.int("/status/updatedReplicas");
    if old > 0 {
        unmet.push(format!("{old} old replicas pending termination"));
    }
    verdict(unmet)
}

fn stateful_set(s: Object<'_>) -> Availability {
    let desired = s.desired_replicas();
    let mut unmet: Vec<String> = s.stale_generation().into_iter().collect();
    let current = s.text("/status/currentRevision");
    let update = s.text("/status/updateRevision");
    if current != update {
        unmet.push(format!(
            "revision {update:?} is rolling out over {current:?}"
        ));
    }
    count_short(
        &mut unmet,
        s.int("/status/readyReplicas"),
        desired,
        "replicas ready",
    );
    count_short(
        &mut unmet,
        s.int("/status/availableReplicas"),
        desired,
        "replicas available",
    );
    count_short(
        &mut unmet,
        s.int("/status/currentReplicas"),
        desired,
        "replicas current",
    );
    verdict(unmet)
}

fn daemon_set(d: Object<'_>) -> Availability {
    let desired = d.int("/status/desiredNumberScheduled");
    let mut unmet: Vec<String> = d.stale_generation().into_iter().collect();
    count_short(
        &mut unmet,
        d.int("/status/numberAvailable"),
        desired,
        "pods available",
    );
    count_short(
        &mut unmet,
        d.int("/status/updatedNumberScheduled"),
        desired,
        "pods updated",
    );
    let unavailable = d.int("/status/numberUnavailable");
    if unavailable != 0 {
        unmet.push(format!("{unavailable} unavailable"));
    }
    verdict(unmet)
}

fn service(s: Object<'_>) -> Availability {
    match s.text("/spec/type") {
        "" | "ClusterIP" | "NodePort" => {
            let assigned =
                !s.text("/spec/clusterIPs/0").is_empty() || !s.text("/spec/clusterIP").is_empty();
            if assigned {
                Availability::Available
            } else {
                Availability::NotYetAvailable("no cluster IP assigned yet".to_owned())
            }
        }
        "LoadBalancer" => {
            let ingress = s.text("/status/loadBalancer/ingress/0/ip").is_empty()
                && s.text("/status/loadBalancer/ingress/0/hostname").is_empty();
            if ingress {
                Availability::NotYetAvailable(
                    "no load-balancer ingress IP or hostname yet".to_owned(),
                )
            } else {
                Availability::Available
            }
        }
        "ExternalName" => Availability::Available,
        _ => Availability::NotTrackable,
    }
}

fn custom_resource_definition(crd: Object<'_>) -> Availability {
    let unmet = ["Established", "NamesAccepted"]
        .into_iter()
        .filter(|type_| {
            crd.condition(type_)
                .and_then(|c| c.get("status"))
                .and_then(Value::as_str)
                != Some("True")
        })
        .map(|type_| format!("condition {type_} is not True"))
        .collect();
    verdict(unmet)
}

fn pod_disruption_budget(pdb: Object<'_>) -> Availability {
    if let Some(stale) = pdb.stale_generation() {
        return Availability::NotYetAvailable(stale);
    }
    let Some(condition) = pdb.condition("DisruptionAllowed") else {
        return Availability::NotYetAvailable(
            "the DisruptionAllowed condition is not reported yet".to_owned(),
        );
    };
    let field = |name: &str| condition.get(name).and_then(Value::as_str);
    let expected = if pdb.int("/status/disruptionsAllowed") > 0 {
        ("True", "SufficientPods")
    } else {
        ("False", "InsufficientPods")
    };
    if (field("status"), field("reason")) == (Some(expected.0), Some(expected.1)) {
        Availability::Available
    } else {
        Availability::NotYetAvailable(
            "the DisruptionAllowed condition does not reflect disruptionsAllowed yet".to_owned(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn not_yet(reason: &str) -> Availability {
        Availability::NotYetAvailable(reason.to_owned())
    }

    fn deployment(replicas: Option<i64>, status: Value) -> Value {
        let mut spec = json!({});
        if let Some(replicas) = replicas {
            spec["replicas"] = json!(replicas);
        }
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "web", "generation": 2}, "spec": spec, "status": status})
    }

    #[test]
    fn conditions() {
        let available = Availability::Available.condition();
        assert_eq!(
            (available.type_, available.status, available.reason),
            ("Available", "True", "Available")
        );
        let waiting = not_yet("1/2 replicas available").condition();
        assert_eq!(
            (waiting.status, waiting.reason, waiting.message.as_str()),
            (
                "False",
                "ManifestNotAvailableYet",
                "Manifest is not yet available (1/2 replicas available); Fleet will check again later"
            )
        );
        let untracked = Availability::NotTrackable.condition();
        assert_eq!(
            (untracked.status, untracked.reason),
            ("True", "NotTrackable")
        );
    }

    #[test]
    fn deployments() {
        let cases = [
            (
                Some(3),
                json!({"observedGeneration": 2, "replicas": 3, "updatedReplicas": 3, "availableReplicas": 3}),
                Availability::Available,
            ),
            (
                None,
                json!({"observedGeneration": 2, "updatedReplicas": 1, "availableReplicas": 1}),
                Availability::Available,
            ),
            (
                Some(0),
                json!({"observedGeneration": 2}),
                Availability::Available,
            ),
            (
                Some(3),
                json!({"observedGeneration": 2, "updatedReplicas": 3, "availableReplicas": 2, "unavailableReplicas": 1}),
                not_yet("2/3 replicas available, 1 unavailable"),
            ),
            (
                Some(3),
                json!({"observedGeneration": 1, "updatedReplicas": 3, "availableReplicas": 3}),
                not_yet("the controller has observed generation 1, not 2 yet"),
            ),
            (
                Some(2),
                json!({}),
                not_yet(
                    "the controller has observed generation 0, not 2 yet, 0/2 replicas updated, \
                     0/2 replicas available",
                ),
            ),
            (
                Some(2),
                json!({"observedGeneration": 3, "updatedReplicas": 1, "availableReplicas": 2}),
                not_yet("1/2 replicas updated"),
            ),
            (
                // Mid-rollout: the surge pod of the new revision is not ready, the old pod is.
                Some(1),
                json!({"observedGeneration": 2, "replicas": 2, "updatedReplicas": 1,
                       "availableReplicas": 1, "unavailableReplicas": 0}),
                not_yet("1 old replicas pending termination"),
            ),
        ];
        for (replicas, status, expected) in cases {
            assert_eq!(
                availability(&deployment(replicas, status.clone())),
                expected,
                "{status}"
            );
        }
    }

    #[test]
    fn stateful_sets() {
        let set = |status: Value| {
            json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
                   "metadata": {"generation": 1}, "spec": {"replicas": 2}, "status": status})
        };
        let done = json!({"observedGeneration": 1, "readyReplicas": 2, "availableReplicas": 2,
                          "currentReplicas": 2, "updatedReplicas": 2,
                          "currentRevision": "web-1", "updateRevision": "web-1"});
        assert_eq!(availability(&set(done)), Availability::Available);
        let rolling = json!({"observedGeneration": 1, "readyReplicas": 2, "availableReplicas": 2,
                             "currentReplicas": 1, "updatedReplicas": 1,
                             "currentRevision": "web-1", "updateRevision": "web-2"});
        assert_eq!(
            availability(&set(rolling)),
            not_yet("revision \"web-2\" is rolling out over \"web-1\", 1/2 replicas current")
        );
        let starting = json!({"observedGeneration": 1, "readyReplicas": 1, "availableReplicas": 1,
                              "currentReplicas": 2, "currentRevision": "r", "updateRevision": "r"});
        assert_eq!(
            availability(&set(starting)),
            not_yet("1/2 replicas ready, 1/2 replicas available")
        );
    }

    #[test]
    fn daemon_sets() {
        let set = |status: Value| {
            json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
                   "metadata": {"generation": 4}, "status": status})
        };
        let cases = [
            (
                json!({"observedGeneration": 4, "desiredNumberScheduled": 3, "numberAvailable": 3,
                       "updatedNumberScheduled": 3, "currentNumberScheduled": 3}),
                Availability::Available,
            ),
            (json!({"observedGeneration": 4}), Availability::Available),
            (
                json!({"observedGeneration": 4, "desiredNumberScheduled": 3, "numberAvailable": 2,
                       "updatedNumberScheduled": 3, "numberUnavailable": 1}),
                not_yet("2/3 pods available, 1 unavailable"),
            ),
            (
                json!({"observedGeneration": 4, "desiredNumberScheduled": 3, "numberAvailable": 3,
                       "updatedNumberScheduled": 1}),
                not_yet("1/3 pods updated"),
            ),
        ];
        for (status, expected) in cases {
            assert_eq!(availability(&set(status.clone())), expected, "{status}");
        }
    }

    #[test]
    fn services() {
        let svc = |spec: Value, status: Value| json!({"apiVersion": "v1", "kind": "Service", "spec": spec, "status": status});
        let cases = [
            (
                json!({"clusterIP": "10.0.0.5", "clusterIPs": ["10.0.0.5"]}),
                json!({}),
                Availability::Available,
            ),
            (
                json!({"type": "ClusterIP", "clusterIP": "None", "clusterIPs": ["None"]}),
                json!({}),
                Availability::Available,
            ),
            (
                json!({"type": "NodePort"}),
                json!({}),
                not_yet("no cluster IP assigned yet"),
            ),
            (
                json!({"type": "LoadBalancer", "clusterIP": "10.0.0.5"}),
                json!({"loadBalancer": {}}),
                not_yet("no load-balancer ingress IP or hostname yet"),
            ),
            (
                json!({"type": "LoadBalancer"}),
                json!({"loadBalancer": {"ingress": [{"ip": "20.1.2.3"}]}}),
                Availability::Available,
            ),
            (
                json!({"type": "LoadBalancer"}),
                json!({"loadBalancer": {"ingress": [{"hostname": "lb.example.com"}]}}),
                Availability::Available,
            ),
            (
                json!({"type": "ExternalName", "externalName": "db.example.com"}),
                json!({}),
                Availability::Available,
            ),
            (
                json!({"type": "Mystery"}),
                json!({}),
                Availability::NotTrackable,
            ),
        ];
        for (spec, status, expected) in cases {
            assert_eq!(availability(&svc(spec.clone(), status)), expected, "{spec}");
        }
    }

    #[test]
    fn custom_resource_definitions() {
        let crd = |conditions: Value| {
            json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                   "status": {"conditions": conditions}})
        };
        assert_eq!(
            availability(&crd(json!([
                {"type": "NamesAccepted", "status": "True"},
                {"type": "Established", "status": "True"}
            ]))),
            Availability::Available
        );
        assert_eq!(
            availability(&crd(json!([
                {"type": "NamesAccepted", "status": "True"},
                {"type": "Established", "status": "False"}
            ]))),
            not_yet("condition Established is not True")
        );
        assert_eq!(
            availability(&crd(json!([]))),
            not_yet("condition Established is not True, condition NamesAccepted is not True")
        );
    }

    #[test]
    fn pod_disruption_budgets() {
        let pdb = |status: Value| {
            json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                   "metadata": {"generation": 2}, "status": status})
        };
        let allowed = |status: &str, reason: &str| json!([{"type": "DisruptionAllowed", "status": status, "reason": reason}]);
        let cases = [
            (
                json!({"observedGeneration": 2, "disruptionsAllowed": 1,
                       "conditions": allowed("True", "SufficientPods")}),
                Availability::Available,
            ),
            (
                json!({"observedGeneration": 2, "conditions": allowed("False", "InsufficientPods")}),
                Availability::Available,
            ),
            (
                json!({"observedGeneration": 2, "disruptionsAllowed": 1,
                       "conditions": allowed("False", "InsufficientPods")}),
                not_yet("the DisruptionAllowed condition does not reflect disruptionsAllowed yet"),
            ),
            (
                json!({"observedGeneration": 2}),
                not_yet("the DisruptionAllowed condition is not reported yet"),
            ),
            (
                json!({"observedGeneration": 1, "conditions": allowed("False", "InsufficientPods")}),
                not_yet("the controller has observed generation 1, not 2 yet"),
            ),
        ];
        for (status, expected) in cases {
            assert_eq!(availability(&pdb(status.clone())), expected, "{status}");
        }
    }

    #[test]
    fn data_kinds_are_available_and_the_rest_untracked() {
        let available = [
            ("v1", "Namespace"),
            ("v1", "ConfigMap"),
            ("v1", "Secret"),
            ("v1", "ServiceAccount"),
            ("v1", "LimitRange"),
            ("v1", "ResourceQuota"),
            ("rbac.authorization.k8s.io/v1", "Role"),
            ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
            ("networking.k8s.io/v1", "NetworkPolicy"),
            ("storage.k8s.io/v1", "StorageClass"),
            ("scheduling.k8s.io/v1", "PriorityClass"),
        ];
        for (api_version, kind) in available {
            let object = json!({"apiVersion": api_version, "kind": kind});
            assert_eq!(availability(&object), Availability::Available, "{kind}");
        }
        let untracked = [
            ("batch/v1", "Job"),
            ("batch/v1", "CronJob"),
            ("v1", "PersistentVolumeClaim"),
            ("v1", "Pod"),
            ("networking.k8s.io/v1", "Ingress"),
            ("example.com/v1", "Deployment"),
            ("example.com/v1", "Widget"),
        ];
        for (api_version, kind) in untracked {
            let object = json!({"apiVersion": api_version, "kind": kind});
            assert_eq!(availability(&object), Availability::NotTrackable, "{kind}");
        }
    }
}
