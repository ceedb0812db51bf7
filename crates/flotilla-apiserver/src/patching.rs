//! `PATCH`: JSON merge, JSON patch, strategic merge (built-in kinds) and server-side apply,
//! each applied to the latest object inside the engine's conflict-retrying update loop.

use flotilla_apimachinery::{managed_fields, patch};
use serde_json::Value;

use crate::engine::{Engine, WriteOptions, Written, target};
use crate::registry::ResourceInfo;
use crate::status::{ApiError, ApiResult};

/// The patch formats the engine accepts, by `Content-Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// `application/merge-patch+json` (RFC 7386).
    Merge,
    /// `application/json-patch+json` (RFC 6902).
    Json,
    /// `application/strategic-merge-patch+json` (built-in kinds only).
    Strategic,
    /// `application/apply-patch+yaml` (server-side apply).
    Apply,
}

impl PatchType {
    /// The patch type of a `Content-Type` header, or 415.
    pub fn from_content_type(ct: &str) -> ApiResult<Self> {
        let base = ct.split(';').next().unwrap_or_default().trim();
        match base {
            "application/merge-patch+json" => Ok(Self::Merge),
            "application/json-patch+json" => Ok(Self::Json),
            "application/strategic-merge-patch+json" => Ok(Self::Strategic),
            "application/apply-patch+yaml"
            | "application/apply-patch+json"
            | "application/apply-patch+cbor" => Ok(Self::Apply),
            _ => Err(ApiError::unsupported_media_type(ct)),
        }
    }
}

/// A JSON patch's failure as kube answers it: 413 past the operation and copy caps, else 422
/// naming the failed operation (a `test` that did not hold, a missing path).
pub(crate) fn json_patch_error(e: patch::PatchError) -> ApiError {
    match e {
        patch::PatchError::TooManyOperations { .. } | patch::PatchError::CopyTooLarge { .. } => {
            let mut err = ApiError::too_large(0);
            err.message = format!("Request entity too large: {e}");
            err
        }
        e => ApiError::unprocessable(format!(
            "the server rejected our request due to an error in our request: {e}"
        )),
    }
}

fn parse_json(body: &[u8], what: &str) -> ApiResult<Value> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("error decoding {what}: {e}")))
}

impl Engine {
    /// Patches an object (or, for server-side apply, creates it if missing).
    #[allow(clippy::too_many_arguments)]
    pub async fn patch(
        &self,
        info: &ResourceInfo,
        ns: Option<&str>,
        name: &str,
        patch_type: PatchType,
        body: &[u8],
        subresource: Option<&str>,
        opts: &WriteOptions,
    ) -> ApiResult<Written> {
        let ns = if info.namespaced { ns } else { None };
        match patch_type {
            PatchType::Merge => {
                let p = parse_json(body, "merge patch")?;
                if !p.is_object() {
                    return Err(ApiError::bad_request(
                        "error decoding merge patch: the patch must be a JSON object",
                    ));
                }
                self.guaranteed_update(info, ns, name, subresource, opts, |cur| match cur {
                    Some(cur) => Ok(patch::merge_patch(cur, &p)),
                    None => Err(ApiError::not_found(&target(info, name))),
                })
                .await
            }
            PatchType::Json => {
                let p = parse_json(body, "json patch")?;
                if !p.is_array() {
                    return Err(ApiError::bad_request(
                        "error decoding json patch: the patch must be a JSON array of operations",
                    ));
                }
                self.guaranteed_update(info, ns, name, subresource, opts, |cur| match cur {
                    Some(cur) => patch::json_patch(cur, &p).map_err(json_patch_error),
                    None => Err(ApiError::not_found(&target(info, name))),
                })
                .await
            }
            PatchType::Strategic => {
                if !info.is_kubernetes_kind() {
                    return Err(ApiError::unsupported_media_type(
                        "application/strategic-merge-patch+json",
                    ));
                }
                let p = parse_json(body, "strategic merge patch")?;
                let strategy = patch::SchemaStrategy::new(&info.schema);
                self.guaranteed_update(info, ns, name, subresource, opts, |cur| match cur {
                    Some(cur) => patch::strategic_merge_patch(cur, &p, &strategy).map_err(|e| {
                        ApiError::bad_request(format!("unable to apply strategic merge patch: {e}"))
                    }),
                    None => Err(ApiError::not_found(&target(info, name))),
                })
                .await
            }
            PatchType::Apply => self.apply(info, ns, name, body, subresource, opts).await,
        }
    }

    async fn apply(
        &self,
        info: &ResourceInfo,
        ns: Option<&str>,
        name: &str,
        body: &[u8],
        subresource: Option<&str>,
        opts: &WriteOptions,
    ) -> ApiResult<Written> {
        if opts.field_manager.is_empty() {
            return Err(crate::request_options::invalid(
                "PatchOptions",
                &[flotilla_apimachinery::FieldError::required(
                    "fieldManager",
                    "is required for apply patch",
                )],
            ));
        }
        let text = std::str::from_utf8(body)
            .map_err(|_| ApiError::bad_request("apply patch is not UTF-8"))?;
        let config: Value = serde_saphyr::from_str(text)
            .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?;
        let config = crate::admission::check_body_kind(info, config)?;
        if crate::object::meta_str(&config, "name").is_some_and(|n| n != name) {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({}) does not match the name on the URL ({name})",
                crate::object::meta_str(&config, "name").unwrap_or_default()
            )));
        }
        let semantics = patch::SchemaStrategy::new(&info.schema);
        let now = self.now();
        let manager = opts.field_manager.clone();
        // The apply computes managedFields itself; the write must not record an Update entry.
        let write_opts = WriteOptions {
            field_manager: String::new(),
            ..opts.clone()
        };
        self.guaranteed_update(info, ns, name, subresource, &write_opts, |cur| {
            let mut config = config.clone();
            if cur.is_none()
                && let Some(ns) = ns
            {
                crate::object::metadata_mut(&mut config)
                    .insert("namespace".into(), Value::String(ns.to_string()));
            }
            managed_fields::apply(
                cur,
                &config,
                &manager,
                subresource,
                opts.force,
                &semantics,
                &now,
            )
            .map_err(|e| match e {
                managed_fields::ApplyError::Conflicts(conflicts) => {
                    ApiError::apply_conflict(conflicts.message(), conflicts.causes())
                }
                other => ApiError::bad_request(other.to_string()),
            })
        })
        .await
    }
}
