//! The kinds the hub serves, from its discovery documents, cached for a while: placements read
//! them on every reconcile, and kinds come and go only with CustomResourceDefinitions.

use std::time::{Duration, Instant};

use kube::Client;
use kube::discovery::{Discovery, Scope, verbs};
use tokio::sync::Mutex;

use super::ControllerError;
use crate::selection::KindInfo;

/// How long a discovery result is used before it is read again.
const FRESH_FOR: Duration = Duration::from_secs(10);

/// A cached list of the hub's listable kinds (each group at its preferred version).
pub(crate) struct HubKinds {
    client: Client,
    cached: Mutex<Option<(Instant, std::sync::Arc<Vec<KindInfo>>)>>,
}

impl HubKinds {
    /// A cache over `client`'s discovery, empty until first used.
    pub(crate) fn new(client: Client) -> Self {
        Self {
            client,
            cached: Mutex::new(None),
        }
    }

    /// The served kinds; read again when older than [`FRESH_FOR`] or when `refresh` (a
    /// selector named a kind the cached list lacks).
    pub(crate) async fn get(
        &self,
        refresh: bool,
    ) -> Result<std::sync::Arc<Vec<KindInfo>>, ControllerError> {
        let mut cached = self.cached.lock().await;
        if let Some((at, kinds)) = cached.as_ref()
            && !refresh
            && at.elapsed() < FRESH_FOR
        {
            return Ok(kinds.clone());
        }
        let discovery = Discovery::new(self.client.clone())
            .run()
            .await
            .map_err(|e| ControllerError::Discovery(e.to_string()))?;
        let mut kinds = Vec::new();
        for group in discovery.groups() {
            for (resource, capabilities) in group.recommended_resources() {
                if !capabilities.supports_operation(verbs::LIST) || resource.plural.contains('/') {
                    continue;
                }
                kinds.push(KindInfo {
                    group: resource.group.clone(),
                    version: resource.version.clone(),
                    kind: resource.kind.clone(),
                    plural: resource.plural.clone(),
                    namespaced: capabilities.scope == Scope::Namespaced,
                });
            }
        }
        kinds.sort();
        let kinds = std::sync::Arc::new(kinds);
        *cached = Some((Instant::now(), kinds.clone()));
        Ok(kinds)
    }
}
