//! Adding and removing one finalizer on a hub object, with a merge patch conditioned on the
//! object's `resourceVersion`, so that a concurrent change to the list is never overwritten
//! (the write fails with 409 and the controller retries on the fresh object).

use kube::{Api, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use serde_json::json;

/// Whether `object` carries `finalizer`.
pub fn has<K: Resource>(object: &K, finalizer: &str) -> bool {
    object.finalizers().iter().any(|f| f == finalizer)
}

/// Adds `finalizer` to `object` (read from `api`); returns the updated object.
pub async fn add<K>(api: &Api<K>, object: &K, finalizer: &str) -> Result<K, kube::Error>
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    let mut finalizers = object.finalizers().to_vec();
    finalizers.push(finalizer.to_owned());
    write(api, object, finalizers).await
}

/// Makes sure `object` (read from `api`, perhaps from a cache that is behind) carries
/// `finalizer`: adds it at the version read, or, if the object changed since, over the object
/// as stored now, unless that has it already. Returns the object as stored. A controller
/// whose watch lags would otherwise retry from the same stale copy until the watch catches up.
pub async fn ensure<K>(api: &Api<K>, object: &K, finalizer: &str) -> Result<K, kube::Error>
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    match add(api, object, finalizer).await {
        Err(kube::Error::Api(e)) if e.code == 409 => {}
        written => return written,
    }
    let fresh = api.get(&object.name_any()).await?;
    if has(&fresh, finalizer) {
        return Ok(fresh);
    }
    add(api, &fresh, finalizer).await
}

/// Removes `finalizer` from `object` (read from `api`); returns the updated object (or the
/// object as deleted, when it was the last finalizer of an object being deleted).
pub async fn remove<K>(api: &Api<K>, object: &K, finalizer: &str) -> Result<K, kube::Error>
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    let finalizers = object
        .finalizers()
        .iter()
        .filter(|f| *f != finalizer)
        .cloned()
        .collect();
    write(api, object, finalizers).await
}

/// Writes the finalizer list if the object is still at the version read.
async fn write<K>(api: &Api<K>, object: &K, finalizers: Vec<String>) -> Result<K, kube::Error>
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    let patch = json!({"metadata": {
        "finalizers": finalizers,
        "resourceVersion": object.resource_version(),
    }});
    api.patch(
        &object.name_any(),
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(patch),
    )
    .await
}
