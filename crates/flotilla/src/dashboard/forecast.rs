//! `GET /apis/updates.flotilla.dev/v1beta1/updateruns/<name>/forecast`: the predicted timeline
//! of an update run (what `flotilla updaterun plan` prints), as a read-only subresource.
//!
//! It passes the hub's gate like any API request (RBAC verb `get` on `updateruns/forecast`,
//! which `fleet-viewer` grants), then reads the run, members, windows and catalog with the
//! hub's in-process client and runs the pure forecast. The dashboard shows it next to the
//! run's live diagram; `kubectl get --raw` can read it too.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, Query, Request, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use flotilla_apiserver::Security;
use flotilla_apiserver::http::error_response;
use flotilla_apiserver::rbac::Attributes;
use flotilla_apiserver::status::{ApiError, Target};
use flotilla_updates::forecast::{Assumptions, End, Forecast, RenderOptions, render};
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
        .route(ROUTE, get(serve))
        .with_state(ForecastState { client, security })
        .merge(app)
}

async fn serve(
    State(state): State<ForecastState>,
    Path(name): Path<String>,
    Query(query): Query<HashMap<String, String>>,
    req: Request,
) -> Response {
    let answer = async move |name: String| match answer(&state.client, &name, &query).await {
        Ok(body) => (StatusCode::OK, axum::Json(body)).into_response(),
        Err(error) => error_response(&error),
    };
    match state.security.clone() {
        Some(security) => {
            let attrs = Attributes::of(req.method(), req.uri().path(), &HashMap::new());
            security.guard(req, attrs, |_, _| answer(name)).await
        }
        None => answer(name).await,
    }
}

/// The forecast of run `name` as JSON, or the API error to answer with.
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
    let target = Target {
        group: "updates.flotilla.dev".into(),
        resource: "updateruns".into(),
        name: name.into(),
    };
    match forecast_run(client, name, assumptions).await {
        Ok(Some(predicted)) => Ok(body(&predicted)),
        Ok(None) => Err(ApiError::not_found(&target)),
        Err(error) => Err(ApiError::internal(format!("{error:#}"))),
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
