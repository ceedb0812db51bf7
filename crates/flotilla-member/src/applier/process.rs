//! One manifest against the member cluster: read the live object, let the core decide, do
//! what it says, and judge the availability of the object the member returns.
//!
//! Every failure here is the manifest's, not the Work's: it becomes the manifest's outcome
//! (with the member API's answer in the message), and the other manifests go on.

use flotilla_api::placement::work::WorkResourceIdentifier;
use flotilla_apimachinery::patch::PatchError;
use kube::api::{Patch, PatchParams, PostParams};
use kube::core::DynamicObject;
use kube::{Api, Client};
use serde_json::{Value, json};

use super::{failure, member_api, send};
use crate::work::identifier;
use crate::work::manifest::FIELD_MANAGER;
use crate::work::merge::{self, KindFamily, MemberPatch};
use crate::work::{
    AppliedWorkOwner, ApplyMethod, Decision, Input, ManifestResult, Outcome, Planned,
    ProcessingResult, Strategy, applied, availability, decide,
};

/// Processes one planned manifest of a Work whose AppliedWork is `owner`.
pub(super) async fn process(
    member: &Client,
    planned: &Planned<'_>,
    strategy: Strategy,
    owner: &AppliedWorkOwner,
) -> ManifestResult {
    let id = &planned.identifier;
    let family = KindFamily::of(&id.group);
    let api = member_api(member, id);
    let live = match api.get_opt(&id.name).await {
        Ok(found) => found.map(to_value),
        Err(e) => {
            let outcome = Outcome::new(
                ProcessingResult::FailedToFindObjInMemberCluster,
                failure("reading", id, &e),
            );
            return result(id, outcome, None);
        }
    };
    let input = Input {
        manifest: planned.manifest,
        live: live.as_ref(),
        strategy,
        owner,
        lists: family.lists(),
    };
    // Only an existing object is applied over or taken over.
    let current = live.clone().unwrap_or_default();
    let (outcome, object) = match decide(&input) {
        Decision::Create {
            object,
            server_side,
        } => {
            let created = create(&api, id, object, server_side).await;
            settle(&input, created, None)
        }
        Decision::Apply { object, method } => {
            let written = write(&api, id, &object, method, &current, family).await;
            settle(&input, written, input.live.cloned())
        }
        Decision::Skip {
            outcome,
            take_over: Some(reference),
        } => {
            let desired = json!({"metadata": {"ownerReferences": [reference]}});
            let computed = merge::three_way_patch(None, &desired, &current, family);
            match patch(&api, id, computed, &current, family).await {
                Ok(taken) => (outcome, Some(taken)),
                Err(message) => (
                    Outcome::new(ProcessingResult::FailedToTakeOver, message),
                    live,
                ),
            }
        }
        Decision::Skip {
            outcome,
            take_over: None,
        }
        | Decision::Fail(outcome) => (outcome, live),
    };
    result(id, outcome, object)
}

/// The outcome of a create or apply that returned `written` (the object as the member now
/// stores it) or failed; `live` is the object as read before.
fn settle(
    input: &Input<'_>,
    written: Result<Value, String>,
    live: Option<Value>,
) -> (Outcome, Option<Value>) {
    match written {
        Ok(written) => (applied(input, &written), Some(written)),
        Err(message) => (Outcome::new(ProcessingResult::FailedToApply, message), live),
    }
}

/// Creates `object` on the member as the agent: with a server-side apply, or a plain create.
async fn create(
    api: &Api<DynamicObject>,
    id: &WorkResourceIdentifier,
    object: Value,
    server_side: bool,
) -> Result<Value, String> {
    if server_side {
        return server_side_apply(api, id, &object, false).await;
    }
    let object: DynamicObject = serde_json::from_value(object).map_err(|e| {
        format!(
            "{} is not a Kubernetes object: {e}",
            identifier::describe(id)
        )
    })?;
    let params = PostParams {
        field_manager: Some(FIELD_MANAGER.to_owned()),
        ..PostParams::default()
    };
    api.create(&params, &object)
        .await
        .map(to_value)
        .map_err(|e| failure("creating", id, &e))
}

/// Server-side applies `object` as the agent, forcing through conflicts if `force`.
async fn server_side_apply(
    api: &Api<DynamicObject>,
    id: &WorkResourceIdentifier,
    object: &Value,
    force: bool,
) -> Result<Value, String> {
    let mut params = PatchParams::apply(FIELD_MANAGER);
    params.force = force;
    api.patch(&id.name, &params, &Patch::Apply(object))
        .await
        .map(to_value)
        .map_err(|e| failure("server-side applying", id, &e))
}

/// Brings the existing object `live` to `object` with `method`.
async fn write(
    api: &Api<DynamicObject>,
    id: &WorkResourceIdentifier,
    object: &Value,
    method: ApplyMethod,
    live: &Value,
    family: KindFamily,
) -> Result<Value, String> {
    match method {
        ApplyMethod::ThreeWayMerge => {
            let last = merge::last_applied(live);
            patch(
                api,
                id,
                merge::three_way_patch(last.as_ref(), object, live, family),
                live,
                family,
            )
            .await
        }
        ApplyMethod::ServerSideApply { force } => server_side_apply(api, id, object, force).await,
    }
}

/// Sends a computed patch to the member object `live`, of a kind of `family`, unless it
/// changes nothing there: then `live` is already what the patch asks for.
async fn patch(
    api: &Api<DynamicObject>,
    id: &WorkResourceIdentifier,
    computed: Result<MemberPatch, PatchError>,
    live: &Value,
    family: KindFamily,
) -> Result<Value, String> {
    let computed = computed.map_err(|e| {
        format!(
            "the patch for {} could not be computed: {e}",
            identifier::describe(id)
        )
    })?;
    if merge::changes_nothing(&computed, live, family) {
        return Ok(live.clone());
    }
    send(api, &id.name, &computed)
        .await
        .map(to_value)
        .map_err(|e| failure("patching", id, &e))
}

/// The manifest's result, `object` being the member object as last seen (if any).
fn result(id: &WorkResourceIdentifier, outcome: Outcome, object: Option<Value>) -> ManifestResult {
    let field = |pointer: &str| object.as_ref().and_then(|o| o.pointer(pointer));
    ManifestResult {
        identifier: id.clone(),
        availability: object
            .as_ref()
            .filter(|_| outcome.result.is_applied())
            .map(availability),
        live_generation: field("/metadata/generation").and_then(Value::as_i64),
        live_uid: field("/metadata/uid")
            .and_then(Value::as_str)
            .map(str::to_owned),
        outcome,
    }
}

/// A member object as JSON.
fn to_value(object: DynamicObject) -> Value {
    serde_json::to_value(object).unwrap_or(Value::Null)
}
