//! What the member agent needs on its member cluster, installed by the agent itself: the
//! AppliedWork CustomResourceDefinition (every object the fleet places is owned by an
//! AppliedWork) and the agent's namespace, [`AGENT_NAMESPACE`].
//!
//! A real cluster serves neither until the agent installs them; a simulated member serves
//! AppliedWork as a built-in kind, and the agent leaves it alone. The definition carries the
//! hash of what this agent would install ([`DEFINITION_HASH`]), so a newer agent with a changed
//! schema upgrades it (server-side apply, the agent's field manager) and an agent of the same
//! version reads it once and writes nothing.
//!
//! When the agent cannot (no permission, an API error), [`SetupError`] says which step failed
//! and what to do ([`explain`]); the agent reports it in the member's `Healthy` condition and
//! the Work applier in each Work's `Applied` condition, and both try again later.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Patch, PatchParams};
use kube::{Api, Client};
use serde_json::json;

/// The member agent's namespace on its member (KubeFleet's).
pub const AGENT_NAMESPACE: &str = "fleet-system";
/// The field manager of what the agent installs.
pub const FIELD_MANAGER: &str = "flotilla-member-agent";
/// The label on everything the agent installs, and on what `flotilla join` prints: the
/// selector that removes the agent from a member.
pub const PART_OF: (&str, &str) = ("app.kubernetes.io/part-of", "flotilla-member-agent");
/// How to remove the agent from a member that has left the fleet.
pub const REMOVE_AGENT: &str = "kubectl delete namespace,clusterrole,clusterrolebinding,customresourcedefinition -l app.kubernetes.io/part-of=flotilla-member-agent";
/// Annotation on an installed definition: the hash of the definition this agent installs.
pub const DEFINITION_HASH: &str = "flotilla.dev/definition-hash";

/// How long to wait for an installed definition to be Established.
const ESTABLISH_TIMEOUT: Duration = Duration::from_secs(30);
/// How often to look while waiting.
const ESTABLISH_POLL: Duration = Duration::from_millis(200);

/// One step of the setup that failed, and the member API's answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}", explain(&self.step, self.code, &self.message))]
pub struct SetupError {
    /// What the agent was doing: `install CustomResourceDefinition appliedworks...`.
    pub step: String,
    /// The HTTP status the member's API answered with; none when it did not answer.
    pub code: Option<u16>,
    /// The answer, or why there was none.
    pub message: String,
}

impl SetupError {
    /// `step` failed with `error`.
    fn new(step: String, error: &kube::Error) -> SetupError {
        SetupError {
            step,
            code: status_code(error),
            message: api_message(error),
        }
    }
}

/// What the API said (its Status message), or why it did not answer.
pub fn api_message(error: &kube::Error) -> String {
    match error {
        kube::Error::Api(status) if !status.message.is_empty() => status.message.clone(),
        other => other.to_string(),
    }
}

/// The HTTP status of an API error; none when the API did not answer.
pub fn status_code(error: &kube::Error) -> Option<u16> {
    match error {
        kube::Error::Api(status) => Some(status.code),
        _ => None,
    }
}

/// What a user reads when `step` failed with HTTP status `code` (None: no answer) and
/// `message`: what failed, why, and what to do about it.
pub fn explain(step: &str, code: Option<u16>, message: &str) -> String {
    match code {
        Some(401) => format!(
            "the member cluster refused the agent's credentials to {step} ({message}): check the \
             agent's kubeconfig, or its service account token when it runs in the cluster"
        ),
        Some(403) => format!(
            "the agent's identity on the member may not {step} ({message}): bind it to the \
             ClusterRole flotilla-member-agent that `flotilla join` prints"
        ),
        Some(404) => format!(
            "the member does not serve what the agent needs to {step} ({message}): the agent \
             installs the AppliedWork CustomResourceDefinition when it joins; the MemberCluster's \
             Healthy condition says why it could not"
        ),
        Some(_) => format!("the member's API refused to {step} ({message}); retrying"),
        None => format!("could not reach the member's API to {step} ({message}); retrying"),
    }
}

/// Installs or upgrades what the agent needs on `member`; returns once the AppliedWork kind
/// is established.
pub async fn ensure(member: &Client) -> Result<(), SetupError> {
    for crd in flotilla_api::placement::member_crds() {
        ensure_definition(member, crd).await?;
    }
    ensure_namespace(member).await
}

/// The definition as the agent installs it: annotated with the hash of its content.
fn annotated(mut crd: CustomResourceDefinition) -> CustomResourceDefinition {
    let mut hasher = DefaultHasher::new();
    serde_json::to_string(&crd)
        .unwrap_or_default()
        .hash(&mut hasher);
    crd.metadata
        .labels
        .get_or_insert_with(Default::default)
        .insert(PART_OF.0.into(), PART_OF.1.into());
    crd.metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(DEFINITION_HASH.into(), format!("{:016x}", hasher.finish()));
    crd
}

/// Whether an installed definition is the one `wanted` (same hash) and established.
fn current(installed: &CustomResourceDefinition, wanted: &CustomResourceDefinition) -> bool {
    let hash = |crd: &CustomResourceDefinition| {
        crd.metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(DEFINITION_HASH))
            .cloned()
    };
    hash(installed).is_some() && hash(installed) == hash(wanted) && established(installed)
}

/// Whether a definition's `Established` condition is True.
fn established(crd: &CustomResourceDefinition) -> bool {
    crd.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| {
            c.iter()
                .any(|c| c.type_ == "Established" && c.status == "True")
        })
}

async fn ensure_definition(
    member: &Client,
    crd: CustomResourceDefinition,
) -> Result<(), SetupError> {
    let wanted = annotated(crd);
    let name = wanted.metadata.name.clone().unwrap_or_default();
    let failed = |verb: &str| {
        let step = format!("{verb} CustomResourceDefinition {name}");
        move |error: kube::Error| SetupError::new(step, &error)
    };
    let api: Api<CustomResourceDefinition> = Api::all(member.clone());
    let installed = api.get_opt(&name).await.map_err(failed("read"))?;
    if installed.as_ref().is_some_and(|i| current(i, &wanted)) {
        return Ok(());
    }
    if installed.is_none() && served_built_in(member, &wanted).await {
        return Ok(());
    }
    let params = PatchParams::apply(FIELD_MANAGER).force();
    api.patch(&name, &params, &Patch::Apply(&wanted))
        .await
        .map_err(failed("install"))?;
    let deadline = tokio::time::Instant::now() + ESTABLISH_TIMEOUT;
    loop {
        let now = api.get(&name).await.map_err(failed("read"))?;
        if established(&now) {
            return Ok(());
        }
        if tokio::time::Instant::now() > deadline {
            let message = now
                .status
                .and_then(|s| s.conditions)
                .unwrap_or_default()
                .into_iter()
                .map(|c| {
                    format!(
                        "{}={}: {}",
                        c.type_,
                        c.status,
                        c.message.unwrap_or_default()
                    )
                })
                .collect::<Vec<_>>()
                .join("; ");
            return Err(SetupError {
                step: format!("establish CustomResourceDefinition {name}"),
                code: None,
                message: format!("not Established after {ESTABLISH_TIMEOUT:?}: {message}"),
            });
        }
        tokio::time::sleep(ESTABLISH_POLL).await;
    }
}

/// Whether the member already serves the definition's kind without a definition object (a
/// simulated member serves AppliedWork as a built-in kind).
async fn served_built_in(member: &Client, crd: &CustomResourceDefinition) -> bool {
    let group = &crd.spec.group;
    let plural = &crd.spec.names.plural;
    let mut served = true;
    for version in crd.spec.versions.iter().filter(|v| v.served) {
        let listed = member
            .list_api_group_resources(&format!("{group}/{}", version.name))
            .await
            .is_ok_and(|list| list.resources.iter().any(|r| &r.name == plural));
        served &= listed;
    }
    served
}

async fn ensure_namespace(member: &Client) -> Result<(), SetupError> {
    let failed = |verb: &str| {
        let step = format!("{verb} namespace {AGENT_NAMESPACE}");
        move |error: kube::Error| SetupError::new(step, &error)
    };
    let api: Api<Namespace> = Api::all(member.clone());
    if api
        .get_opt(AGENT_NAMESPACE)
        .await
        .map_err(failed("read"))?
        .is_some()
    {
        return Ok(());
    }
    let namespace = json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": AGENT_NAMESPACE, "labels": {PART_OF.0: PART_OF.1}},
    });
    api.patch(
        AGENT_NAMESPACE,
        &PatchParams::apply(FIELD_MANAGER),
        &Patch::Apply(&namespace),
    )
    .await
    .map(drop)
    .map_err(failed("create"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_answer_names_the_step_and_what_to_do() {
        let step = "install CustomResourceDefinition appliedworks.placement.kubernetes-fleet.io";
        for (code, says) in [
            (Some(401), "credentials"),
            (
                Some(403),
                "ClusterRole flotilla-member-agent that `flotilla join` prints",
            ),
            (Some(404), "Healthy condition"),
            (Some(500), "retrying"),
            (None, "could not reach"),
        ] {
            let text = explain(step, code, "the answer");
            assert!(text.contains(step), "{text}");
            assert!(text.contains("the answer"), "{text}");
            assert!(text.contains(says), "{code:?}: {text}");
        }
    }

    #[test]
    fn a_definition_is_current_only_with_the_same_hash_and_established() {
        let wanted = annotated(flotilla_api::placement::member_crds().remove(0));
        let mut installed = wanted.clone();
        assert!(!current(&installed, &wanted), "not established yet");
        installed.status = Some(
            serde_json::from_value(json!({
                "conditions": [{"type": "Established", "status": "True"}]
            }))
            .unwrap(),
        );
        assert!(current(&installed, &wanted));
        let mut older = installed.clone();
        older
            .metadata
            .annotations
            .as_mut()
            .unwrap()
            .insert(DEFINITION_HASH.into(), "0".into());
        assert!(!current(&older, &wanted));
        let mut foreign = installed;
        foreign.metadata.annotations = None;
        assert!(!current(&foreign, &wanted));
    }
}
