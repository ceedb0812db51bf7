//! Auto-upgrade profiles, decided: given a profile, the release catalog, the fleet's member
//! versions and the time, what the profile's status says and whether it generates (and
//! starts) an update run now.
//!
//! Decisions the AKS behaviour leaves open, taken here:
//!
//! - **What counts as a new release.** The profile records where its channel pointed when it
//!   last looked (`status.channelVersions`). A release that adds a version there (a new patch
//!   or minor in the channel, a new image in some family) generates a run; a release withdrawn
//!   from the catalog does not.
//! - **A new profile waits for the next release** (as AKS does), unless `catchUp` is set:
//!   then it generates a run for the channel's current target at once, and again whenever it
//!   is enabled and the target is one it has not triggered for. Releases that come while a
//!   profile is disabled are not made up for when it is enabled again, except with `catchUp`.
//! - **Generated runs** are `Full` runs to the channel's Kubernetes version (`NodeImageOnly`
//!   with `Latest` images for the `NodeImage` channel), follow the profile's strategy and node
//!   image selection, start at once, and are named from the profile, the channel and the
//!   versions ([`generated_run_name`]): generating again finds the same run.
//!   [`generate_update_run`] (`az fleet autoupgradeprofile generate-update-run`) builds the
//!   same run for the channel's target now without starting it.
//! - **The one-minor rule and long-term support** are the run's: each member is judged when
//!   its turn comes ([`crate::release::member_verdict`]), so a member two minors behind is
//!   skipped with that reason and never moved two minors, and a stopped member is skipped.
//! - **Unsupported members** (outside the support window N−2..N, unless under long-term
//!   support on a minor that has it) are listed in the status whatever the channel.

use flotilla_api::updates::auto_upgrade::{
    AutoUpgradeProfileSpec, AutoUpgradeProfileStatus, TriggerStatus,
};
use flotilla_api::updates::update_run::{
    ManagedClusterUpdate, NodeImageSelection, NodeImageSelectionType, RunAction, UpdateRunSpec,
    UpgradeSpec, UpgradeType,
};
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::release::{
    Catalog, ChannelError, ChannelTarget, MemberVersion, Minor, channel_target, generated_run_name,
    is_new_release,
};

/// A run a profile generates.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratedRun {
    /// Its deterministic name.
    pub name: String,
    /// Its spec: the upgrade, the profile's strategy and selection, `state: Run`.
    pub spec: UpdateRunSpec,
}

/// What a profile does now.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// The profile's new status, as if the generated run (if any) was created.
    pub status: AutoUpgradeProfileStatus,
    /// The run to create and start, if a release calls for one.
    pub generate: Option<GeneratedRun>,
    /// When to look again without any object changing: the next time a release reaches a
    /// region.
    pub recheck_at: Option<Timestamp>,
}

/// Evaluates profile `name` at `now` over `catalog` and the fleet's `members`.
pub fn evaluate<'m>(
    name: &str,
    spec: &AutoUpgradeProfileSpec,
    status: &AutoUpgradeProfileStatus,
    catalog: &Catalog<'_>,
    members: impl IntoIterator<Item = MemberVersion<'m>>,
    now: Timestamp,
) -> Evaluation {
    let mut status = status.clone();
    let recheck_at = catalog.next_arrival(now);
    status.unsupported_members = catalog
        .support_window(now)
        .map(|window| window.unsupported_members(members))
        .unwrap_or_default();
    let target = match profile_target(spec, catalog, now) {
        Ok(target) => target,
        Err(e) => {
            status.message = Some(format!("the {:?} channel has no target: {e}", spec.channel));
            return Evaluation {
                status,
                generate: None,
                recheck_at,
            };
        }
    };
    let versions = target.upgrade_versions();
    let previous = status.channel_versions.replace(versions.clone());
    let shown = describe(&versions);
    if spec.disabled {
        status.message = Some(format!(
            "disabled: the {:?} channel is at {shown}; no runs are generated",
            spec.channel
        ));
        return Evaluation {
            status,
            generate: None,
            recheck_at,
        };
    }
    let why = if spec.catch_up {
        is_new_release(&status.last_trigger_upgrade_versions, &target).then_some("catch-up")
    } else {
        previous
            .filter(|seen| is_new_release(seen, &target))
            .map(|_| "new release")
    };
    let Some(why) = why else {
        status.message = Some(match &status.last_triggered_run {
            Some(run) if status.last_trigger_upgrade_versions == versions => format!(
                "the {:?} channel is at {shown}: run {run} upgrades to it",
                spec.channel
            ),
            _ => format!(
                "watching the {:?} channel, now at {shown}: its next release generates a run (catchUp brings lagging members now)",
                spec.channel
            ),
        });
        return Evaluation {
            status,
            generate: None,
            recheck_at,
        };
    };
    let run = generated_run(name, spec, &target, RunAction::Run);
    let message = format!(
        "{why}: generated and started run {} to upgrade to {shown}",
        run.name
    );
    status.last_triggered_at = Some(Time(now));
    status.last_trigger_status = Some(TriggerStatus::Succeeded);
    status.last_trigger_error = None;
    status.last_trigger_upgrade_versions = versions;
    status.last_trigger_message = Some(message.clone());
    status.last_triggered_run = Some(run.name.clone());
    status.message = Some(message);
    Evaluation {
        status,
        generate: Some(run),
        recheck_at,
    }
}

/// The status of a trigger whose run could not be created: the run is not recorded, and
/// where the channel pointed before is kept, so the next evaluation tries again.
pub fn failed_trigger(
    before: &AutoUpgradeProfileStatus,
    evaluated: &AutoUpgradeProfileStatus,
    run: &str,
    error: &str,
    now: Timestamp,
) -> AutoUpgradeProfileStatus {
    let mut status = evaluated.clone();
    status.channel_versions = before.channel_versions.clone();
    status.last_trigger_upgrade_versions = before.last_trigger_upgrade_versions.clone();
    status.last_triggered_run = before.last_triggered_run.clone();
    status.last_triggered_at = Some(Time(now));
    status.last_trigger_status = Some(TriggerStatus::Failed);
    status.last_trigger_error = Some(error.to_string());
    let message = format!("could not create run {run}: {error}");
    status.last_trigger_message = Some(message.clone());
    status.message = Some(message);
    status
}

/// `generate-update-run`: the run profile `name` would generate for its channel's target
/// at `now`, not started (`state: NotStarted`), whether or not the release is new. Its name
/// is the one the profile's own trigger uses for the same versions, so generating again, or
/// a trigger for the same release, finds the same run.
pub fn generate_update_run(
    name: &str,
    spec: &AutoUpgradeProfileSpec,
    catalog: &Catalog<'_>,
    now: Timestamp,
) -> Result<GeneratedRun, ChannelError> {
    let target = profile_target(spec, catalog, now)?;
    Ok(generated_run(name, spec, &target, RunAction::NotStarted))
}

/// Where the profile's channel points at `now` (its pinned minor's form is checked by
/// validation).
fn profile_target(
    spec: &AutoUpgradeProfileSpec,
    catalog: &Catalog<'_>,
    now: Timestamp,
) -> Result<ChannelTarget, ChannelError> {
    let pinned = spec
        .target_kubernetes_version
        .as_deref()
        .and_then(|v| Minor::parse(v).ok());
    channel_target(
        spec.channel,
        pinned,
        spec.long_term_support.unwrap_or(false),
        catalog,
        now,
    )
}

/// The run profile `profile` generates for `target`, in state `state`.
fn generated_run(
    profile: &str,
    spec: &AutoUpgradeProfileSpec,
    target: &ChannelTarget,
    state: RunAction,
) -> GeneratedRun {
    GeneratedRun {
        name: generated_run_name(profile, spec.channel, &target.upgrade_versions()),
        spec: run_spec(profile, spec, target, state),
    }
}

/// The spec of the run generated for `target`.
fn run_spec(
    profile: &str,
    spec: &AutoUpgradeProfileSpec,
    target: &ChannelTarget,
    state: RunAction,
) -> UpdateRunSpec {
    let (upgrade, selection) = match target {
        ChannelTarget::Kubernetes(target) => (
            UpgradeSpec {
                upgrade_type: UpgradeType::Full,
                kubernetes_version: Some(target.version.to_string()),
            },
            spec.node_image_selection.unwrap_or_default(),
        ),
        ChannelTarget::NodeImages(_) => (
            UpgradeSpec {
                upgrade_type: UpgradeType::NodeImageOnly,
                kubernetes_version: None,
            },
            NodeImageSelectionType::Latest,
        ),
    };
    UpdateRunSpec {
        update_strategy_name: spec.update_strategy_name.clone(),
        strategy: None,
        managed_cluster_update: ManagedClusterUpdate {
            upgrade,
            node_image_selection: Some(NodeImageSelection {
                selection_type: selection,
                custom_node_image_versions: Vec::new(),
            }),
        },
        state: Some(state),
        skip: Vec::new(),
        attempt: None,
        auto_upgrade_profile_name: Some(profile.to_string()),
    }
}

/// The versions for people: `1.32.1`, or the images joined by `, `.
fn describe(versions: &[String]) -> String {
    if versions.is_empty() {
        "no release".to_string()
    } else {
        versions.join(", ")
    }
}

#[cfg(test)]
mod tests;
