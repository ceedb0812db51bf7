//! The generic resource engine: every verb, for every registered kind, over one `Storage`.
//!
//! The HTTP layer parses requests into these calls; in-process callers (the engine's own
//! controllers) may call them directly. Objects are stored as JSON in their kind's storage
//! version without `resourceVersion`, which is the store's modification revision.

use std::sync::Arc;

use bytes::Bytes;
use flotilla_apimachinery::FieldError;
use flotilla_store::{KeyValue, ListRequest, SharedStorage, StoreError};
use serde_json::{Value, json};

use crate::clock::{Clock, rfc3339};
use crate::metrics::Metrics;
use crate::object::{self, meta_str, metadata, metadata_mut};
use crate::registry::{Registry, ResourceInfo};
use crate::status::{ApiError, ApiResult, Target};
use crate::{admission, hooks, raw, selectors::ListFilter};

/// How unknown and duplicate fields in a request body are treated (`fieldValidation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FieldValidation {
    /// Drop them silently.
    Ignore,
    /// Drop them and return a warning (the server default).
    #[default]
    Warn,
    /// Reject the request with 400.
    Strict,
}

/// Options shared by create, update and patch.
#[derive(Debug, Clone, Default)]
pub struct WriteOptions {
    /// `dryRun=All`: run admission and validation but do not persist.
    pub dry_run: bool,
    /// The field manager recorded in `managedFields`.
    pub field_manager: String,
    /// Unknown/duplicate field policy.
    pub field_validation: FieldValidation,
    /// Duplicate field paths found in the raw body (for strict validation).
    pub duplicate_fields: Vec<String>,
    /// `force=true` for server-side apply.
    pub force: bool,
}

/// The result of a write: the object as stored (in the requested version) and any warnings.
#[derive(Debug, Clone)]
pub struct Written {
    /// The object after the write.
    pub object: Value,
    /// `Warning` headers to return.
    pub warnings: Vec<String>,
    /// True if the write created the object (201 rather than 200).
    pub created: bool,
    /// What was stored, when the write stored something (not for dry runs and no-ops).
    pub stored: Option<StoredForm>,
}

/// The bytes a write stored and the revision it got: a JSON response can serve them with the
/// resourceVersion spliced in ([`raw::splice_revision`]) instead of serializing the object again,
/// which for megabyte statuses is most of a write's response cost.
#[derive(Debug, Clone)]
pub struct StoredForm {
    /// The stored bytes (canonical layout, storage version, no resourceVersion).
    pub bytes: Bytes,
    /// The write's revision.
    pub revision: i64,
}

impl Written {
    /// The object as plain JSON straight from the stored bytes, when the request is for the
    /// storage version; `None` when the object has to be rendered from [`Written::object`].
    pub fn stored_json(&self, info: &ResourceInfo) -> Option<Bytes> {
        let stored = self.stored.as_ref()?;
        if !info.serves_storage_version() {
            return None;
        }
        raw::splice_revision(&stored.bytes, stored.revision)
    }
}

/// `DeleteOptions` the engine honours.
#[derive(Debug, Clone, Default)]
pub struct DeleteOptions {
    /// Background (default), Foreground or Orphan.
    pub propagation: Option<String>,
    /// Only delete if the object still has this uid.
    pub precondition_uid: Option<String>,
    /// Only delete if the object is still at this resourceVersion.
    pub precondition_rv: Option<String>,
    /// Do not persist.
    pub dry_run: bool,
}

/// The result of a delete.
#[derive(Debug, Clone)]
pub struct Deleted {
    /// The object (with `deletionTimestamp` if finalizers keep it alive).
    pub object: Value,
    /// True if the object is gone from storage.
    pub gone: bool,
}

/// A page of objects.
pub type ObjectList = Page<Value>;

/// A page of a list: its items (parsed objects or raw JSON), the revision it was read at, and
/// where the next page starts.
#[derive(Debug, Clone)]
pub struct Page<T> {
    /// The items, in the requested version.
    pub items: Vec<T>,
    /// The list's resourceVersion.
    pub resource_version: i64,
    /// Continue token for the next page, if any.
    pub continue_token: Option<String>,
    /// Items left after this page, when known (no selector filtering).
    pub remaining: Option<usize>,
}

/// Finalizer the engine puts on objects deleted with Foreground propagation.
pub const FOREGROUND_FINALIZER: &str = "foregroundDeletion";
/// Finalizer the engine puts on objects deleted with Orphan propagation.
pub const ORPHAN_FINALIZER: &str = "orphan";

/// The engine. Cheap to clone.
#[derive(Clone)]
pub struct Engine {
    pub(crate) registry: Arc<Registry>,
    pub(crate) store: SharedStorage,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) metrics: Arc<Metrics>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("revision", &self.store.current_revision())
            .finish()
    }
}

/// The target used in error messages for an object of `info`.
pub fn target(info: &ResourceInfo, name: &str) -> Target {
    Target {
        group: info.group.clone(),
        resource: info.plural.clone(),
        name: name.to_string(),
    }
}

/// Decodes a stored value into an object in the version `info` serves, with its resourceVersion.
pub fn decode(info: &ResourceInfo, kv: &KeyValue) -> ApiResult<Value> {
    let mut obj: Value = serde_json::from_slice(&kv.value).map_err(|e| {
        ApiError::internal(format!("stored object {} is not valid JSON: {e}", kv.key))
    })?;
    if obj["apiVersion"].as_str() != Some(info.api_version().as_str()) {
        flotilla_api::convert(&info.group, &info.kind, &mut obj, &info.version);
    }
    metadata_mut(&mut obj).insert(
        "resourceVersion".into(),
        Value::String(kv.mod_revision.to_string()),
    );
    Ok(obj)
}

/// The object just written, as a read would return it (no need to decode the stored bytes).
fn with_revision(mut obj: Value, revision: i64) -> Value {
    metadata_mut(&mut obj).insert(
        "resourceVersion".into(),
        Value::String(revision.to_string()),
    );
    obj
}

/// The bytes stored for an object: storage version, no resourceVersion, and the canonical key
/// order `apiVersion`, `kind`, `metadata`, then the rest (what [`raw::splice_revision`] relies
/// on to serve lists without parsing). Serialized straight from the object, without a copy.
fn encode(info: &ResourceInfo, obj: &Value) -> Bytes {
    let api_version = crate::registry::api_version(&info.storage_group, &info.storage_version);
    if !info.serves_storage_version() {
        // A version of another shape (HPA v1 over stored v2, an events.k8s.io Event over a
        // core one) is converted first.
        let mut converted = obj.clone();
        flotilla_api::convert(
            &info.storage_group,
            &info.kind,
            &mut converted,
            &info.storage_version,
        );
        let stored = Canonical {
            api_version: &api_version,
            obj: &converted,
        };
        return crate::json_bytes::to_bytes(&stored);
    }
    let stored = Canonical {
        api_version: &api_version,
        obj,
    };
    crate::json_bytes::to_bytes(&stored)
}

/// An object as stored: see [`encode`].
struct Canonical<'a> {
    api_version: &'a str,
    obj: &'a Value,
}

impl serde::Serialize for Canonical<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        struct MetadataWithoutRevision<'a>(Option<&'a serde_json::Map<String, Value>>);
        impl serde::Serialize for MetadataWithoutRevision<'_> {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let fields = self
                    .0
                    .into_iter()
                    .flatten()
                    .filter(|(k, _)| *k != "resourceVersion");
                serializer.collect_map(fields)
            }
        }
        let fields = self.obj.as_object();
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("apiVersion", self.api_version)?;
        map.serialize_entry("kind", self.obj.get("kind").unwrap_or(&Value::Null))?;
        let metadata = self.obj.get("metadata").and_then(Value::as_object);
        map.serialize_entry("metadata", &MetadataWithoutRevision(metadata))?;
        for (k, v) in fields.into_iter().flatten() {
            if !matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                map.serialize_entry(k, v)?;
            }
        }
        map.end()
    }
}

/// Whether stored object bytes carry a `metadata.deletionTimestamp` (parses nothing else).
fn being_deleted(stored: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Stored {
        #[serde(default)]
        metadata: Meta,
    }
    #[derive(serde::Deserialize, Default)]
    struct Meta {
        #[serde(rename = "deletionTimestamp", default)]
        deletion_timestamp: Option<serde::de::IgnoredAny>,
    }
    serde_json::from_slice::<Stored>(stored).is_ok_and(|s| s.metadata.deletion_timestamp.is_some())
}

fn parse_rv(rv: &str) -> Option<i64> {
    rv.parse::<i64>().ok().filter(|v| *v >= 0)
}

impl Engine {
    /// An engine over `store` serving `registry`'s kinds.
    pub fn new(registry: Arc<Registry>, store: SharedStorage, clock: Arc<dyn Clock>) -> Self {
        Self {
            registry,
            store,
            clock,
            metrics: Arc::new(Metrics::default()),
        }
    }

    /// The registry of served kinds.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The underlying store.
    pub fn store(&self) -> &SharedStorage {
        &self.store
    }

    /// Request metrics.
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    /// Now, as Kubernetes serializes it.
    pub(crate) fn now(&self) -> String {
        rfc3339(self.clock.now())
    }

    /// The namespace a request addresses: none for cluster-scoped kinds.
    fn scoped_ns<'a>(info: &ResourceInfo, ns: Option<&'a str>) -> Option<&'a str> {
        ns.filter(|_| info.namespaced)
    }

    /// Reads one object.
    pub async fn get(&self, info: &ResourceInfo, ns: Option<&str>, name: &str) -> ApiResult<Value> {
        let ns = Self::scoped_ns(info, ns);
        match self.store.get(&info.key(ns, name)).await? {
            Some(kv) => decode(info, &kv),
            None => Err(ApiError::not_found(&target(info, name))),
        }
    }

    /// An object as stored, its resourceVersion spliced in ([`raw::splice_revision`]), for a
    /// read in the storage version: served without parsing and serializing it again. `None`
    /// for another version, or bytes stored before the canonical layout (read with
    /// [`Engine::get`] instead).
    pub async fn get_raw(
        &self,
        info: &ResourceInfo,
        ns: Option<&str>,
        name: &str,
    ) -> ApiResult<Option<Bytes>> {
        if !info.serves_storage_version() {
            return Ok(None);
        }
        let ns = Self::scoped_ns(info, ns);
        match self.store.get(&info.key(ns, name)).await? {
            Some(kv) => Ok(raw::splice_revision(&kv.value, kv.mod_revision)),
            None => Err(ApiError::not_found(&target(info, name))),
        }
    }

    async fn get_kv(
        &self,
        info: &ResourceInfo,
        ns: Option<&str>,
        name: &str,
    ) -> ApiResult<(Value, i64)> {
        match self.store.get(&info.key(ns, name)).await? {
            Some(kv) => Ok((decode(info, &kv)?, kv.mod_revision)),
            None => Err(ApiError::not_found(&target(info, name))),
        }
    }

    /// Lists objects, filtered and paged (see [`ListFilter`]).
    pub async fn list(
        &self,
        info: &ResourceInfo,
        ns: Option<&str>,
        filter: &ListFilter,
    ) -> ApiResult<ObjectList> {
        self.list_with(info, ns, filter, |kv| {
            let obj = decode(info, kv)?;
            Ok(filter.matches(&obj).then_some(obj))
        })
        .await
    }

    /// Lists objects as their JSON bytes, without parsing them, when nothing needs a parsed
    /// object: no selector, and the request is for the storage version. `None` otherwise.
    pub async fn list_raw(
        &self,
        info: &ResourceInfo,
        ns: Option<&str>,
        filter: &ListFilter,
    ) -> ApiResult<Option<Page<Bytes>>> {
        if !filter.is_trivial() || !info.serves_storage_version() {
            return Ok(None);
        }
        let page = self
            .list_with(info, ns, filter, |kv| {
                match raw::splice_revision(&kv.value, kv.mod_revision) {
                    Some(bytes) => Ok(Some(bytes)),
                    // Stored before the canonical layout: take the slow road for this one.
                    None => Ok(Some(Bytes::from(
                        serde_json::to_vec(&decode(info, kv)?).unwrap_or_default(),
                    ))),
                }
            })
            .await?;
        Ok(Some(page))
    }

    /// The paging loop shared by every list: reads pages of the store at one revision and
    /// keeps what `admit` turns into items, until `limit` items or the end.
    async fn list_with<T>(
        &self,
        info: &ResourceInfo,
        ns: Option<&str>,
        filter: &ListFilter,
        mut admit: impl FnMut(&KeyValue) -> ApiResult<Option<T>>,
    ) -> ApiResult<Page<T>> {
        let ns = Self::scoped_ns(info, ns);
        let prefix = info.namespace_prefix(ns);
        let (mut revision, mut start_after) = match &filter.continue_from {
            Some(c) => (Some(c.revision), Some(c.key.clone())),
            None => (filter.exact_revision, None),
        };
        let limit = filter.limit.unwrap_or(0);
        let mut items = Vec::new();
        let mut remaining = None;
        let mut continue_token = None;
        loop {
            let page = self
                .store
                .list(ListRequest {
                    prefix: prefix.clone(),
                    revision,
                    start_after: start_after.clone(),
                    limit: if limit == 0 {
                        0
                    } else {
                        (limit - items.len()).max(if filter.is_trivial() { 0 } else { 256 })
                    },
                })
                .await
                .map_err(|e| match e {
                    StoreError::Compacted { .. } if filter.continue_from.is_some() => {
                        ApiError::expired(crate::selectors::CONTINUE_EXPIRED)
                    }
                    other => other.into(),
                })?;
            revision = Some(page.revision);
            let count = page.items.len();
            let mut stopped_at = None;
            for (i, kv) in page.items.iter().enumerate() {
                if let Some(item) = admit(kv)? {
                    items.push(item);
                }
                if limit > 0 && items.len() >= limit {
                    stopped_at = Some(i);
                    break;
                }
            }
            match stopped_at {
                Some(i) => {
                    let more = count - i - 1 + page.remaining;
                    if more > 0 {
                        continue_token = Some(crate::selectors::encode_continue(
                            page.revision,
                            &page.items[i].key,
                        ));
                        if filter.is_trivial() {
                            remaining = Some(more);
                        }
                    }
                    break;
                }
                None if page.remaining == 0 || count == 0 => break,
                None => start_after = page.items.last().map(|kv| kv.key.clone()),
            }
        }
        Ok(Page {
            items,
            resource_version: revision.unwrap_or_else(|| self.store.current_revision()),
            continue_token,
            remaining,
        })
    }

    /// Creates an object (`POST`), or dry-runs it.
    pub async fn create(
        &self,
        info: &ResourceInfo,
        ns: Option<&str>,
        body: Value,
        opts: &WriteOptions,
    ) -> ApiResult<Written> {
        let ns = Self::scoped_ns(info, ns);
        let mut obj = admission::check_body_kind(info, body)?;
        admission::check_namespace(info, &mut obj, ns)?;
        let warnings = admission::prune_unknown(info, &mut obj, opts)?;
        // Names are generated before validation so the generated name is validated too.
        if meta_str(&obj, "name").is_none_or(str::is_empty)
            && let Some(prefix) = meta_str(&obj, "generateName").map(String::from)
        {
            let name = object::generated_name(&prefix, rand_u128());
            metadata_mut(&mut obj).insert("name".into(), Value::String(name));
        }
        let name = meta_str(&obj, "name").unwrap_or_default().to_string();
        self.check_namespace_usable(info, ns, &name).await?;
        let now = self.now();
        {
            let meta = metadata_mut(&mut obj);
            for field in [
                "resourceVersion",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "selfLink",
            ] {
                meta.remove(field);
            }
            meta.insert(
                "uid".into(),
                Value::String(uuid::Uuid::new_v4().to_string()),
            );
            meta.insert("creationTimestamp".into(), Value::String(now.clone()));
            if info.tracks_generation {
                meta.insert("generation".into(), json!(1));
            } else {
                meta.remove("generation");
            }
        }
        if info.status_subresource {
            // Status is owned by controllers: kube-apiserver drops it on create.
            if let Some(m) = obj.as_object_mut() {
                m.remove("status");
            }
        }
        admission::default_object(info, &mut obj);
        hooks::prepare_write(self, info, None, &mut obj)?;
        admission::validate(info, &obj, None, &*self.registry.snapshot())?;
        admission::record_manager(info, None, &mut obj, &opts.field_manager, None, &now);
        if opts.dry_run {
            return Ok(Written {
                object: obj,
                warnings,
                created: true,
                stored: None,
            });
        }
        let key = info.key(ns, &name);
        let bytes = encode(info, &obj);
        check_stored_size(info, &name, bytes.len(), None, None)?;
        let kv = self
            .store
            .create(&key, bytes.clone())
            .await
            .map_err(|e| match e {
                StoreError::AlreadyExists { .. } => ApiError::already_exists(&target(info, &name)),
                other => other.into(),
            })?;
        self.after_write(info).await;
        Ok(Written {
            object: with_revision(obj, kv.mod_revision),
            warnings,
            created: true,
            stored: Some(StoredForm {
                bytes,
                revision: kv.mod_revision,
            }),
        })
    }

    /// Refuses writes into namespaces that are missing or being deleted.
    async fn check_namespace_usable(
        &self,
        info: &ResourceInfo,
        ns: Option<&str>,
        name: &str,
    ) -> ApiResult<()> {
        let Some(ns) = ns.filter(|_| info.namespaced) else {
            return Ok(());
        };
        let snap = self.registry.snapshot();
        let Some(ns_info) = snap.get("", "v1", "namespaces") else {
            return Ok(());
        };
        match self.store.get(&ns_info.key(None, ns)).await? {
            None => Err(ApiError::not_found(&target(&ns_info, ns))),
            Some(kv) => {
                if being_deleted(&kv.value) {
                    Err(ApiError::forbidden(
                        &target(info, name),
                        &format!(
                            "unable to create new content in namespace {ns} because it is being terminated"
                        ),
                    ))
                } else {
                    Ok(())
                }
            }
        }
    }

    /// Replaces an object (`PUT`), on the main endpoint or the `status` subresource.
    pub async fn update(
        &self,
        info: &ResourceInfo,
        ns: Option<&str>,
        name: &str,
        body: Value,
        subresource: Option<&str>,
        opts: &WriteOptions,
    ) -> ApiResult<Written> {
        let ns = Self::scoped_ns(info, ns);
        let body = admission::check_body_kind(info, body)?;
        let body_name = meta_str(&body, "name").unwrap_or_default();
        if body_name != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({body_name}) does not match the name on the URL ({name})"
            )));
        }
        let wanted_rv = meta_str(&body, "resourceVersion").map(String::from);
        // PUT never creates (AllowCreateOnUpdate is false for every kind served here).
        let (old, rv) = self.get_kv(info, ns, name).await?;
        match wanted_rv.as_deref() {
            None | Some("") => {
                if !info.is_kubernetes_kind() {
                    let errs = [FieldError::invalid(
                        "metadata.resourceVersion",
                        json!("0x0"),
                        "must be specified for an update",
                    )];
                    return Err(ApiError::invalid(
                        &info.qualified_kind(),
                        &target(info, name),
                        &errs,
                    ));
                }
            }
            Some(v) if parse_rv(v) != Some(rv) => return Err(ApiError::stale(&target(info, name))),
            Some(_) => {}
        }
        self.write_update(info, ns, name, old, rv, body, subresource, opts)
            .await
    }

    /// Admits `candidate` as the new state of an existing object at revision `rv` and stores it.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn write_update(
        &self,
        info: &ResourceInfo,
        ns: Option<&str>,
        name: &str,
        old: Value,
        rv: i64,
        candidate: Value,
        subresource: Option<&str>,
        opts: &WriteOptions,
    ) -> ApiResult<Written> {
        let mut obj = candidate;
        let warnings = admission::prune_unknown(info, &mut obj, opts)?;
        match subresource {
            None => {}
            Some("status") if info.status_subresource => {}
            Some("scale") if info.scale.is_some() => {}
            Some(_) => return Err(ApiError::no_route()),
        }
        if info.status_subresource {
            let writable: &[&str] = if info.is_kubernetes_kind() {
                &["annotations"]
            } else {
                &[]
            };
            obj = object::split_status(&old, obj, subresource == Some("status"), writable);
        }
        check_identity(info, name, &old, &obj)?;
        object::carry_system_metadata(&old, &mut obj);
        obj["apiVersion"] = old["apiVersion"].clone();
        obj["kind"] = old["kind"].clone();
        admission::default_object(info, &mut obj);
        if info.tracks_generation && object::spec_changed(&old, &obj) {
            let generation = metadata(&old)
                .get("generation")
                .and_then(Value::as_i64)
                .unwrap_or(1);
            metadata_mut(&mut obj).insert("generation".into(), json!(generation + 1));
        }
        let deleting = meta_str(&old, "deletionTimestamp").is_some();
        if deleting {
            let old_f = object::finalizers(&old);
            if let Some(added) = object::finalizers(&obj)
                .into_iter()
                .find(|f| !old_f.contains(f))
            {
                let errs = [FieldError::forbidden(
                    "metadata.finalizers",
                    format!(
                        "no new finalizers can be added if the object is being deleted, found new finalizers []string{{{added:?}}}"
                    ),
                )];
                return Err(ApiError::invalid(
                    &info.qualified_kind(),
                    &target(info, name),
                    &errs,
                ));
            }
        }
        hooks::prepare_write(self, info, Some(&old), &mut obj)?;
        admission::validate(info, &obj, Some(&old), &*self.registry.snapshot())?;
        let now = self.now();
        admission::record_manager(
            info,
            Some(&old),
            &mut obj,
            &opts.field_manager,
            subresource,
            &now,
        );
        if object::same_content(&old, &obj) {
            // A no-op write does not bump the resourceVersion (kubectl apply twice is a no-op).
            return Ok(Written {
                object: old,
                warnings,
                created: false,
                stored: None,
            });
        }
        if opts.dry_run {
            return Ok(Written {
                object: obj,
                warnings,
                created: false,
                stored: None,
            });
        }
        let key = info.key(ns, name);
        if deleting
            && object::finalizers(&obj).is_empty()
            && hooks::spec_finalizers(info, &obj).is_empty()
        {
            hooks::before_final_delete(self, info, &obj);
            let deleted = self.store.delete(&key, rv).await;
            // Success or not, the registry is brought back in line with what is stored.
            self.after_write(info).await;
            let kv = deleted.map_err(|e| self.write_error(info, name, e))?;
            let mut gone = decode(info, &kv)?;
            metadata_mut(&mut gone).insert("finalizers".into(), json!([]));
            return Ok(Written {
                object: gone,
                warnings,
                created: false,
                stored: None,
            });
        }
        let bytes = encode(info, &obj);
        check_stored_size(info, name, bytes.len(), subresource, Some(&old))?;
        let kv = self
            .store
            .update(&key, bytes.clone(), rv)
            .await
            .map_err(|e| self.write_error(info, name, e))?;
        self.after_write(info).await;
        Ok(Written {
            object: with_revision(obj, kv.mod_revision),
            warnings,
            created: false,
            stored: Some(StoredForm {
                bytes,
                revision: kv.mod_revision,
            }),
        })
    }

    fn write_error(&self, info: &ResourceInfo, name: &str, e: StoreError) -> ApiError {
        match e {
            StoreError::Conflict { .. } => ApiError::stale(&target(info, name)),
            StoreError::NotFound { .. } => ApiError::not_found(&target(info, name)),
            other => other.into(),
        }
    }

    /// Applies `mutate` to the latest version of an object and stores it, retrying on
    /// conflicts (the engine's GuaranteedUpdate). `mutate` returns the candidate object.
    pub(crate) async fn guaranteed_update<F>(
        &self,
        info: &ResourceInfo,
        ns: Option<&str>,
        name: &str,
        subresource: Option<&str>,
        opts: &WriteOptions,
        mut mutate: F,
    ) -> ApiResult<Written>
    where
        F: FnMut(Option<&Value>) -> ApiResult<Value>,
    {
        for _ in 0..16 {
            let current = match self.get_kv(info, ns, name).await {
                Ok(found) => Some(found),
                Err(e) if e.code == 404 => None,
                Err(e) => return Err(e),
            };
            let Some((old, rv)) = current else {
                let candidate = mutate(None)?;
                return match self.create(info, ns, candidate, opts).await {
                    Err(e) if e.reason == "AlreadyExists" => continue,
                    other => other,
                };
            };
            let candidate = mutate(Some(&old))?;
            if let Some(want) = meta_str(&candidate, "resourceVersion")
                && parse_rv(want) != Some(rv)
            {
                return Err(ApiError::stale(&target(info, name)));
            }
            match self
                .write_update(info, ns, name, old, rv, candidate, subresource, opts)
                .await
            {
                Err(e) if e.reason == "Conflict" && e.message.contains("has been modified") => {
                    continue;
                }
                other => return other,
            }
        }
        Err(ApiError::conflict(
            &target(info, name),
            "too many concurrent updates; please retry",
        ))
    }

    /// Mutates an existing object in place (retrying on conflicts); 404 if it is gone. Used by
    /// the engine's own controllers, which record no field manager.
    pub(crate) async fn update_existing<F>(
        &self,
        info: &ResourceInfo,
        ns: Option<&str>,
        name: &str,
        mut f: F,
    ) -> ApiResult<Written>
    where
        F: FnMut(&mut Value),
    {
        self.guaranteed_update(info, ns, name, None, &WriteOptions::default(), |cur| {
            let mut obj = cur
                .cloned()
                .ok_or_else(|| ApiError::not_found(&target(info, name)))?;
            f(&mut obj);
            Ok(obj)
        })
        .await
    }

    /// Deletes an object, honouring finalizers, preconditions and propagation policy.
    pub async fn delete(
        &self,
        info: &ResourceInfo,
        ns: Option<&str>,
        name: &str,
        opts: &DeleteOptions,
    ) -> ApiResult<Deleted> {
        let ns = Self::scoped_ns(info, ns);
        if hooks::is_namespace_resource(info) && hooks::SYSTEM_NAMESPACES.contains(&name) {
            return Err(ApiError::forbidden(
                &target(info, name),
                "this namespace may not be deleted",
            ));
        }
        for _ in 0..16 {
            let (obj, rv) = self.get_kv(info, ns, name).await?;
            if let Some(uid) = &opts.precondition_uid
                && meta_str(&obj, "uid") != Some(uid.as_str())
            {
                return Err(ApiError::conflict(
                    &target(info, name),
                    &format!(
                        "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                        meta_str(&obj, "uid").unwrap_or_default()
                    ),
                ));
            }
            if let Some(want) = &opts.precondition_rv
                && parse_rv(want) != Some(rv)
            {
                return Err(ApiError::conflict(
                    &target(info, name),
                    &format!(
                        "Precondition failed: ResourceVersion in precondition: {want}, ResourceVersion in object meta: {rv}"
                    ),
                ));
            }
            let mut finalizers = object::finalizers(&obj);
            let blocking_spec = hooks::spec_finalizers(info, &obj);
            let propagation = opts.propagation.as_deref().unwrap_or(DEFAULT_PROPAGATION);
            let policy_finalizer = match propagation {
                "Foreground" => Some(FOREGROUND_FINALIZER),
                "Orphan" => Some(ORPHAN_FINALIZER),
                "Background" => None,
                other => {
                    let errs = [FieldError::not_supported(
                        "propagationPolicy",
                        json!(other),
                        &["Foreground", "Background", "Orphan"],
                    )];
                    return Err(ApiError::invalid(
                        &info.qualified_kind(),
                        &target(info, name),
                        &errs,
                    ));
                }
            };
            let deleting = meta_str(&obj, "deletionTimestamp").is_some();
            if let Some(f) = policy_finalizer
                && !finalizers.iter().any(|x| x == f)
                && (!deleting || f == ORPHAN_FINALIZER || f == FOREGROUND_FINALIZER)
            {
                finalizers.push(f.to_string());
            }
            let system_finalizers = hooks::deletion_finalizers(info);
            for f in system_finalizers {
                if !deleting && !finalizers.contains(&f) {
                    finalizers.push(f);
                }
            }
            if finalizers.is_empty() && blocking_spec.is_empty() {
                if opts.dry_run {
                    return Ok(Deleted {
                        object: obj,
                        gone: true,
                    });
                }
                match self.store.delete(&info.key(ns, name), rv).await {
                    Ok(kv) => {
                        self.after_write(info).await;
                        return Ok(Deleted {
                            object: decode(info, &kv)?,
                            gone: true,
                        });
                    }
                    Err(StoreError::Conflict { .. }) => continue,
                    Err(e) => return Err(self.write_error(info, name, e)),
                }
            }
            // Finalizers keep the object: mark it deleted and let their owners finish.
            let mut marked = obj.clone();
            object::set_finalizers(&mut marked, &finalizers);
            if !deleting {
                let meta = metadata_mut(&mut marked);
                meta.insert("deletionTimestamp".into(), Value::String(self.now()));
                meta.insert("deletionGracePeriodSeconds".into(), json!(0));
            }
            hooks::mark_terminating(info, &mut marked);
            if marked == obj || opts.dry_run {
                return Ok(Deleted {
                    object: marked,
                    gone: false,
                });
            }
            match self
                .store
                .update(&info.key(ns, name), encode(info, &marked), rv)
                .await
            {
                Ok(kv) => {
                    self.after_write(info).await;
                    return Ok(Deleted {
                        object: decode(info, &kv)?,
                        gone: false,
                    });
                }
                Err(StoreError::Conflict { .. }) => continue,
                Err(e) => return Err(self.write_error(info, name, e)),
            }
        }
        Err(ApiError::conflict(
            &target(info, name),
            "too many concurrent updates; please retry",
        ))
    }

    /// Deletes every object matching the filter (`DELETE` on a collection).
    pub async fn delete_collection(
        &self,
        info: &ResourceInfo,
        ns: Option<&str>,
        filter: &ListFilter,
        opts: &DeleteOptions,
    ) -> ApiResult<ObjectList> {
        let list = self.list(info, ns, filter).await?;
        let mut items = Vec::with_capacity(list.items.len());
        for obj in &list.items {
            let name = meta_str(obj, "name").unwrap_or_default();
            let obj_ns = meta_str(obj, "namespace");
            match self.delete(info, obj_ns, name, opts).await {
                Ok(d) => items.push(d.object),
                Err(e) if e.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
        Ok(ObjectList {
            items,
            resource_version: self.store.current_revision(),
            continue_token: None,
            remaining: None,
        })
    }

    /// Hooks that must see a write synchronously (the CRD registry refresh).
    async fn after_write(&self, info: &ResourceInfo) {
        if hooks::is_crd_resource(info) {
            hooks::refresh_registry(self).await;
        }
    }
}

/// The largest object a create, update or patch may leave stored, in bytes of its stored JSON:
/// etcd's default request limit (1.5 MiB), whichever store the hub uses. Checked after
/// defaults and patches, so no sequence of small patches grows an object past it.
pub const MAX_OBJECT_BYTES: usize = 1_572_864;

/// The bound for writes through a `status` subresource: a placement's status lists every
/// member cluster (about 2 KiB each), so a 10,000-member fleet's needs ~20 MiB.
pub const MAX_OBJECT_BYTES_BY_STATUS: usize = 32 * 1024 * 1024;

/// 413 when a write would leave an object stored larger than its bound and larger than it was
/// (kube-apiserver lets etcd refuse it and answers 500). A write that does not grow an object
/// already over the main bound (a placement with a big status, say) goes through.
fn check_stored_size(
    info: &ResourceInfo,
    name: &str,
    size: usize,
    subresource: Option<&str>,
    old: Option<&Value>,
) -> ApiResult<()> {
    let limit = if subresource == Some("status") {
        MAX_OBJECT_BYTES_BY_STATUS
    } else {
        MAX_OBJECT_BYTES
    };
    if size <= limit || old.is_some_and(|old| size <= encode(info, old).len()) {
        return Ok(());
    }
    let mut err = ApiError::too_large(limit);
    err.message = format!(
        "Request entity too large: {} {name:?} would be stored as {size} bytes; the limit is {limit} bytes",
        info.qualified_kind()
    );
    Err(err)
}

/// A write may not rename an object (400, as kube's name check) nor change its uid (422, an
/// immutable field); a candidate without them keeps the stored ones.
fn check_identity(info: &ResourceInfo, name: &str, old: &Value, new: &Value) -> ApiResult<()> {
    if let Some(written) = meta_str(new, "name").filter(|n| !n.is_empty() && *n != name) {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({written}) does not match the name on the URL ({name})"
        )));
    }
    if let Some(uid) = meta_str(new, "uid").filter(|u| !u.is_empty())
        && Some(uid) != meta_str(old, "uid")
    {
        let errs = [FieldError::invalid(
            "metadata.uid",
            json!(uid),
            "field is immutable",
        )];
        return Err(ApiError::invalid(
            &info.qualified_kind(),
            &target(info, name),
            &errs,
        ));
    }
    Ok(())
}

/// kube-apiserver's propagation when DeleteOptions say nothing.
const DEFAULT_PROPAGATION: &str = "Background";

fn rand_u128() -> u128 {
    uuid::Uuid::new_v4().as_u128()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::registry::resources_of;

    /// ConfigMaps as the engine serves them, for tests.
    pub(crate) fn configmaps() -> ResourceInfo {
        let crd = json!({"spec": {"group": "", "scope": "Namespaced", "names": {"plural": "configmaps", "kind": "ConfigMap"},
            "versions": [{"name": "v1", "served": true, "storage": true}]}});
        resources_of(&crd, true).remove(0)
    }

    #[test]
    fn stored_form_is_canonical_and_splices() {
        let obj = json!({"data": {"k": "v"}, "kind": "ConfigMap", "metadata": {"name": "a", "resourceVersion": "9"}, "apiVersion": "v1"});
        let bytes = encode(&configmaps(), &obj);
        assert_eq!(
            &bytes[..],
            br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"v"}}"#
        );
        let served: Value =
            serde_json::from_slice(&raw::splice_revision(&bytes, 12).unwrap()).unwrap();
        assert_eq!(served["metadata"]["resourceVersion"], "12");
    }

    #[test]
    fn stored_objects_are_bounded_but_may_stay_as_big_as_they_were() {
        let info = configmaps();
        let big =
            json!({"metadata": {"name": "a"}, "data": {"k": "x".repeat(2 * MAX_OBJECT_BYTES)}});
        let size = encode(&info, &big).len();
        let err = check_stored_size(&info, "a", MAX_OBJECT_BYTES + 1, None, None).unwrap_err();
        assert_eq!((err.code, err.reason), (413, "RequestEntityTooLarge"));
        assert!(
            err.message.contains("limit is 1572864 bytes"),
            "{}",
            err.message
        );
        assert!(check_stored_size(&info, "a", MAX_OBJECT_BYTES, None, None).is_ok());
        // Not growing an object already over the bound is allowed; growing it is not.
        assert!(check_stored_size(&info, "a", size, None, Some(&big)).is_ok());
        assert!(check_stored_size(&info, "a", size + 1, None, Some(&big)).is_err());
        // Status writes have the larger bound a 10,000-member placement status needs.
        assert!(check_stored_size(&info, "a", 20 << 20, Some("status"), None).is_ok());
        assert!(check_stored_size(&info, "a", 33 << 20, Some("status"), None).is_err());
    }

    #[test]
    fn deletion_is_read_from_metadata_only() {
        assert!(being_deleted(
            br#"{"metadata":{"name":"x","deletionTimestamp":"2026-01-01T00:00:00Z"}}"#
        ));
        assert!(!being_deleted(
            br#"{"metadata":{"name":"x","annotations":{"deletionTimestamp":"no"}}}"#
        ));
        assert!(!being_deleted(
            br#"{"metadata":{"deletionTimestamp":null}}"#
        ));
    }
}
