//! Writing an object's status from a controller, at the version the controller read: a
//! merge patch of the whole status, or a JSON patch (RFC 6902) of only what changed. Both
//! carry the `resourceVersion` read as a precondition, so another writer of the same status
//! makes the write a 409 (retried from a fresh read) rather than a lost update.
//!
//! Both answer with the written object's new `resourceVersion` only: the hub answers with the
//! whole object, megabytes for a run or placement listing every member, and a controller that
//! learns the rest through its watch need not decode it a second time.

use kube::Api;
use kube::api::{Patch, PatchParams};
use kube::core::Request;
use serde::Deserialize;
use serde_json::{Value, json};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// Merge-patches the status of the object with metadata `object` (as read, in any form of
/// it) with `status`, only if the object is still at the version read (another controller
/// writing the same status makes this a conflict, retried from a fresh read, rather than a
/// lost update). Returns the written object's resourceVersion.
pub async fn status<K: kube::Resource + Clone>(
    api: &Api<K>,
    object: &ObjectMeta,
    status: Value,
) -> Result<Option<String>, kube::Error> {
    let patch = json!({
        "metadata": {"resourceVersion": object.resource_version},
        "status": status,
    });
    patch_status(api, object, &Patch::Merge(patch)).await
}

/// What is read of a status write's answer: the resourceVersion; serde skips the rest.
#[derive(Deserialize)]
struct Answer {
    #[serde(default)]
    metadata: AnswerMeta,
}

/// The metadata of [`Answer`].
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct AnswerMeta {
    resource_version: Option<String>,
}

/// Sends `patch` to the status subresource of `object` through `api`'s client and URL,
/// reading only the new resourceVersion from the answer.
async fn patch_status<K: kube::Resource + Clone, P: serde::Serialize>(
    api: &Api<K>,
    object: &ObjectMeta,
    patch: &Patch<P>,
) -> Result<Option<String>, kube::Error> {
    let name = object.name.as_deref().unwrap_or_default();
    let mut request = Request::new(api.resource_url())
        .patch_subresource("status", name, &PatchParams::default(), patch)
        .map_err(kube::Error::BuildRequest)?;
    request.extensions_mut().insert("patch_status");
    let answer: Answer = api.clone().into_client().request(request).await?;
    Ok(answer.metadata.resource_version)
}

/// Patches the status of the object with metadata `object` (as read) from `old` to `new`
/// with a JSON patch (RFC 6902) of their differences only, at the version read (a conflict
/// otherwise, as for [`status`]). A status of megabytes — a staged run lists every cluster —
/// changes by kilobytes in a pass: sending only those keeps the request far below the hub's
/// 3 MiB limit and spares both sides encoding and decoding the rest. Without an old status,
/// or if the patch does not apply to the stored status (a field the typed status does not
/// model), the whole status is merge-patched instead; a status the hub finds invalid is an
/// error either way. Returns the written object's resourceVersion.
pub async fn status_changes<K: kube::Resource + Clone>(
    api: &Api<K>,
    object: &ObjectMeta,
    old: Option<&Value>,
    new: &Value,
) -> Result<Option<String>, kube::Error> {
    let Some(old) = old else {
        return status(api, object, new.clone()).await;
    };
    let version = object.resource_version.as_deref().unwrap_or_default();
    let patch = status_patch(version, old, new);
    match patch_status(api, object, &Patch::<()>::Json(patch)).await {
        Ok(patched) => Ok(patched),
        Err(kube::Error::Api(e))
            if e.code == 422 && e.message.starts_with(PATCH_NOT_APPLICABLE) =>
        {
            status(api, object, new.clone()).await
        }
        Err(e) => Err(e),
    }
}

/// How the hub's answer to a JSON patch that does not apply begins (a path that is not there,
/// a failed `test`), as opposed to a patched object that fails validation.
const PATCH_NOT_APPLICABLE: &str = "the server rejected our request due to an error in our request";

/// The JSON patch taking an object's status from `old` to `new`: the differences, under
/// `/status`, after setting `metadata.resourceVersion` to `version`, which the hub checks as
/// a precondition.
fn status_patch(version: &str, old: &Value, new: &Value) -> json_patch::Patch {
    let mut operations = vec![json_patch::PatchOperation::Add(json_patch::AddOperation {
        path: json_patch::jsonptr::PointerBuf::from_tokens(["metadata", "resourceVersion"]),
        value: Value::from(version),
    })];
    let status = json_patch::jsonptr::PointerBuf::from_tokens(["status"]);
    for mut operation in json_patch::diff(old, new).0 {
        let (path, from) = match &mut operation {
            json_patch::PatchOperation::Add(op) => (&mut op.path, None),
            json_patch::PatchOperation::Remove(op) => (&mut op.path, None),
            json_patch::PatchOperation::Replace(op) => (&mut op.path, None),
            json_patch::PatchOperation::Test(op) => (&mut op.path, None),
            json_patch::PatchOperation::Move(op) => (&mut op.path, Some(&mut op.from)),
            json_patch::PatchOperation::Copy(op) => (&mut op.path, Some(&mut op.from)),
        };
        *path = status.concat(path);
        if let Some(from) = from {
            *from = status.concat(from);
        }
        operations.push(operation);
    }
    json_patch::Patch(operations)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use flotilla_api::placement::ClusterStagedUpdateRun;
    use flotilla_api::placement::staged_update_run::{
        ClusterUpdatingStatus, StageUpdatingStatus, UpdateRunStatus,
    };
    use flotilla_store::MemoryStore;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
    use k8s_openapi::jiff::Timestamp;

    use kube::api::PostParams;

    use super::*;
    use crate::{Hub, HubOptions};

    #[test]
    fn a_status_patch_carries_only_the_changes_and_the_version_read() {
        let old = json!({
            "stagesStatus": [{"stageName": "a/b~c", "clusters": [{"clusterName": "m1"}, {"clusterName": "m2"}]}],
            "gone": true,
        });
        let new = json!({
            "stagesStatus": [{"stageName": "a/b~c", "clusters": [
                {"clusterName": "m1", "conditions": [{"type": "Started"}]},
                {"clusterName": "m2"},
            ]}],
            "conditions": [],
        });
        let patch = status_patch("41", &old, &new);
        assert_eq!(
            serde_json::to_value(&patch).expect("patch"),
            json!([
                {"op": "add", "path": "/metadata/resourceVersion", "value": "41"},
                {"op": "add", "path": "/status/stagesStatus/0/clusters/0/conditions", "value": [{"type": "Started"}]},
                {"op": "add", "path": "/status/conditions", "value": []},
                {"op": "remove", "path": "/status/gone"},
            ])
        );
        let mut object =
            json!({"metadata": {"name": "run", "resourceVersion": "41"}, "status": old});
        json_patch::patch(&mut object, &patch).expect("applies");
        assert_eq!(
            object,
            json!({"metadata": {"name": "run", "resourceVersion": "41"}, "status": new})
        );
    }

    /// A stage of `clusters` clusters, the first `started` of them started and succeeded.
    fn stage(clusters: usize, started: usize) -> UpdateRunStatus {
        let condition = |type_: &str| Condition {
            type_: type_.into(),
            status: "True".into(),
            reason: format!("ClusterUpdating{type_}"),
            message: format!("Cluster update {type_}, with a message long enough to weigh"),
            observed_generation: Some(1),
            last_transition_time: Time(Timestamp::UNIX_EPOCH),
        };
        let clusters = (0..clusters)
            .map(|i| ClusterUpdatingStatus {
                cluster_name: format!("member-cluster-with-a-long-name-{i:05}"),
                conditions: (i < started)
                    .then(|| vec![condition("Started"), condition("Succeeded")]),
                ..ClusterUpdatingStatus::default()
            })
            .collect();
        UpdateRunStatus {
            stages_status: Some(vec![StageUpdatingStatus {
                stage_name: "all".into(),
                clusters,
                ..StageUpdatingStatus::default()
            }]),
            ..UpdateRunStatus::default()
        }
    }

    #[tokio::test]
    async fn a_status_larger_than_one_request_is_written_by_its_changes() {
        let hub = Hub::start(Arc::new(MemoryStore::new()), HubOptions::default())
            .await
            .expect("hub");
        let runs: Api<ClusterStagedUpdateRun> = Api::all(hub.client());
        let run: ClusterStagedUpdateRun = serde_json::from_value(json!({
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "ClusterStagedUpdateRun",
            "metadata": {"name": "big"},
            "spec": {"placementName": "crp", "stagedRolloutStrategyName": "s"},
        }))
        .expect("run");
        let mut read = runs
            .create(&PostParams::default(), &run)
            .await
            .expect("create");
        const CLUSTERS: usize = 8_000;
        let mut written = UpdateRunStatus::default();
        for started in (0..=CLUSTERS).step_by(2_000) {
            let next = stage(CLUSTERS, started);
            let old = read.status.as_ref().map(|s| json!(s));
            let version = status_changes(&runs, &read.metadata, old.as_ref(), &json!(next))
                .await
                .expect("the changes fit one request");
            read = runs.get_status("big").await.expect("read");
            assert_eq!(
                version, read.metadata.resource_version,
                "the version written"
            );
            written = next;
        }
        assert_eq!(read.status.as_ref(), Some(&written), "every change landed");
        let size = serde_json::to_vec(&written).expect("size").len();
        assert!(size > 3 * 1024 * 1024, "the status is {size} bytes");

        let whole = status(&runs, &read.metadata, json!(written)).await;
        assert!(
            matches!(&whole, Err(kube::Error::Api(e)) if e.code == 413),
            "the whole status no longer fits one request: {whole:?}"
        );
        let stale = status_changes(
            &runs,
            &ObjectMeta {
                resource_version: Some("1".into()),
                ..read.metadata.clone()
            },
            read.status.as_ref().map(|s| json!(s)).as_ref(),
            &json!(stage(CLUSTERS, 1)),
        )
        .await;
        assert!(
            matches!(&stale, Err(kube::Error::Api(e)) if e.code == 409),
            "changes against an old version conflict: {stale:?}"
        );
        let old = read.status.as_ref().map(|s| json!(s));
        status_changes(
            &runs,
            &read.metadata,
            old.as_ref(),
            &json!(stage(CLUSTERS, 1)),
        )
        .await
        .expect("shrinks by its changes");
        let read = runs.get_status("big").await.expect("read");
        assert_eq!(read.status, Some(stage(CLUSTERS, 1)));

        // Changes computed from a status unlike the stored one (here: a cluster more) do not
        // apply; the whole status is written instead.
        let imagined = json!(stage(CLUSTERS + 1, 1));
        status_changes(
            &runs,
            &read.metadata,
            Some(&imagined),
            &json!(stage(10, 10)),
        )
        .await
        .expect("written whole");
        let read = runs.get_status("big").await.expect("read");
        assert_eq!(read.status, Some(stage(10, 10)));
    }
}
