//! The HTTP shell: one catch-all route that parses Kubernetes API paths, negotiates content,
//! enforces limits and authentication, and calls the generic engine.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Query, Request, State};
use axum::response::Response;
use bytes::Bytes;
use futures::StreamExt;
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tokio_stream::wrappers::ReceiverStream;

use crate::access_review::{self, Caller, Review};
use crate::auth::UserInfo;
use crate::clock::rfc3339;
use crate::engine::{DeleteOptions, Engine, FieldValidation, ObjectList, WriteOptions, Written};
use crate::patching::PatchType;
use crate::rbac::Attributes;
use crate::registry::ResourceInfo;
use crate::render::{self, Output};
use crate::request_options;
use crate::scale::ScaleWrite;
use crate::security::Security;
use crate::selectors::ListFilter;
use crate::status::{ApiError, ApiResult};
use crate::watch::{WatchObject, WatchOptions};
use crate::{discovery, openapi, openapi_v2};

/// Largest accepted request body (kube-apiserver's limit is 3 MiB).
pub const MAX_BODY: usize = 3 * 1024 * 1024;

/// Server settings that are not part of the engine.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// How long a client may take to send its request body (slow senders get 408).
    pub body_timeout: Duration,
    /// Deadline of non-watch requests.
    pub request_timeout: Duration,
    /// Default and maximum watch duration.
    pub watch_timeout: Duration,
    /// Interval of watch bookmarks.
    pub bookmark_interval: Duration,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            body_timeout: Duration::from_secs(30),
            request_timeout: Duration::from_secs(60),
            watch_timeout: Duration::from_secs(1800),
            bookmark_interval: Duration::from_secs(60),
        }
    }
}

#[derive(Clone)]
struct AppState {
    engine: Engine,
    config: Arc<ServerConfig>,
    security: Option<Arc<Security>>,
}

/// The API server as an axum router (a tower service) that trusts every caller: for
/// in-process clients and simulated member clusters.
pub fn router(engine: Engine, config: ServerConfig) -> axum::Router {
    axum::Router::new().fallback(handle).with_state(AppState {
        engine,
        config: Arc::new(config),
        security: None,
    })
}

/// The API server as an axum router whose every request passes `security`'s gate
/// (authentication, RBAC, client limits, audit): what the hub serves over TLS.
pub fn secured_router(
    engine: Engine,
    config: ServerConfig,
    security: Arc<Security>,
) -> axum::Router {
    axum::Router::new().fallback(handle).with_state(AppState {
        engine,
        config: Arc::new(config),
        security: Some(security),
    })
}

/// A parsed resource path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourcePath {
    /// API group ("" for core).
    pub group: String,
    /// Version.
    pub version: String,
    /// Namespace from the URL.
    pub namespace: Option<String>,
    /// Plural resource.
    pub plural: String,
    /// Object name.
    pub name: Option<String>,
    /// Subresource (`status`).
    pub subresource: Option<String>,
}

/// What a URL path addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// `/api`.
    CoreVersions,
    /// `/apis`.
    Groups,
    /// `/apis/<group>`.
    Group(String),
    /// `/api/v1` or `/apis/<group>/<version>`.
    GroupVersion(String, String),
    /// A resource, collection or subresource.
    Resource(ResourcePath),
}

/// Parses a Kubernetes API path.
pub fn parse_path(path: &str) -> Option<Route> {
    let segs: Vec<&str> = path
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    let (group, version, rest) = match segs.as_slice() {
        ["api"] => return Some(Route::CoreVersions),
        ["apis"] => return Some(Route::Groups),
        ["apis", g] => return Some(Route::Group((*g).to_string())),
        ["api", v, rest @ ..] => ("", *v, rest),
        ["apis", g, v, rest @ ..] => (*g, *v, rest),
        _ => return None,
    };
    let rp = |namespace: Option<&str>, plural: &str, name: Option<&str>, sub: Option<&str>| {
        Some(Route::Resource(ResourcePath {
            group: group.to_string(),
            version: version.to_string(),
            namespace: namespace.map(String::from),
            plural: plural.to_string(),
            name: name.map(String::from),
            subresource: sub.map(String::from),
        }))
    };
    match rest {
        [] => Some(Route::GroupVersion(group.to_string(), version.to_string())),
        // The namespace object itself and its subresources.
        ["namespaces", name] if group.is_empty() => rp(None, "namespaces", Some(name), None),
        ["namespaces", name, sub @ ("status" | "finalize")] if group.is_empty() => {
            rp(None, "namespaces", Some(name), Some(sub))
        }
        ["namespaces", ns, plural] => rp(Some(ns), plural, None, None),
        ["namespaces", ns, plural, name] => rp(Some(ns), plural, Some(name), None),
        ["namespaces", ns, plural, name, sub] => rp(Some(ns), plural, Some(name), Some(sub)),
        [plural] => rp(None, plural, None, None),
        [plural, name] => rp(None, plural, Some(name), None),
        [plural, name, sub] => rp(None, plural, Some(name), Some(sub)),
        _ => None,
    }
}

fn json_response(code: StatusCode, value: &Value) -> Response {
    bytes_response(code, crate::json_bytes::to_bytes(value))
}

fn bytes_response(code: StatusCode, body: impl Into<Body>) -> Response {
    Response::builder()
        .status(code)
        .header(header::CONTENT_TYPE, "application/json")
        .body(body.into())
        .unwrap_or_default()
}

/// `resp` with one `Warning: 299` header per warning, as kube-apiserver sends them.
fn with_warnings(mut resp: Response, warnings: &[String]) -> Response {
    for w in warnings {
        if let Ok(v) = HeaderValue::from_str(&format!("299 - {:?}", w)) {
            resp.headers_mut().append(header::WARNING, v);
        }
    }
    resp
}

/// The Kubernetes `Status` response for `err`.
pub fn error_response(err: &ApiError) -> Response {
    let code = StatusCode::from_u16(err.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut resp = json_response(code, &err.to_status());
    if let Some(r) = err.retry_after {
        resp.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(r));
    }
    resp
}

fn text_response(text: &str) -> Response {
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .body(Body::from(text.to_string()))
        .unwrap_or_default()
}

/// Paths anyone may read without credentials.
fn is_public(path: &str) -> bool {
    matches!(path, "/healthz" | "/livez" | "/readyz" | "/version")
}

async fn handle(State(state): State<AppState>, req: Request) -> Response {
    let started = Instant::now();
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let Some(security) = state.security.clone().filter(|_| !is_public(&path)) else {
        return serve(&state, req, None, started).await;
    };
    let attrs = Attributes::of(&method, &path, &query_of(req.uri()));
    security
        .guard(req, attrs, |req, user| {
            serve(&state, req, Some(user), started)
        })
        .await
}

/// The decoded query string of `uri`.
pub(crate) fn query_of(uri: &http::Uri) -> HashMap<String, String> {
    Query::<HashMap<String, String>>::try_from_uri(uri)
        .map(|q| q.0)
        .unwrap_or_default()
}

/// Serves an admitted request (`user` is `None` for trusted in-process callers).
async fn serve(
    state: &AppState,
    req: Request,
    user: Option<Arc<UserInfo>>,
    started: Instant,
) -> Response {
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let (verb, resource, response) = dispatch(state, req, user).await;
    let code = response.status().as_u16();
    if verb != "WATCH" {
        state
            .engine
            .metrics()
            .observe(&verb, &resource, code, started.elapsed());
    }
    tracing::debug!(method = %method, path, code, elapsed_ms = started.elapsed().as_secs_f64() * 1000.0, "request");
    response
}

async fn dispatch(
    state: &AppState,
    req: Request,
    user: Option<Arc<UserInfo>>,
) -> (String, String, Response) {
    let path = req.uri().path().to_string();
    let method = req.method().clone();
    if method == Method::POST
        && let Some(review) = Review::of_path(&path)
    {
        let content_type = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let response = match read_body(req, state.config.body_timeout).await {
            Ok(body) => {
                let internal =
                    UserInfo::new("system:flotilla-internal", ["system:masters".to_string()]);
                let caller = Caller {
                    user: user.as_deref().unwrap_or(&internal),
                    policy: state.security.as_deref().map(Security::policy),
                    authenticator: state.security.as_deref().map(Security::authenticator),
                };
                match access_review::answer(review, &body, &content_type, caller).await {
                    Ok(answer) => json_response(StatusCode::CREATED, &answer),
                    Err(e) => error_response(&e),
                }
            }
            Err(e) => error_response(&e),
        };
        return ("POST".into(), "selfsubjectreviews".into(), response);
    }
    match path.as_str() {
        "/healthz" | "/livez" | "/readyz" => {
            return ("GET".into(), "health".into(), text_response("ok"));
        }
        // kr8s and Python's VersionApi ask for `/version/`.
        "/version" | "/version/" => {
            return (
                "GET".into(),
                "version".into(),
                json_response(StatusCode::OK, &discovery::version()),
            );
        }
        "/clock" => {
            let now = json!({"now": rfc3339(state.engine.clock.now())});
            return (
                "GET".into(),
                "clock".into(),
                json_response(StatusCode::OK, &now),
            );
        }
        "/metrics" => {
            let store = state.engine.store();
            let text = state
                .engine
                .metrics()
                .render(store.current_revision(), store.compacted_revision());
            return ("GET".into(), "metrics".into(), text_response(&text));
        }
        _ => {}
    }
    if path == "/openapi/v2" {
        let snap = state.engine.registry().snapshot();
        let (json, protobuf) = openapi_v2::served(&snap);
        let (content_type, body) = if crate::render::accept_of(req.headers()).contains("protobuf") {
            (openapi_v2::PROTOBUF, protobuf.clone())
        } else {
            ("application/json", json.clone())
        };
        let resp = Response::builder()
            .status(StatusCode::OK)
            .header(header::CONTENT_TYPE, content_type)
            .body(Body::from(body))
            .unwrap_or_default();
        return ("GET".into(), "openapi".into(), resp);
    }
    if let Some(rest) = path.strip_prefix("/openapi/v3") {
        let snap = state.engine.registry().snapshot();
        let resp = match openapi::document(&snap, rest.trim_start_matches('/')) {
            Some(doc) => json_response(StatusCode::OK, &doc),
            None => error_response(&ApiError::no_route()),
        };
        return ("GET".into(), "openapi".into(), resp);
    }
    let Some(route) = parse_path(&path) else {
        return (
            method.to_string(),
            "unknown".into(),
            error_response(&ApiError::no_route()),
        );
    };
    let snap = state.engine.registry().snapshot();
    let rp = match route {
        Route::Resource(rp) => rp,
        _ if method != Method::GET => {
            return (
                method.to_string(),
                "discovery".into(),
                error_response(&ApiError::method_not_allowed()),
            );
        }
        other => {
            let aggregated = match other {
                Route::CoreVersions => Some(true),
                Route::Groups => Some(false),
                _ => None,
            }
            .filter(|_| discovery::wants_aggregated(crate::render::accept_of(req.headers())));
            let resp = match aggregated {
                Some(core) => {
                    let mut resp =
                        json_response(StatusCode::OK, &discovery::aggregated(&snap, core));
                    resp.headers_mut().insert(
                        header::CONTENT_TYPE,
                        HeaderValue::from_static(discovery::AGGREGATED),
                    );
                    resp.headers_mut()
                        .insert(header::VARY, HeaderValue::from_static("Accept"));
                    resp
                }
                None => match discovery::serve(&snap, &other) {
                    Some(v) => json_response(StatusCode::OK, &v),
                    None => error_response(&ApiError::no_route()),
                },
            };
            return ("GET".into(), "discovery".into(), resp);
        }
    };
    let Some(info) = snap.get(&rp.group, &rp.version, &rp.plural) else {
        return (
            method.to_string(),
            rp.plural.clone(),
            error_response(&ApiError::no_route()),
        );
    };
    let query = query_of(req.uri());
    let watching = query.get("watch").is_some_and(|w| w == "true" || w == "1");
    let verb = match (&method, rp.name.is_some(), watching) {
        (&Method::GET, false, true) => "WATCH",
        (&Method::GET, false, false) => "LIST",
        (&Method::GET, true, _) => "GET",
        (&Method::POST, _, _) => "POST",
        (&Method::PUT, _, _) => "PUT",
        (&Method::PATCH, _, _) => "PATCH",
        (&Method::DELETE, true, _) => "DELETE",
        (&Method::DELETE, false, _) => "DELETECOLLECTION",
        _ => "OTHER",
    };
    let resource = info.plural.clone();
    let deprecation = info.deprecation.clone();
    let output = Output::from_accept(req.headers())
        .with_include(query.get("includeObject").map(String::as_str));
    let request = ResourceRequest {
        state,
        info,
        rp,
        query,
        output,
    };
    let result = if verb == "WATCH" {
        request.watch().await
    } else {
        match tokio::time::timeout(state.config.request_timeout, request.run(verb, req)).await {
            Ok(r) => r,
            Err(_) => Err(ApiError::timeout()),
        }
    };
    let response = result.unwrap_or_else(|e| error_response(&e));
    (
        verb.to_string(),
        resource,
        with_warnings(response, deprecation.as_slice()),
    )
}

struct ResourceRequest<'a> {
    state: &'a AppState,
    info: Arc<ResourceInfo>,
    rp: ResourcePath,
    query: HashMap<String, String>,
    output: Output,
}

impl ResourceRequest<'_> {
    fn q(&self, key: &str) -> Option<&str> {
        self.query.get(key).map(String::as_str)
    }

    fn ns(&self) -> Option<&str> {
        self.rp.namespace.as_deref()
    }

    fn name(&self) -> &str {
        self.rp.name.as_deref().unwrap_or_default()
    }

    fn subresource(&self) -> ApiResult<Option<&str>> {
        match self.rp.subresource.as_deref() {
            None => Ok(None),
            Some("status") if self.info.status_subresource => Ok(Some("status")),
            Some("scale") if self.info.scale.is_some() => Ok(Some("scale")),
            Some("eviction") if crate::hooks::is_pod_resource(&self.info) => Ok(Some("eviction")),
            Some("finalize") if crate::hooks::is_namespace_resource(&self.info) => Ok(None),
            Some(_) => Err(ApiError::no_route()),
        }
    }

    fn filter(&self) -> ApiResult<ListFilter> {
        request_options::resource_version(self.q("resourceVersion"))?;
        request_options::resource_version_match(
            self.q("resourceVersion"),
            self.q("resourceVersionMatch"),
        )?;
        let mut f = ListFilter::parse(
            &self.info,
            self.q("labelSelector"),
            self.q("fieldSelector"),
            self.q("limit"),
            self.q("continue"),
        )?;
        if self.q("resourceVersionMatch") == Some("Exact") {
            let rv = self.q("resourceVersion").unwrap_or_default();
            f.exact_revision = Some(rv.parse().map_err(|_| {
                ApiError::bad_request(format!(
                    "invalid resource version {rv:?} for resourceVersionMatch=Exact"
                ))
            })?);
        }
        Ok(f)
    }

    /// The options of a write (`CreateOptions`, `UpdateOptions` or `PatchOptions`, named by
    /// `options` in errors), validated as kube-apiserver validates them.
    fn write_options(
        &self,
        options: &str,
        default_manager: &str,
        body: &[u8],
        content_type: &str,
    ) -> ApiResult<WriteOptions> {
        let field_validation =
            match request_options::field_validation(options, self.q("fieldValidation"))? {
                "Strict" => FieldValidation::Strict,
                "Ignore" => FieldValidation::Ignore,
                _ => FieldValidation::Warn,
            };
        let duplicate_fields = if field_validation != FieldValidation::Ignore
            && content_type.contains("json")
            && !body.is_empty()
        {
            flotilla_apimachinery::schema::find_duplicate_fields(body).unwrap_or_default()
        } else {
            vec![]
        };
        let dry_run_values: Vec<&str> = self
            .q("dryRun")
            .filter(|v| !v.is_empty())
            .into_iter()
            .collect();
        let dry_run = request_options::dry_run(options, &dry_run_values)?;
        let field_manager = match self.q("fieldManager") {
            Some(m) if m.len() > 128 => {
                return Err(ApiError::bad_request(
                    "fieldManager: Too long: must have at most 128 bytes",
                ));
            }
            Some(m) if !m.is_empty() => m.to_string(),
            _ => default_manager.to_string(),
        };
        let force = match self.q("force") {
            None | Some("") | Some("false") => false,
            Some("true") => true,
            Some(other) => {
                return Err(ApiError::bad_request(format!(
                    "invalid force value {other:?}"
                )));
            }
        };
        Ok(WriteOptions {
            dry_run,
            field_manager,
            field_validation,
            duplicate_fields,
            force,
        })
    }

    async fn run(self, verb: &str, req: Request) -> ApiResult<Response> {
        let default_manager = user_agent_manager(req.headers());
        let content_type = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let body = read_body(req, self.state.config.body_timeout).await?;
        let engine = &self.state.engine;
        let info = self.info.clone();
        if matches!(verb, "PUT" | "PATCH") && self.rp.name.is_none() {
            let what = if verb == "PUT" { "update" } else { "patch" };
            return Err(ApiError::method_not_supported(
                &crate::engine::target(&info, ""),
                what,
            ));
        }
        match verb {
            "GET" | "PUT" | "PATCH" if self.subresource()? == Some("scale") => {
                let options = match verb {
                    "PUT" => "UpdateOptions",
                    _ => "PatchOptions",
                };
                let opts = self.write_options(options, &default_manager, &body, &content_type)?;
                let scale = match verb {
                    "GET" => engine.get_scale(&info, self.ns(), self.name()).await?,
                    "PUT" => {
                        let body = decode_body(&body, &content_type, &Value::Null)?;
                        engine
                            .write_scale(
                                &info,
                                self.ns(),
                                self.name(),
                                ScaleWrite::Replace(body),
                                &opts,
                            )
                            .await?
                    }
                    _ => {
                        let patch_type = PatchType::from_content_type(&content_type)?;
                        engine
                            .write_scale(
                                &info,
                                self.ns(),
                                self.name(),
                                ScaleWrite::Patch(patch_type, &body),
                                &opts,
                            )
                            .await?
                    }
                };
                Ok(json_response(StatusCode::OK, &scale))
            }
            "GET" => {
                self.subresource()?;
                request_options::resource_version(self.q("resourceVersion"))?;
                if self.output == Output::Objects
                    && let Some(stored) = engine.get_raw(&info, self.ns(), self.name()).await?
                {
                    return Ok(bytes_response(StatusCode::OK, stored));
                }
                let obj = engine.get(&info, self.ns(), self.name()).await?;
                Ok(self
                    .output
                    .object(&info, obj, StatusCode::OK, &[], engine.clock.now()))
            }
            "LIST" => {
                let filter = self.filter()?;
                if self.output == Output::Objects
                    && let Some(page) = engine.list_raw(&info, self.ns(), &filter).await?
                {
                    return Ok(bytes_response(
                        StatusCode::OK,
                        render::raw_list(&info, page),
                    ));
                }
                let list = engine.list(&info, self.ns(), &filter).await?;
                Ok(self.output.list(&info, list, engine.clock.now()))
            }
            "POST" if self.subresource()? == Some("eviction") => {
                let eviction = decode_body(&body, &content_type, &Value::Null)?;
                let status = engine
                    .evict(&info, self.ns().unwrap_or_default(), self.name(), &eviction)
                    .await?;
                Ok(json_response(StatusCode::CREATED, &status))
            }
            "POST" => {
                if self.rp.name.is_some() {
                    return Err(ApiError::method_not_supported(
                        &crate::engine::target(&info, self.name()),
                        "create",
                    ));
                }
                let opts =
                    self.write_options("CreateOptions", &default_manager, &body, &content_type)?;
                let obj = decode_body(&body, &content_type, &info.schema)?;
                let w = engine.create(&info, self.ns(), obj, &opts).await?;
                Ok(self.written(w))
            }
            "PUT" => {
                let sub = self.subresource()?;
                let opts =
                    self.write_options("UpdateOptions", &default_manager, &body, &content_type)?;
                let obj = decode_body(&body, &content_type, &info.schema)?;
                let w = engine
                    .update(&info, self.ns(), self.name(), obj, sub, &opts)
                    .await?;
                Ok(self.written(w))
            }
            "PATCH" => {
                let sub = self.subresource()?;
                let patch_type = PatchType::from_content_type(&content_type)?;
                let mut opts =
                    self.write_options("PatchOptions", &default_manager, &body, &content_type)?;
                if patch_type == PatchType::Apply
                    && self.q("fieldManager").is_none_or(str::is_empty)
                {
                    // Apply requires an explicit manager; no User-Agent fallback.
                    opts.field_manager.clear();
                }
                let w = engine
                    .patch(&info, self.ns(), self.name(), patch_type, &body, sub, &opts)
                    .await?;
                Ok(self.written(w))
            }
            "DELETE" => {
                let (opts, orphan_dependents) = self.delete_options(&body)?;
                let d = engine.delete(&info, self.ns(), self.name(), &opts).await?;
                // kube answers 202 only for a delete that is not immediate and asked for
                // cascading by `orphanDependents: false`; an immediate delete of most kinds
                // answers a Success Status, of a few the deleted object.
                let code = if !d.gone && orphan_dependents == Some(false) {
                    StatusCode::ACCEPTED
                } else {
                    StatusCode::OK
                };
                if d.gone && !crate::hooks::returns_deleted_object(&info) {
                    let details = crate::engine::target(&info, self.name());
                    return Ok(json_response(
                        code,
                        &crate::status::success(&details, &d.object),
                    ));
                }
                Ok(self
                    .output
                    .object(&info, d.object, code, &[], engine.clock.now()))
            }
            "DELETECOLLECTION" if crate::hooks::is_namespace_resource(&info) => {
                Err(ApiError::method_not_supported(
                    &crate::engine::target(&info, ""),
                    "deletecollection",
                ))
            }
            "DELETECOLLECTION" => {
                let (opts, _) = self.delete_options(&body)?;
                let list = engine
                    .delete_collection(&info, self.ns(), &self.filter()?, &opts)
                    .await?;
                Ok(self.output.list(&info, list, engine.clock.now()))
            }
            _ => Err(ApiError::method_not_supported(
                &crate::engine::target(&info, self.name()),
                verb,
            )),
        }
    }

    fn written(&self, w: Written) -> Response {
        let code = if w.created {
            StatusCode::CREATED
        } else {
            StatusCode::OK
        };
        if self.output == Output::Objects
            && let Some(body) = w.stored_json(&self.info)
        {
            return with_warnings(bytes_response(code, body), &w.warnings);
        }
        self.output.object(
            &self.info,
            w.object,
            code,
            &w.warnings,
            self.state.engine.clock.now(),
        )
    }

    fn delete_options(&self, body: &[u8]) -> ApiResult<(DeleteOptions, Option<bool>)> {
        let query = |name: &str| self.q(name).map(String::from);
        let req = request_options::delete_options(body, &query)?;
        Ok((
            DeleteOptions {
                propagation: req.propagation,
                precondition_uid: req.precondition_uid,
                precondition_rv: req.precondition_rv,
                dry_run: req.dry_run,
            },
            req.orphan_dependents,
        ))
    }

    async fn watch(self) -> ApiResult<Response> {
        let engine = &self.state.engine;
        let timeout = match self.q("timeoutSeconds").map(str::parse::<u64>) {
            Some(Ok(s)) if s > 0 => Duration::from_secs(s).min(self.state.config.watch_timeout),
            Some(Err(_)) => return Err(ApiError::bad_request("timeoutSeconds must be an integer")),
            _ => self.state.config.watch_timeout,
        };
        let opts = WatchOptions {
            resource_version: self.q("resourceVersion").map(String::from),
            send_initial_events: self.q("sendInitialEvents") == Some("true"),
            allow_bookmarks: self.q("allowWatchBookmarks") == Some("true"),
            timeout,
            bookmark_interval: self.state.config.bookmark_interval,
            filter: self.filter()?,
        };
        let rx = engine
            .watch(self.info.clone(), self.rp.namespace.clone(), opts)
            .await?;
        let info = self.info.clone();
        let output = self.output;
        let clock = engine.clock.clone();
        let mut first = true;
        let stream = ReceiverStream::new(rx).map(move |event| {
            let line = match (output, event.object) {
                (Output::Objects, WatchObject::Json(json)) => {
                    crate::watch::json_line(event.event_type, &json)
                }
                (_, object) => {
                    let object = output.watch_object(
                        &info,
                        object.into_value(),
                        event.event_type,
                        first,
                        clock.now(),
                    );
                    let mut line =
                        serde_json::to_vec(&json!({"type": event.event_type, "object": object}))
                            .unwrap_or_default();
                    line.push(b'\n');
                    Bytes::from(line)
                }
            };
            first = false;
            Ok::<Bytes, std::convert::Infallible>(line)
        });
        Ok(Response::builder()
            .status(StatusCode::OK)
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::CACHE_CONTROL, "no-cache, private")
            .body(Body::from_stream(stream))
            .unwrap_or_default())
    }
}

/// The field manager kube-apiserver derives from the User-Agent when none is given.
fn user_agent_manager(headers: &HeaderMap) -> String {
    headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .map(|ua| {
            ua.split('/')
                .next()
                .unwrap_or(ua)
                .chars()
                .take(128)
                .collect()
        })
        .unwrap_or_else(|| "unknown".to_string())
}

/// Reads a request body of at most [`MAX_BODY`] bytes within `timeout`. A larger body is
/// refused with a 413 after being read to its end (not kept), so the client reads the 413
/// instead of a connection reset under its upload; one announced as larger by a client that
/// waits for `100 Continue` is refused without being read at all.
async fn read_body(req: Request, timeout: Duration) -> ApiResult<Bytes> {
    let announced = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    let waits_to_send = req
        .headers()
        .get(header::EXPECT)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
    if waits_to_send && announced.is_some_and(|n| n > MAX_BODY as u64) {
        return Err(ApiError::too_large(MAX_BODY));
    }
    let deadline = tokio::time::Instant::now() + timeout;
    let mut body = req.into_body();
    let mut buf = bytes::BytesMut::new();
    let mut seen = 0usize;
    loop {
        let frame = match tokio::time::timeout_at(deadline, body.frame()).await {
            Ok(Some(frame)) => frame
                .map_err(|e| ApiError::bad_request(format!("error reading request body: {e}")))?,
            Ok(None) => break,
            Err(_) if seen > MAX_BODY => return Err(ApiError::too_large(MAX_BODY)),
            Err(_) => return Err(ApiError::body_timeout(timeout)),
        };
        if let Ok(data) = frame.into_data() {
            seen = seen.saturating_add(data.len());
            if seen <= MAX_BODY {
                buf.extend_from_slice(&data);
            }
        }
    }
    if seen > MAX_BODY {
        return Err(ApiError::too_large(MAX_BODY));
    }
    Ok(buf.freeze())
}

/// Decodes a create/update body: JSON, or YAML when the content type says so.
fn decode_body(body: &[u8], content_type: &str, schema: &Value) -> ApiResult<Value> {
    if body.is_empty() {
        return Err(ApiError::bad_request(
            "the request body is empty: expected a Kubernetes object",
        ));
    }
    let base = content_type.split(';').next().unwrap_or_default().trim();
    match base {
        "application/yaml" => {
            let text = std::str::from_utf8(body)
                .map_err(|_| ApiError::bad_request("request body is not UTF-8"))?;
            serde_saphyr::from_str(text)
                .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))
        }
        crate::protobuf::CONTENT_TYPE => {
            if let Some(kind) = crate::protobuf::unsupported_kind(body) {
                return Err(ApiError::unsupported_media_type(&format!(
                    "{} (protobuf is not served for {kind}; send application/json)",
                    crate::protobuf::CONTENT_TYPE
                )));
            }
            crate::protobuf::decode(body, schema)
                .map_err(|e| ApiError::bad_request(format!("error decoding protobuf body: {e}")))
        }
        "" | "application/json" | "*/*" => serde_json::from_slice(body).map_err(|e| {
            ApiError::bad_request(format!("couldn't get version/kind; json parse error: {e}"))
        }),
        other => Err(ApiError::unsupported_media_type(other)),
    }
}

impl Output {
    fn list(&self, info: &ResourceInfo, list: ObjectList, now: jiff::Timestamp) -> Response {
        json_response(StatusCode::OK, &render::list(self, info, list, now))
    }

    fn object(
        &self,
        info: &ResourceInfo,
        obj: Value,
        code: StatusCode,
        warnings: &[String],
        now: jiff::Timestamp,
    ) -> Response {
        with_warnings(
            json_response(code, &render::object(self, info, obj, now)),
            warnings,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(
        group: &str,
        ns: Option<&str>,
        plural: &str,
        name: Option<&str>,
        sub: Option<&str>,
    ) -> Option<Route> {
        Some(Route::Resource(ResourcePath {
            group: group.into(),
            version: "v1".into(),
            namespace: ns.map(String::from),
            plural: plural.into(),
            name: name.map(String::from),
            subresource: sub.map(String::from),
        }))
    }

    #[test]
    fn paths_parse_like_kube_apiserver() {
        assert_eq!(parse_path("/api"), Some(Route::CoreVersions));
        assert_eq!(parse_path("/apis/apps"), Some(Route::Group("apps".into())));
        assert_eq!(
            parse_path("/apis/apps/v1"),
            Some(Route::GroupVersion("apps".into(), "v1".into()))
        );
        assert_eq!(
            parse_path("/api/v1/namespaces"),
            res("", None, "namespaces", None, None)
        );
        assert_eq!(
            parse_path("/api/v1/namespaces/default"),
            res("", None, "namespaces", Some("default"), None)
        );
        assert_eq!(
            parse_path("/api/v1/namespaces/x/status"),
            res("", None, "namespaces", Some("x"), Some("status"))
        );
        assert_eq!(
            parse_path("/api/v1/namespaces/x/configmaps"),
            res("", Some("x"), "configmaps", None, None)
        );
        assert_eq!(
            parse_path("/apis/g/v1/namespaces/x/things/a/status"),
            res("g", Some("x"), "things", Some("a"), Some("status"))
        );
        assert_eq!(
            parse_path("/apis/g/v1/things/a"),
            res("g", None, "things", Some("a"), None)
        );
        assert_eq!(parse_path("/nope"), None);
    }
}
