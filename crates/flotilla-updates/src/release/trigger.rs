//! When an auto-upgrade profile generates a run: when its channel gained a release since the
//! last trigger.

use std::collections::BTreeSet;

use super::channel::ChannelTarget;

/// Whether `target` holds a version the last trigger (`lastTriggerUpgradeVersions`, as
/// [`ChannelTarget::upgrade_versions`] wrote it) did not: a new Kubernetes patch or minor in
/// the channel, or a new image in some family. A target that only lost versions (a family or
/// release withdrawn from the catalog) releases nothing new and generates no run. With no last
/// trigger every target is new; whether a first observation generates a run (`catchUp`) or
/// only waits for the next release is the controller's call.
pub fn is_new_release(last_triggered: &[String], target: &ChannelTarget) -> bool {
    let last: BTreeSet<&str> = last_triggered.iter().map(String::as_str).collect();
    target
        .upgrade_versions()
        .iter()
        .any(|version| !last.contains(version.as_str()))
}
