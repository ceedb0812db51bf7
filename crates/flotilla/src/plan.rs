//! `flotilla updaterun plan NAME`: the predicted timeline of an update run — which member
//! upgrades when, what waits for which window or gate, when the run ends — without changing
//! anything. It reads the run, the fleet's members, maintenance windows and release catalog
//! from the hub and runs the pure orchestrator over a copy in simulated time
//! ([`flotilla_updates::forecast`]), from the hub's own clock.

use std::path::PathBuf;

use anyhow::{Context, Result, anyhow};
use clap::Args;
use flotilla_api::cluster::MemberCluster;
use flotilla_api::updates::{
    FleetUpdateStrategy, KubernetesVersion, MaintenanceConfiguration, NodeImageVersion, UpdateRun,
};
use flotilla_updates::fleet::{FleetView, strategy_to_fetch};
use flotilla_updates::forecast::{Assumptions, Forecast, RenderOptions, forecast, render};
use jiff::SignedDuration;
use kube::Api;

/// Arguments of `flotilla updaterun plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// The UpdateRun (`kubectl get updateruns` lists them).
    pub name: String,
    /// How long after an Approval gate is reached someone approves it (`30m`, `2h`, `1d`), or
    /// `never` to see where the run would stop.
    #[arg(long, default_value = "0s", value_parser = parse_approval_delay)]
    pub approval_delay: ApprovalDelay,
    /// One line per member change in every group, however large.
    #[arg(long)]
    pub full: bool,
    /// The hub's kubeconfig; default `$KUBECONFIG`, else `.flotilla/kubeconfig`.
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
}

/// When approvals are assumed to come: after a delay, or never.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApprovalDelay(pub Option<SignedDuration>);

/// Parses `never` or a friendly duration (`0s`, `30m`, `2h`, `1d`).
pub(crate) fn parse_approval_delay(text: &str) -> Result<ApprovalDelay, String> {
    if text == "never" {
        return Ok(ApprovalDelay(None));
    }
    let delay: SignedDuration = text
        .parse()
        .map_err(|e| format!("{text:?} is neither `never` nor a duration like 30m or 2h: {e}"))?;
    if delay.is_negative() {
        return Err(format!(
            "{text:?}: an approval cannot come before it is asked for"
        ));
    }
    Ok(ApprovalDelay(Some(delay)))
}

/// Prints the forecast of run `args.name`.
pub async fn run(args: PlanArgs) -> Result<()> {
    let client = crate::member::hub_client(args.kubeconfig).await?;
    let assumptions = Assumptions {
        approval_delay: args.approval_delay.0,
        ..Assumptions::default()
    };
    let predicted = forecast_run(&client, &args.name, assumptions)
        .await?
        .ok_or_else(|| {
            anyhow!(
                "updaterun {:?} not found (kubectl get updateruns lists them)",
                args.name
            )
        })?;
    let options = RenderOptions {
        full: args.full,
        ..RenderOptions::default()
    };
    print!("{}", render(&predicted, &options));
    Ok(())
}

/// The forecast of UpdateRun `name` from the hub's current state and clock under
/// `assumptions`; `None` when there is no such run. Shared by `flotilla updaterun plan` and
/// the dashboard's forecast subresource.
pub async fn forecast_run(
    client: &kube::Client,
    name: &str,
    assumptions: Assumptions,
) -> Result<Option<Forecast>> {
    let Some(run) = Api::<UpdateRun>::all(client.clone())
        .get_opt(name)
        .await
        .context("reaching the hub")?
    else {
        return Ok(None);
    };
    let members: Vec<MemberCluster> = crate::member::list_all(client).await?;
    let configurations: Vec<MaintenanceConfiguration> = crate::member::list_all(client).await?;
    let kubernetes: Vec<KubernetesVersion> = crate::member::list_all(client).await?;
    let images: Vec<NodeImageVersion> = crate::member::list_all(client).await?;
    let status = run.status.clone().unwrap_or_default();
    let named = match strategy_to_fetch(&run.spec, &status) {
        Some(strategy) => Api::<FleetUpdateStrategy>::all(client.clone())
            .get_opt(strategy)
            .await?
            .map(|s| s.spec),
        None => None,
    };
    let fleet = FleetView::new(&members, &configurations, &kubernetes, &images);
    let now = crate::hub_clock::now(client).await?;
    forecast(&run, named.as_ref(), &fleet, now, &assumptions)
        .map(Some)
        .map_err(|e| anyhow::Error::new(e).context(format!("cannot plan run {name}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approval_delays_are_durations_or_never() {
        assert_eq!(parse_approval_delay("never"), Ok(ApprovalDelay(None)));
        assert_eq!(
            parse_approval_delay("2h"),
            Ok(ApprovalDelay(Some(SignedDuration::from_hours(2))))
        );
        assert_eq!(
            parse_approval_delay("0s"),
            Ok(ApprovalDelay(Some(SignedDuration::ZERO)))
        );
        assert!(
            parse_approval_delay("soon")
                .unwrap_err()
                .contains("neither `never`")
        );
        assert!(
            parse_approval_delay("-1h")
                .unwrap_err()
                .contains("cannot come before")
        );
    }
}
