//! The maintenance window status controller: one reconcile per `MaintenanceConfiguration`
//! computes its status with [`crate::window::window_status`], writes it through the status
//! subresource when it changed, and asks to look again when the status next changes (the
//! current occurrence ends or the next one starts), on the injected clock so `--clock-speed`
//! and manual test clocks apply.

use std::sync::Arc;

use flotilla_api::updates::MaintenanceConfiguration;
use flotilla_apiserver::clock::{Clock, Deadlines};
use flotilla_apiserver::metrics::controller::Queue;
use kube::api::PostParams;
use kube::runtime::controller::Action;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Api, Client, ResourceExt};

use super::{ControllerError, MANAGER, error_policy};
use crate::window::window_status;

/// What every window reconcile shares.
struct Context {
    client: Client,
    clock: Arc<dyn Clock>,
    deadlines: Deadlines<ObjectRef<MaintenanceConfiguration>>,
}

/// Runs the window status controller until the client's API goes away.
pub(crate) async fn run(client: Client, clock: Arc<dyn Clock>) {
    let (deadlines, due) = Deadlines::new(clock.clone());
    let queue = Queue::new("maintenanceconfiguration");
    let controller = queue.controller(
        Api::<MaintenanceConfiguration>::all(client.clone()),
        watcher::Config::default(),
    );
    let ctx = Arc::new(Context {
        client,
        clock,
        deadlines,
    });
    let results = controller.reconcile_on(queue.triggered(due)).run(
        queue.instrument(reconcile),
        error_policy,
        ctx,
    );
    queue.drive(results).await;
}

/// Computes one configuration's status, writes it when it changed, and schedules the next
/// look.
async fn reconcile(
    config: Arc<MaintenanceConfiguration>,
    ctx: Arc<Context>,
) -> Result<Action, ControllerError> {
    if config.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let now = ctx.clock.now();
    let evaluated = window_status(
        &config.spec.maintenance_window,
        config.metadata.generation,
        config.status.as_ref(),
        now,
    );
    if config.status.as_ref() != Some(&evaluated.status) {
        let mut updated = (*config).clone();
        updated.status = Some(evaluated.status);
        let namespace = config.namespace().unwrap_or_default();
        let params = PostParams {
            field_manager: Some(MANAGER.into()),
            ..Default::default()
        };
        Api::<MaintenanceConfiguration>::namespaced(ctx.client.clone(), &namespace)
            .replace_status(&config.name_any(), &params, &updated)
            .await?;
    }
    if let Some(at) = evaluated.next_change {
        ctx.deadlines.schedule(at, ObjectRef::from_obj(&*config));
    }
    Ok(Action::await_change())
}
