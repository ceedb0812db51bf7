//! `flotilla approve <name>`: approves a stage of a staged update run by setting the `Approved`
//! condition of its `ClusterApprovalRequest`, the status patch the seed gives to kubectl. The
//! request is read first and its whole condition list written back, because a merge patch
//! replaces lists: conditions already there (e.g. `ApprovalAccepted`) are kept. With
//! `-n NAMESPACE` it approves the namespaced `ApprovalRequest` of a `StagedUpdateRun` instead.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;
use flotilla_api::conditions::{NewCondition, is_true, set_condition};
use flotilla_api::placement::approval_request::APPROVED_CONDITION;
use flotilla_api::placement::{ApprovalRequest, ClusterApprovalRequest};
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::{Patch, PatchParams};
use kube::{Api, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// The approval's default reason (KubeFleet's `kubectl fleet approve` writes the same).
pub const DEFAULT_REASON: &str = "ClusterApprovalRequestApproved";
/// The approval's default message (KubeFleet's `kubectl fleet approve` writes the same).
pub const DEFAULT_MESSAGE: &str = "ClusterApprovalRequest has been approved";
/// How kubectl names the kind in its messages (`clusterapprovalrequest.placement…/<name>`).
pub const KUBECTL_KIND: &str = "clusterapprovalrequest.placement.kubernetes-fleet.io";

/// How many times the read-and-patch is retried when the request changes in between.
const ATTEMPTS: usize = 5;

/// Arguments of `flotilla approve`.
#[derive(Debug, Args)]
pub struct ApproveArgs {
    /// The ClusterApprovalRequest to approve (`kubectl get clusterapprovalrequests` lists them).
    pub name: String,
    /// The `Approved` condition's reason (CamelCase).
    #[arg(long, default_value = DEFAULT_REASON)]
    pub reason: String,
    /// The `Approved` condition's message.
    #[arg(long, default_value = DEFAULT_MESSAGE)]
    pub message: String,
    /// The namespace of a namespaced `ApprovalRequest` (of a `StagedUpdateRun`); without it,
    /// the cluster-scoped `ClusterApprovalRequest`.
    #[arg(long, short = 'n')]
    pub namespace: Option<String>,
    /// The hub's kubeconfig; default `$KUBECONFIG`, else `.flotilla/kubeconfig`.
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
}

/// Approves the request and prints what kubectl would print.
pub async fn run(args: ApproveArgs) -> Result<()> {
    let client = crate::member::hub_client(args.kubeconfig.clone()).await?;
    match &args.namespace {
        Some(namespace) => {
            let api = Api::<ApprovalRequest>::namespaced(client, namespace);
            approve(api, "approvalrequest.placement.kubernetes-fleet.io", &args).await
        }
        None => {
            approve(
                Api::<ClusterApprovalRequest>::all(client),
                KUBECTL_KIND,
                &args,
            )
            .await
        }
    }
}

/// Approves request `args.name` of `api`, kubectl naming the kind `kubectl_kind`.
async fn approve<K>(api: Api<K>, kubectl_kind: &str, args: &ApproveArgs) -> Result<()>
where
    K: Resource<DynamicType = ()>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug
        + Into<ClusterApprovalRequest>,
{
    let kind = K::kind(&());
    let name = &args.name;
    for _ in 0..ATTEMPTS {
        let Some(request) = api.get_opt(name).await.context("reaching the hub")? else {
            bail!(
                "{kind} {name:?} not found on the hub (`kubectl get {}s` lists them)",
                kind.to_lowercase()
            );
        };
        let request: ClusterApprovalRequest = request.into();
        if is_true(conditions(&request), APPROVED_CONDITION) {
            println!("{kubectl_kind}/{name} already approved");
            return Ok(());
        }
        let patch = approval_patch(&request, &args.reason, &args.message, Timestamp::now());
        match api
            .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => {
                println!("{kubectl_kind}/{name} approved");
                return Ok(());
            }
            // The request changed since it was read: read it again.
            Err(kube::Error::Api(status)) if status.code == 409 => continue,
            Err(kube::Error::Api(status)) => bail!(
                "the hub refused to approve {kind} {name:?}: {}",
                status.message
            ),
            Err(e) => return Err(e).context("reaching the hub"),
        }
    }
    bail!("{kind} {name:?} kept changing while being approved; try again")
}

/// The request's conditions (none when it has no status yet).
fn conditions(request: &ClusterApprovalRequest) -> &[Condition] {
    request
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_deref())
        .unwrap_or_default()
}

/// The status merge patch approving `request` at `now`: its full condition list with
/// `Approved=True` (observed at the request's generation) in place of any earlier `Approved`,
/// and the request's resourceVersion, so the hub refuses it (409) if the request changed since
/// it was read rather than losing a condition written in between.
pub fn approval_patch(
    request: &ClusterApprovalRequest,
    reason: &str,
    message: &str,
    now: Timestamp,
) -> Value {
    let mut conditions = conditions(request).to_vec();
    set_condition(
        &mut conditions,
        NewCondition {
            type_: APPROVED_CONDITION,
            status: "True",
            reason,
            message: message.to_string(),
            observed_generation: request.metadata.generation,
        },
        now,
    );
    json!({
        "metadata": {"resourceVersion": request.resource_version()},
        "status": {"conditions": conditions},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(yaml: &str) -> ClusterApprovalRequest {
        serde_saphyr::from_str(yaml).unwrap()
    }

    const ACCEPTED_BUT_NOT_APPROVED: &str = r#"
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterApprovalRequest
metadata: {name: example-staged-update-run-canary, generation: 2, resourceVersion: "41"}
spec: {parentStageRollout: example-staged-update-run, targetStage: canary}
status:
  conditions:
  - {type: Approved, status: "False", reason: NotYet, message: waiting, observedGeneration: 1, lastTransitionTime: "2025-03-12T06:00:00Z"}
  - {type: Other, status: "True", reason: Kept, message: kept, observedGeneration: 2, lastTransitionTime: "2025-03-12T06:01:00Z"}
"#;

    #[test]
    fn the_patch_replaces_approved_keeps_the_rest_and_is_guarded_by_the_resource_version() {
        let now: Timestamp = "2025-03-12T06:15:21Z".parse().unwrap();
        let patch = approval_patch(
            &request(ACCEPTED_BUT_NOT_APPROVED),
            "testPassed",
            "lgtm",
            now,
        );
        assert_eq!(
            patch,
            json!({
                "metadata": {"resourceVersion": "41"},
                "status": {"conditions": [
                    {"type": "Approved", "status": "True", "reason": "testPassed", "message": "lgtm",
                     "lastTransitionTime": "2025-03-12T06:15:21Z", "observedGeneration": 2},
                    {"type": "Other", "status": "True", "reason": "Kept", "message": "kept",
                     "lastTransitionTime": "2025-03-12T06:01:00Z", "observedGeneration": 2},
                ]},
            })
        );
    }

    #[test]
    fn a_request_without_status_gets_the_seeds_single_condition() {
        let now: Timestamp = "2025-03-12T06:15:21Z".parse().unwrap();
        let fresh = request(
            r#"
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterApprovalRequest
metadata: {name: example-staged-update-run-canary, generation: 1, resourceVersion: "7"}
spec: {parentStageRollout: example-staged-update-run, targetStage: canary}
"#,
        );
        let patch = approval_patch(&fresh, DEFAULT_REASON, DEFAULT_MESSAGE, now);
        assert_eq!(
            patch["status"],
            json!({"conditions": [{
                "type": "Approved", "status": "True", "reason": DEFAULT_REASON,
                "message": DEFAULT_MESSAGE, "lastTransitionTime": "2025-03-12T06:15:21Z",
                "observedGeneration": 1,
            }]})
        );
    }
}
