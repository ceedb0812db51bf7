//! `GET /apis/updates.flotilla.dev/v1beta1/updateruns/<name>/forecast`: the predicted timeline
//! of an update run (what `flotilla updaterun plan` prints), as a read-only subresource.
//!
//! It passes the hub's gate like any API request (RBAC verb `get` on `updateruns/forecast`,
//! which `fleet-viewer` grants), then reads the run, members, windows and catalog with the
//! hub's in-process client and runs the pure forecast. The dashboard shows it next to the
//! run's live diagram; `kubectl get --raw` can read it too.
//!
//! Like kube's `pods/log`, the subresource is its own permission: whoever may get it learns
//! what the forecast says of the run's members (names, windows, versions) without needing to
//! read those objects. Each request lists the fleet afresh and simulates (no cache): the
//! dashboard asks every 15 s per open run page.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Query, Request, State};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use flotilla_apiserver::Security;
use flotilla_apiserver::http::error_response;
use flotilla_apiserver::rbac::Attributes;
use flotilla_apiserver::status::{ApiError, Target};
use flotilla_updates::forecast::{
    Assumptions, End, Forecast, ForecastError, RenderOptions, render,
};
use http::StatusCode;
use serde_json::{Value, json};

use crate::plan::{forecast_run, parse_approval_delay};

/// Where the subresource is served.
const ROUTE: &str = "/apis/updates.flotilla.dev/v1beta1/updateruns/{name}/forecast";

#[derive(Clone)]
struct ForecastState {
    client: kube::Client,
    security: Option<Arc<Security>>,
}

/// `app` with the forecast subresource, computed through `client` (the hub's trusted
/// in-process client) after `security`'s gate (`None` trusts every caller).
pub fn with_forecasts(
    app: Router,
    client: kube::Client,
    security: Option<Arc<Security>>,
) -> Router {
    Router::new()
        .route(ROUTE, any(serve))
        .with_state(ForecastState { client, security })
        .merge(app)
}

async fn serve(State(state): State<ForecastState>, req: Request) -> Response {
    let name = req
        .uri()
        .path()
        .rsplit('/')
        .nth(1)
        .unwrap_or_default()
        .to_string();
    let method = req.method().clone();
    let query = Query::<HashMap<String, String>>::try_from_uri(req.uri()).map(|q| q.0);
    let answer = async move || {
        let result = match query {
            _ if method != http::Method::GET => Err(ApiError::method_not_supported(
                &target(&name),
                &method.to_string().to_lowercase(),
            )),
            Err(error) => Err(ApiError::bad_request(format!("query: {error}"))),
            Ok(query) => answer(&state.client, &name, &query).await,
        };
        match result {
            Ok(body) => (StatusCode::OK, axum::Json(body)).into_response(),
            Err(error) => error_response(&error),
        }
    };
    match state.security.clone() {
        Some(security) => {
            let attrs = Attributes::of(req.method(), req.uri().path(), &HashMap::new());
            security.guard(req, attrs, |_, _| answer()).await
        }
        None => answer().await,
    }
}

/// The run `name` as an error's subject.
fn target(name: &str) -> Target {
    Target {
        group: "updates.flotilla.dev".into(),
        resource: "updateruns".into(),
        name: name.into(),
    }
}

/// The forecast of run `name` as JSON, or the API error to answer with: 404 without the run,
/// 409 when the fleet's current state cannot be planned (no such strategy, a stage plan the
/// run would fail on), 503 when the hub's own reads fail.
async fn answer(
    client: &kube::Client,
    name: &str,
    query: &HashMap<String, String>,
) -> Result<Value, ApiError> {
    let delay = query
        .get("approvalDelay")
        .map(|text| parse_approval_delay(text))
        .transpose()
        .map_err(|e| ApiError::bad_request(format!("approvalDelay: {e}")))?;
    let assumptions = Assumptions {
        approval_delay: delay.map_or(Some(jiff::SignedDuration::ZERO), |d| d.0),
        ..Assumptions::default()
    };
    match forecast_run(client, name, assumptions).await {
        Ok(Some(predicted)) => Ok(body(&predicted)),
        Ok(None) => Err(ApiError::not_found(&target(name))),
        Err(error) if error.downcast_ref::<ForecastError>().is_some() => {
            Err(ApiError::conflict(&target(name), &format!("{error:#}")))
        }
        Err(error) => Err(ApiError::unavailable(format!(
            "forecasting update run {name}: {error:#}"
        ))),
    }
}

/// The JSON form of `predicted`: when it starts and ends (or why it is stuck), and the
/// timeline as `flotilla updaterun plan` prints it.
fn body(predicted: &Forecast) -> Value {
    let end = match &predicted.end {
        End::Finished { at, state, message } => json!({
            "finished": {"at": at.to_string(), "state": state, "message": message}
        }),
        End::Stuck { since, reasons } => json!({
            "stuck": {"since": since.to_string(), "reasons": reasons}
        }),
    };
    json!({
        "apiVersion": "updates.flotilla.dev/v1beta1",
        "kind": "UpdateRunForecast",
        "metadata": {"name": predicted.run},
        "upgrade": predicted.upgrade,
        "start": predicted.start.to_string(),
        "fromScratch": predicted.from_scratch,
        "end": end,
        "timeline": render(predicted, &RenderOptions::default()),
    })
}
