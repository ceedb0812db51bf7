//! Controller metrics with controller-runtime's names: reconciles (total by result, errors,
//! duration), reconciles in flight, and each controller's work queue (depth, adds, time waited,
//! retries). kube-runtime's controller keeps its queue private, so a [`Queue`] follows it from
//! outside: every trigger the controller is given passes through [`Queue::watched`] or
//! [`Queue::mapped`] (an object changed and waits), a reconcile's start takes it out again
//! ([`Queue::instrument`]), and a trigger for an object that is gone is dropped when the
//! controller reports it ([`Queue::drive`]). Depth is thus "changes seen and not yet
//! reconciled"; a timed requeue counts as a retry, not as depth, as client-go's delaying queue
//! only adds an item once it is due.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use futures::future::BoxFuture;
use futures::{FutureExt, Stream, StreamExt};
use kube::runtime::controller::{self, Action, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{WatchStreamExt, reflector, watcher};
use kube::{Api, Resource};
use serde::de::DeserializeOwned;

use super::registry::{Desc, SECONDS};
use super::{Registry, process};

/// Reconciles per controller and result (`success`, `error`).
pub const RECONCILE_TOTAL: Desc = Desc::counter(
    "controller_runtime_reconcile_total",
    "Total number of reconciliations per controller.",
    &["controller", "result"],
);
/// Failed reconciles per controller.
pub const RECONCILE_ERRORS: Desc = Desc::counter(
    "controller_runtime_reconcile_errors_total",
    "Total number of reconciliation errors per controller.",
    &["controller"],
);
/// Reconcile duration per controller.
pub const RECONCILE_TIME: Desc = Desc::histogram(
    "controller_runtime_reconcile_time_seconds",
    "Length of time per reconciliation per controller.",
    &["controller"],
    SECONDS,
);
/// Reconciles running now per controller.
pub const ACTIVE_WORKERS: Desc = Desc::gauge(
    "controller_runtime_active_workers",
    "Number of currently used workers per controller.",
    &["controller"],
);
/// Objects changed and waiting for their reconcile.
pub const QUEUE_DEPTH: Desc = Desc::gauge(
    "workqueue_depth",
    "Current depth of workqueue: objects changed and not yet reconciled.",
    &["name"],
);
/// Triggers the queue took in (a trigger for an object already waiting is counted too).
pub const QUEUE_ADDS: Desc = Desc::counter(
    "workqueue_adds_total",
    "Total number of adds handled by workqueue.",
    &["name"],
);
/// How long an object waited between its first trigger and its reconcile.
pub const QUEUE_DURATION: Desc = Desc::histogram(
    "workqueue_queue_duration_seconds",
    "How long in seconds an item stays in workqueue before being requested.",
    &["name"],
    SECONDS,
);
/// Reconciles retried after a failure.
pub const QUEUE_RETRIES: Desc = Desc::counter(
    "workqueue_retries_total",
    "Total number of retries handled by workqueue.",
    &["name"],
);

/// One controller's work queue, as seen from its triggers and reconciles.
#[derive(Debug)]
pub struct Queue {
    name: String,
    registry: &'static Registry,
    /// Waiting objects and when they were first triggered.
    waiting: Mutex<HashMap<String, Instant>>,
}

/// The queue key of an object: `namespace/name`, or `name` when cluster-scoped.
fn key(namespace: Option<&str>, name: &str) -> String {
    match namespace {
        Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
        _ => name.to_string(),
    }
}

fn key_of_ref<K: Resource>(r: &ObjectRef<K>) -> String {
    key(r.namespace.as_deref(), &r.name)
}

fn key_of<K: Resource>(obj: &K) -> String {
    key(
        obj.meta().namespace.as_deref(),
        obj.meta().name.as_deref().unwrap_or_default(),
    )
}

impl Queue {
    /// The queue of controller `name`, recording into the [`process`] registry. Controllers
    /// of one name share a queue (the work appliers of every simulated member in `flotilla up`
    /// are one `work-applier`; their keys differ by namespace).
    pub fn new(name: impl Into<String>) -> Arc<Self> {
        static QUEUES: OnceLock<Mutex<HashMap<String, Arc<Queue>>>> = OnceLock::new();
        let name = name.into();
        let mut queues = QUEUES
            .get_or_init(Mutex::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        queues
            .entry(name.clone())
            .or_insert_with(|| Self::declare(name))
            .clone()
    }

    /// A new queue of controller `name`, its families declared.
    fn declare(name: String) -> Arc<Self> {
        let registry = process();
        for desc in [
            &RECONCILE_TOTAL,
            &RECONCILE_ERRORS,
            &RECONCILE_TIME,
            &QUEUE_DURATION,
            &QUEUE_ADDS,
            &QUEUE_RETRIES,
        ] {
            registry.describe(desc);
        }
        registry.set(&QUEUE_DEPTH, &[&name], 0.0);
        registry.set(&ACTIVE_WORKERS, &[&name], 0.0);
        Arc::new(Self {
            name,
            registry,
            waiting: Mutex::default(),
        })
    }

    /// Runs `f` on the waiting set and republishes the depth.
    fn waiting<T>(&self, f: impl FnOnce(&mut HashMap<String, Instant>) -> T) -> T {
        let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        let out = f(&mut waiting);
        self.registry
            .set(&QUEUE_DEPTH, &[&self.name], waiting.len() as f64);
        out
    }

    /// An object changed: it waits for its reconcile (from its first trigger on).
    pub fn add(&self, key: String) {
        self.registry.inc(&QUEUE_ADDS, &[&self.name]);
        self.waiting(|w| {
            w.entry(key).or_insert_with(Instant::now);
        });
    }

    /// The object `key` is no longer waiting (reconciled, or gone).
    fn take(&self, key: &str) -> Option<Instant> {
        self.waiting(|w| w.remove(key))
    }

    /// A controller of every object `api` lists, whose own changes pass through this queue
    /// (as `Controller::new`, which would keep them out of sight).
    pub fn controller<K>(self: &Arc<Self>, api: Api<K>, config: watcher::Config) -> Controller<K>
    where
        K: Resource<DynamicType = ()>
            + Clone
            + DeserializeOwned
            + std::fmt::Debug
            + Send
            + Sync
            + 'static,
    {
        let (store, writer) = reflector::store();
        let events = reflector(writer, watcher(api, config))
            .touched_objects()
            .default_backoff();
        Controller::for_stream(self.watched(events), store)
    }

    /// A stream of changed objects that trigger the controller, each added to the queue; its
    /// errors are dropped ([`Queue::watching`]).
    pub fn watched<K, E, S>(
        self: &Arc<Self>,
        stream: S,
    ) -> impl Stream<Item = Result<K, E>> + use<K, E, S>
    where
        K: Resource,
        S: Stream<Item = Result<K, E>>,
    {
        let queue = self.clone();
        Self::watching(stream).inspect(move |item| {
            if let Ok(obj) = item {
                queue.add(key_of(obj));
            }
        })
    }

    /// A stream of other objects whose changes trigger the controller through a mapper
    /// (`Controller::watches_stream`), its errors dropped. The watcher has logged them and
    /// retries with its back-off; passed on, an error would hold back the controller's other
    /// triggers until something else wakes it (kube-runtime 5 splits its trigger stream into
    /// successes and errors through one peeked item: a member agent without RBAC on the member
    /// saw its Works reconciled minutes late).
    pub fn watching<T, E, S>(stream: S) -> impl Stream<Item = Result<T, E>> + use<T, E, S>
    where
        S: Stream<Item = Result<T, E>>,
    {
        stream.filter(|item| futures::future::ready(item.is_ok()))
    }

    /// The objects of `api` that changed (touched), through the watcher's default back-off and
    /// with errors dropped ([`Queue::watching`]): for `Controller::watches_stream`, in place of
    /// `Controller::watches`, which does neither.
    pub fn touched<K>(
        api: Api<K>,
        config: watcher::Config,
    ) -> impl Stream<Item = Result<K, watcher::Error>> + Send + use<K>
    where
        K: Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug + Send + 'static,
    {
        Self::watching(watcher(api, config).default_backoff().touched_objects())
    }

    /// A stream of object references that trigger the controller (deadlines coming due), each
    /// added to the queue.
    pub fn triggered<K, S>(
        self: &Arc<Self>,
        stream: S,
    ) -> impl Stream<Item = ObjectRef<K>> + use<K, S>
    where
        K: Resource,
        S: Stream<Item = ObjectRef<K>>,
    {
        let queue = self.clone();
        stream.inspect(move |r| queue.add(key_of_ref(r)))
    }

    /// A mapper from a watched object to the objects it triggers, each added to the queue.
    pub fn mapped<T, K, I>(
        self: &Arc<Self>,
        mapper: impl Fn(T) -> I + Send + Sync + 'static,
    ) -> impl Fn(T) -> Vec<ObjectRef<K>> + Send + Sync + 'static
    where
        K: Resource,
        I: IntoIterator<Item = ObjectRef<K>>,
    {
        let queue = self.clone();
        move |obj| {
            let refs: Vec<ObjectRef<K>> = mapper(obj).into_iter().collect();
            for r in &refs {
                queue.add(key_of_ref(r));
            }
            refs
        }
    }

    /// `reconcile`, measured: the object leaves the queue (its wait observed), counts as a
    /// worker while it runs, and its result and duration are recorded.
    pub fn instrument<K, C, E, F, Fut>(
        self: &Arc<Self>,
        reconcile: F,
    ) -> impl FnMut(Arc<K>, Arc<C>) -> BoxFuture<'static, Result<Action, E>> + use<K, C, E, F, Fut>
    where
        K: Resource + 'static,
        C: 'static,
        E: 'static,
        F: Fn(Arc<K>, Arc<C>) -> Fut,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
    {
        let queue = self.clone();
        move |obj, ctx| {
            if let Some(since) = queue.take(&key_of(&*obj)) {
                queue.registry.observe(
                    &QUEUE_DURATION,
                    &[&queue.name],
                    since.elapsed().as_secs_f64(),
                );
            }
            queue.registry.add(&ACTIVE_WORKERS, &[&queue.name], 1.0);
            let started = Instant::now();
            let running = reconcile(obj, ctx);
            let queue = queue.clone();
            async move {
                let result = running.await;
                let name = queue.name.as_str();
                let r = queue.registry;
                r.add(&ACTIVE_WORKERS, &[name], -1.0);
                r.observe(&RECONCILE_TIME, &[name], started.elapsed().as_secs_f64());
                let outcome = if result.is_ok() { "success" } else { "error" };
                r.inc(&RECONCILE_TOTAL, &[name, outcome]);
                if result.is_err() {
                    r.inc(&RECONCILE_ERRORS, &[name]);
                    r.inc(&QUEUE_RETRIES, &[name]);
                }
                result
            }
            .boxed()
        }
    }

    /// Drives a controller's result stream to its end: a trigger for an object that no longer
    /// exists leaves the queue (the controller never reconciles it); other failures are logged.
    pub async fn drive<K, E1, E2, S>(self: Arc<Self>, results: S)
    where
        K: Resource,
        E1: std::error::Error + 'static,
        E2: std::error::Error + 'static,
        S: Stream<Item = Result<(ObjectRef<K>, Action), controller::Error<E1, E2>>>,
    {
        results
            .for_each(|result| {
                match result {
                    Err(controller::Error::ObjectNotFound(r)) => {
                        self.take(&key_of_ref(&r));
                    }
                    Err(e) => tracing::debug!(controller = %self.name, error = %e, "reconcile"),
                    Ok(_) => {}
                }
                futures::future::ready(())
            })
            .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;

    fn map(name: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("ns".into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        }
    }

    #[tokio::test]
    async fn triggers_wait_until_reconciled_and_reconciles_are_counted() {
        let queue = Queue::new("test-queue");
        let depth = || process().value(&QUEUE_DEPTH, &["test-queue"]);
        let seen: Vec<Result<ConfigMap, std::convert::Infallible>> = queue
            .watched(futures::stream::iter([
                Ok(map("a")),
                Ok(map("a")),
                Ok(map("b")),
            ]))
            .collect()
            .await;
        assert_eq!(seen.len(), 3);
        assert_eq!(depth(), Some(2.0), "a once, b once");
        let mapper = queue.mapped(|_: ()| vec![ObjectRef::<ConfigMap>::new("c").within("ns")]);
        assert_eq!(mapper(()).len(), 1);
        assert_eq!(depth(), Some(3.0));
        let mut reconcile = queue.instrument(|obj: Arc<ConfigMap>, _: Arc<()>| async move {
            if obj.metadata.name.as_deref() == Some("b") {
                Err(std::fmt::Error)
            } else {
                Ok(Action::await_change())
            }
        });
        assert!(reconcile(Arc::new(map("a")), Arc::new(())).await.is_ok());
        assert!(reconcile(Arc::new(map("b")), Arc::new(())).await.is_err());
        assert_eq!(depth(), Some(1.0), "c still waits");
        let r = process();
        assert_eq!(
            r.value(&RECONCILE_TOTAL, &["test-queue", "success"]),
            Some(1.0)
        );
        assert_eq!(
            r.value(&RECONCILE_TOTAL, &["test-queue", "error"]),
            Some(1.0)
        );
        assert_eq!(r.value(&RECONCILE_ERRORS, &["test-queue"]), Some(1.0));
        assert_eq!(r.value(&RECONCILE_TIME, &["test-queue"]), Some(2.0));
        assert_eq!(r.value(&QUEUE_DURATION, &["test-queue"]), Some(2.0));
        assert_eq!(r.value(&ACTIVE_WORKERS, &["test-queue"]), Some(0.0));
        // The controller reports c gone: it leaves the queue.
        let gone: controller::Error<std::fmt::Error, std::fmt::Error> =
            controller::Error::ObjectNotFound(Box::new(
                ObjectRef::<ConfigMap>::new("c").within("ns").erase(),
            ));
        queue
            .clone()
            .drive::<ConfigMap, _, _, _>(futures::stream::iter([Err(gone)]))
            .await;
        assert_eq!(depth(), Some(0.0));
    }

    /// A watch error on one trigger stream used to hold back a change on another until some
    /// timer woke the controller. On tokio's paused clock any such wait shows as time passed.
    #[tokio::test(start_paused = true)]
    async fn a_watch_error_does_not_hold_back_other_triggers() {
        use futures::channel::mpsc;
        use kube::runtime::reflector::store::Writer;

        let mut writer: Writer<ConfigMap> = Writer::default();
        let store = writer.as_reader();
        for event in [
            watcher::Event::Init,
            watcher::Event::InitApply(map("a")),
            watcher::Event::InitDone,
        ] {
            writer.apply_watcher_event(&event);
        }
        let queue = Queue::new("test-watch-errors");
        let (changes, changed) = mpsc::unbounded::<Result<ConfigMap, watcher::Error>>();
        let (others, other_changed) = mpsc::unbounded::<Result<ConfigMap, watcher::Error>>();
        let (reconciled, mut reconciles) = mpsc::unbounded::<String>();
        let running = Controller::for_stream(queue.watched(changed), store)
            .watches_stream(
                Queue::watching(other_changed),
                queue.mapped(|c: ConfigMap| Some(ObjectRef::from_obj(&c))),
            )
            .run(
                |obj: Arc<ConfigMap>, tx: Arc<mpsc::UnboundedSender<String>>| async move {
                    let _ = tx.unbounded_send(obj.metadata.name.clone().unwrap_or_default());
                    Ok::<_, std::fmt::Error>(Action::await_change())
                },
                |_, _, _| Action::await_change(),
                Arc::new(reconciled),
            )
            .for_each(|_| futures::future::ready(()));
        let running = tokio::spawn(running);
        for _ in 0..5 {
            others
                .unbounded_send(Err(watcher::Error::NoResourceVersion))
                .unwrap();
            tokio::task::yield_now().await;
            let started = tokio::time::Instant::now();
            changes.unbounded_send(Ok(map("a"))).unwrap();
            assert_eq!(reconciles.next().await.as_deref(), Some("a"));
            assert_eq!(started.elapsed(), std::time::Duration::ZERO);
        }
        running.abort();
    }
}
