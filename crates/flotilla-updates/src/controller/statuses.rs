//! The status each run's passes have reached, stored on the hub behind them.
//!
//! A run's status lists every member (AKS's layout): megabytes at 10,000 members, of which a
//! pass changes a few. Writing it is the hub's most expensive request (the stored object is
//! decoded, patched, checked, encoded, stored and sent to every watcher), and a pass that
//! waited for its write, and then for the write to come back through its watch, would pace
//! the whole run by it. Instead a pass records the status it reached here and goes on; one
//! writer per run stores the latest recorded status, and the statuses passes reach while a
//! write is under way are written together by the next one. After each write the writer
//! rests twice as long as the write took, so that writing a large status takes at most a
//! third of the hub's time from the passes and the upgrades it records, and more passes
//! share each write.
//!
//! The book, not the watch's cache, is the truth about a run's status while it holds the
//! run: the next pass starts from the status the last one reached. The controller is the only
//! writer of the status, so a write refused as a conflict (someone edited the spec, bumping
//! the version) is sent again over the status as stored. When its writer has stored the
//! latest status, a run leaves the book, which keeps only the version written until the cache
//! shows it: a pass over a run whose cache is older waits for it. So the book holds the
//! statuses of runs being written, and a number for runs just written.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use flotilla_api::updates::UpdateRun;
use flotilla_api::updates::update_run::UpdateRunStatus;
use flotilla_apiserver::status_writes;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::{Api, Client};
use serde_json::Value;

/// How many times as long as a write took the writer rests after it.
const REST_PER_WRITE: u32 = 2;

/// The longest a writer rests after a write (a write that took longer was slowed by something
/// else than the status's size).
const LONGEST_REST: Duration = Duration::from_millis(500);

/// The statuses of runs not yet stored, and the versions of those stored but not yet seen
/// back in the cache.
#[derive(Default)]
pub(crate) struct Statuses {
    book: Mutex<Book>,
}

/// What [`Statuses`] keeps, by run uid.
#[derive(Default)]
struct Book {
    /// Runs whose writer is storing their latest status.
    runs: HashMap<String, Entry>,
    /// The version each finished writer stored, until the cache shows it.
    written: HashMap<String, u64>,
}

/// Where the next pass over a run starts.
pub(crate) enum Before {
    /// From the status the last pass reached, not stored yet.
    Book(Arc<UpdateRunStatus>),
    /// From the run as cached, which shows the last status stored.
    Cache,
    /// Nowhere yet: the cache does not show the last status stored.
    Stale,
}

/// A run being written.
struct Entry {
    /// The latest status a pass reached.
    latest: Arc<UpdateRunStatus>,
    /// How many statuses have been recorded: the number of `latest`.
    recorded: u64,
    /// What is stored, as far as the writer knows: the version and the status at it.
    stored: Stored,
}

/// A run's status as stored at a version.
#[derive(Clone)]
struct Stored {
    meta: ObjectMeta,
    status: Option<Arc<Value>>,
    /// The number of the recorded status stored (the writer's own last write).
    written: Option<u64>,
}

impl Stored {
    /// `run`'s status as read (from the cache, or afresh).
    fn as_read(run: &UpdateRun) -> Stored {
        Stored {
            meta: run.metadata.clone(),
            status: run
                .status
                .as_ref()
                .and_then(|s| serde_json::to_value(s).ok())
                .map(Arc::new),
            written: None,
        }
    }
}

impl Statuses {
    /// Where the next pass over `run` (as cached) starts.
    pub(crate) fn before(&self, run: &UpdateRun) -> Before {
        let mut book = self.book.lock().expect("statuses lock");
        let uid = run.metadata.uid.as_deref().unwrap_or_default();
        if let Some(entry) = book.runs.get(uid) {
            return Before::Book(entry.latest.clone());
        }
        match book.written.get(uid) {
            Some(&stored) if version(&run.metadata) < stored => Before::Stale,
            Some(_) => {
                book.written.remove(uid);
                Before::Cache
            }
            None => Before::Cache,
        }
    }

    /// Records `status`, reached by a pass over `run`, and makes sure a writer stores it.
    pub(crate) fn record(
        self: &Arc<Self>,
        client: &Client,
        run: &UpdateRun,
        status: UpdateRunStatus,
    ) {
        let uid = run.metadata.uid.clone().unwrap_or_default();
        let latest = Arc::new(status);
        let mut book = self.book.lock().expect("statuses lock");
        if let Some(entry) = book.runs.get_mut(&uid) {
            entry.latest = latest;
            entry.recorded += 1;
            return;
        }
        book.written.remove(&uid);
        book.runs.insert(
            uid.clone(),
            Entry {
                latest,
                recorded: 1,
                stored: Stored::as_read(run),
            },
        );
        let api = Api::<UpdateRun>::all(client.clone());
        tokio::spawn(self.clone().write(api, uid));
    }

    /// Forgets `run` (deleted).
    pub(crate) fn forget(&self, run: &UpdateRun) {
        self.done(run.metadata.uid.as_deref().unwrap_or_default());
    }

    /// The writer of run `uid`: stores its latest status until what is stored is the latest.
    async fn write(self: Arc<Self>, api: Api<UpdateRun>, uid: String) {
        loop {
            let Some((latest, number, stored)) = self.next(&uid) else {
                return;
            };
            let started = Instant::now();
            let new = match serde_json::to_value(&*latest) {
                Ok(new) => new,
                Err(error) => {
                    tracing::error!(%error, "an update run status that does not serialize");
                    return self.done(&uid);
                }
            };
            let written =
                status_writes::status_changes(&api, &stored.meta, stored.status.as_deref(), &new)
                    .await;
            let name = stored.meta.name.clone().unwrap_or_default();
            match written {
                Ok(version) => {
                    self.stored(&uid, number, version, new);
                    tokio::time::sleep((started.elapsed() * REST_PER_WRITE).min(LONGEST_REST))
                        .await;
                }
                Err(kube::Error::Api(e)) if e.code == 409 => match api.get_opt(&name).await {
                    Ok(Some(run)) => self.reread(&uid, &run),
                    Ok(None) => return self.done(&uid),
                    Err(error) => retry_later(&name, &error).await,
                },
                Err(kube::Error::Api(e)) if e.code == 404 => return self.done(&uid),
                Err(error) => retry_later(&name, &error).await,
            }
        }
    }

    /// What run `uid`'s writer stores next, or `None` (and the writer ends) when what is
    /// stored is the latest status.
    fn next(&self, uid: &str) -> Option<(Arc<UpdateRunStatus>, u64, Stored)> {
        let mut book = self.book.lock().expect("statuses lock");
        let entry = book.runs.get(uid)?;
        if entry.stored.written == Some(entry.recorded) {
            let stored = version(&entry.stored.meta);
            book.runs.remove(uid);
            book.written.insert(uid.to_owned(), stored);
            return None;
        }
        Some((entry.latest.clone(), entry.recorded, entry.stored.clone()))
    }

    /// Notes that recorded status `number`, `value`, is stored at `version`.
    fn stored(&self, uid: &str, number: u64, version: Option<String>, value: Value) {
        if let Some(entry) = self.book.lock().expect("statuses lock").runs.get_mut(uid) {
            entry.stored.meta.resource_version = version;
            entry.stored.status = Some(Arc::new(value));
            entry.stored.written = Some(number);
        }
    }

    /// Takes `run`, read afresh after a conflict, as what is stored.
    fn reread(&self, uid: &str, run: &UpdateRun) {
        if let Some(entry) = self.book.lock().expect("statuses lock").runs.get_mut(uid) {
            entry.stored = Stored::as_read(run);
        }
    }

    /// Ends run `uid`'s writer for good (the run is gone, or its status cannot be written).
    fn done(&self, uid: &str) {
        let mut book = self.book.lock().expect("statuses lock");
        book.runs.remove(uid);
        book.written.remove(uid);
    }
}

/// An object's resourceVersion as a number.
fn version(meta: &ObjectMeta) -> u64 {
    meta.resource_version
        .as_deref()
        .and_then(|v| v.parse().ok())
        .unwrap_or_default()
}

/// Waits a second after a failed write of run `name`'s status, as the controller's error
/// policy does.
async fn retry_later(name: &str, error: &kube::Error) {
    tracing::warn!(run = %name, %error, "writing an update run's status failed; retrying");
    tokio::time::sleep(Duration::from_secs(1)).await;
}

#[cfg(test)]
mod tests {
    use flotilla_api::updates::update_run::{ErrorDetail, UpdateState};
    use flotilla_apiserver::{Hub, HubOptions};
    use flotilla_store::MemoryStore;
    use kube::api::{Patch, PatchParams, PostParams};
    use serde_json::json;

    use super::*;

    /// A status whose summary says `n`.
    fn numbered(n: u32) -> UpdateRunStatus {
        let mut status = UpdateRunStatus {
            progress_summary: Some(format!("{n}")),
            failure_count: n,
            ..UpdateRunStatus::default()
        };
        status.progress.state = UpdateState::Running;
        status
    }

    /// Waits until the hub stores `want` as the run's status, and returns the run.
    async fn stored(api: &Api<UpdateRun>, want: &UpdateRunStatus) -> UpdateRun {
        for _ in 0..500 {
            let run = api.get("run").await.expect("read");
            if run.status.as_ref() == Some(want) {
                return run;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the status never became {want:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_latest_status_is_stored_behind_the_passes_and_through_spec_edits() {
        let hub = Hub::start(Arc::new(MemoryStore::new()), HubOptions::default())
            .await
            .expect("hub");
        let client = hub.client();
        let api = Api::<UpdateRun>::all(client.clone());
        let run: UpdateRun = serde_json::from_value(json!({
            "apiVersion": "updates.flotilla.dev/v1beta1",
            "kind": "UpdateRun",
            "metadata": {"name": "run"},
            "spec": {"managedClusterUpdate": {"upgrade": {"type": "NodeImageOnly"}}},
        }))
        .expect("run");
        let read = api
            .create(&PostParams::default(), &run)
            .await
            .expect("create");
        let book = Arc::new(Statuses::default());

        // Passes that go faster than the writes: the last status is the one stored.
        for n in 1..=20 {
            book.record(&client, &read, numbered(n));
            assert!(
                matches!(book.before(&read), Before::Book(s) if *s == numbered(n)),
                "the next pass starts where the last one ended, stored or not"
            );
        }
        let caught_up = stored(&api, &numbered(20)).await;
        for _ in 0..500 {
            if book.book.lock().expect("lock").runs.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(
            matches!(book.before(&read), Before::Stale),
            "a pass over a cache older than the status stored waits"
        );
        assert!(
            matches!(book.before(&caught_up), Before::Cache),
            "once the cache shows the stored version, the run leaves the book"
        );
        assert!(book.book.lock().expect("lock").written.is_empty());

        // Someone edits the spec: the writer's next write is refused as a conflict and sent
        // again over the status as stored, keeping the edit.
        let edited = api
            .patch(
                "run",
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"state": "Stop"}})),
            )
            .await
            .expect("edit");
        let mut failed = numbered(21);
        failed.progress.error = Some(ErrorDetail {
            code: "Code".into(),
            message: "a message".into(),
        });
        book.record(&client, &read, failed.clone());
        let run = stored(&api, &failed).await;
        assert_eq!(run.spec.state, edited.spec.state, "the edit is kept");

        // A deleted run's writer ends; the book forgets it.
        api.delete("run", &Default::default())
            .await
            .expect("delete");
        book.record(&client, &run, numbered(22));
        for _ in 0..500 {
            if book.book.lock().expect("lock").runs.is_empty() {
                assert!(book.book.lock().expect("lock").written.is_empty());
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the writer of a deleted run never ended");
    }
}
