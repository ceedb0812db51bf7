//! The small write patterns every controller here uses: create unless it exists, merge-patch,
//! status patch, delete unless gone, relabel. Finalizers: `flotilla_apiserver::finalizer`.

use std::fmt::Debug;

use futures::StreamExt;
use futures::future::BoxFuture;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::{Api, Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use flotilla_apiserver::status_writes;

use super::MANAGER;

/// How many writes of one reconcile run at once.
const PARALLEL_WRITES: usize = 32;

/// What a write returns: the resourceVersion of the object as written, as a revision number
/// (`None` when the write found the object already there, or already gone).
pub(crate) type Written = Option<u64>;

/// Runs `writes` with at most [`PARALLEL_WRITES`] in flight, each to its end (one failing
/// does not abandon the others, whose outcome the caller must still learn); returns every
/// result.
pub(crate) async fn all<T>(
    writes: Vec<BoxFuture<'_, Result<T, kube::Error>>>,
) -> Vec<Result<T, kube::Error>> {
    futures::stream::iter(writes)
        .buffer_unordered(PARALLEL_WRITES)
        .collect()
        .await
}

/// Creates `object`; an object of that name already existing is not an error (a previous
/// reconcile made it and the cache has not caught up).
pub(crate) async fn create<K>(api: &Api<K>, object: &K) -> Result<Written, kube::Error>
where
    K: Resource + Clone + DeserializeOwned + Serialize + Debug,
{
    Ok(create_object(api, object)
        .await?
        .map(|created| revision(&created)))
}

/// Creates `object` and returns it as created; `None` when an object of that name already
/// exists (as for [`create`]).
pub(crate) async fn create_object<K>(api: &Api<K>, object: &K) -> Result<Option<K>, kube::Error>
where
    K: Resource + Clone + DeserializeOwned + Serialize + Debug,
{
    let params = PostParams {
        field_manager: Some(MANAGER.into()),
        ..PostParams::default()
    };
    match api.create(&params, object).await {
        Ok(created) => Ok(Some(created)),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(None),
        Err(e) => Err(e),
    }
}

/// Merge-patches `name` with `patch`.
pub(crate) async fn merge<K>(api: &Api<K>, name: &str, patch: Value) -> Result<Written, kube::Error>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    let patched = api
        .patch(name, &PatchParams::default(), &Patch::Merge(patch))
        .await?;
    Ok(Some(revision(&patched)))
}

/// Merge-patches the status of the object with metadata `object` (as read) with `status`, at
/// the version read ([`flotilla_apiserver::status_writes::status`]).
pub(crate) async fn status<K: Resource + Clone>(
    api: &Api<K>,
    object: &ObjectMeta,
    status: Value,
) -> Result<Written, kube::Error> {
    let version = status_writes::status(api, object, status).await?;
    Ok(Some(number(version.as_deref())))
}

/// Patches the status of the object with metadata `object` (as read) from `old` to `new` by
/// their differences only ([`flotilla_apiserver::status_writes::status_changes`]).
pub(crate) async fn status_changes<K: Resource + Clone>(
    api: &Api<K>,
    object: &ObjectMeta,
    old: Option<&Value>,
    new: &Value,
) -> Result<Written, kube::Error> {
    let version = status_writes::status_changes(api, object, old, new).await?;
    Ok(Some(number(version.as_deref())))
}

/// Deletes `name`; already gone is not an error.
pub(crate) async fn delete<K>(api: &Api<K>, name: &str) -> Result<Written, kube::Error>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    match api.delete(name, &DeleteParams::background()).await {
        Ok(deleted) => Ok(deleted.left().map(|object| revision(&object))),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(None),
        Err(e) => Err(e),
    }
}

/// Sets label `key` of `name` to `value`.
pub(crate) async fn label<K>(
    api: &Api<K>,
    name: &str,
    key: &str,
    value: &str,
) -> Result<Written, kube::Error>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    merge(api, name, json!({"metadata": {"labels": {key: value}}})).await
}

/// An object's resourceVersion as a revision number (0 when absent or not a number).
pub(crate) fn revision(object: &impl kube::Resource) -> u64 {
    number(object.resource_version().as_deref())
}

/// A resourceVersion as a revision number (0 when absent or not a number).
fn number(version: Option<&str>) -> u64 {
    version.and_then(|v| v.parse().ok()).unwrap_or_default()
}
