//! kube-rs against the engine, in-process: typed Api, server-side apply, the watcher (including
//! relist after a compaction-induced 410), the finalizer helper, `Controller::owns`, and
//! optimistic concurrency under contention.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use flotilla_apiserver::{Hub, HubOptions, ServerConfig};
use flotilla_store::{MemoryStore, SqliteOptions, SqliteStore};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::finalizer::{Event as FinalizerEvent, finalizer};
use kube::runtime::watcher;
use kube::{Resource, ResourceExt};

async fn memory_hub(server: ServerConfig) -> Hub {
    Hub::start(
        Arc::new(MemoryStore::new()),
        HubOptions {
            server,
            ..HubOptions::default()
        },
    )
    .await
    .expect("hub")
}

fn cm(name: &str, data: &[(&str, &str)]) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        data: Some(
            data.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        ),
        ..Default::default()
    }
}

async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..200 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for: {what}");
}

#[tokio::test]
async fn typed_api_crud_and_server_side_apply() {
    let hub = memory_hub(ServerConfig::default()).await;
    let api: Api<ConfigMap> = Api::namespaced(hub.client(), "default");
    let created = api
        .create(&PostParams::default(), &cm("a", &[("k", "v")]))
        .await
        .expect("create");
    // kube keeps no generation for ConfigMaps (they have no spec).
    assert_eq!(created.metadata.generation, None);
    assert!(created.metadata.uid.is_some() && created.metadata.creation_timestamp.is_some());
    let err = api
        .create(&PostParams::default(), &cm("a", &[]))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, kube::Error::Api(s) if s.reason == "AlreadyExists" && s.code == 409),
        "{err:?}"
    );

    // A stale resourceVersion on replace is a 409 Conflict.
    let mut stale = created.clone();
    api.patch(
        "a",
        &PatchParams::default(),
        &Patch::Merge(serde_json::json!({"data": {"k": "w"}})),
    )
    .await
    .expect("merge");
    stale.data = Some(BTreeMap::from([("k".into(), "x".into())]));
    let err = api
        .replace("a", &PostParams::default(), &stale)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 409 && s.reason == "Conflict"),
        "{err:?}"
    );

    // Server-side apply: create, no-op re-apply, field removal.
    let pp = PatchParams::apply("flotilla-test");
    let applied = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"}, "data": {"x": "1", "y": "2"}});
    let first = api
        .patch("ssa", &pp, &Patch::Apply(&applied))
        .await
        .expect("apply create");
    let again = api
        .patch("ssa", &pp, &Patch::Apply(&applied))
        .await
        .expect("apply again");
    assert_eq!(
        first.resource_version(),
        again.resource_version(),
        "identical apply must not write"
    );
    let managers: Vec<_> = again
        .managed_fields()
        .iter()
        .filter_map(|m| m.manager.clone())
        .collect();
    assert_eq!(managers, vec!["flotilla-test".to_string()]);
    let fewer = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"}, "data": {"x": "1"}});
    let after = api
        .patch("ssa", &pp, &Patch::Apply(&fewer))
        .await
        .expect("apply fewer");
    assert_eq!(after.data, Some(BTreeMap::from([("x".into(), "1".into())])));
    // Another manager: conflict, then force.
    let other = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"}, "data": {"x": "9"}});
    let err = api
        .patch("ssa", &PatchParams::apply("other"), &Patch::Apply(&other))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 409),
        "{err:?}"
    );
    let forced = api
        .patch(
            "ssa",
            &PatchParams::apply("other").force(),
            &Patch::Apply(&other),
        )
        .await
        .expect("forced");
    assert_eq!(forced.data.unwrap()["x"], "9");

    let list = api
        .list(&ListParams::default().labels("missing=label"))
        .await
        .expect("list");
    assert!(list.items.is_empty());
    assert!(list.metadata.resource_version.is_some());
}

#[tokio::test]
async fn raw_watch_from_a_compacted_revision_gets_an_in_stream_410() {
    let hub = memory_hub(ServerConfig::default()).await;
    let api: Api<ConfigMap> = Api::namespaced(hub.client(), "default");
    let first = api
        .create(&PostParams::default(), &cm("a", &[]))
        .await
        .expect("create");
    for i in 0..5 {
        api.patch(
            "a",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"data": {"i": i.to_string()}})),
        )
        .await
        .expect("patch");
    }
    let store = hub.engine().store();
    store
        .compact(store.current_revision())
        .await
        .expect("compact");
    let mut stream = api
        .watch(
            &WatchParams::default(),
            &first.resource_version().expect("rv"),
        )
        .await
        .expect("watch")
        .boxed();
    match stream.try_next().await.expect("stream item") {
        Some(WatchEvent::Error(status)) => {
            assert_eq!(status.code, 410);
            assert_eq!(status.reason, "Expired");
        }
        other => panic!("expected an in-stream 410 ERROR, got {other:?}"),
    }
}

#[tokio::test]
async fn watcher_relists_after_compaction_induced_410() {
    // Short watches make the watcher re-watch from its last resourceVersion often.
    let server = ServerConfig {
        watch_timeout: Duration::from_secs(1),
        ..ServerConfig::default()
    };
    let hub = memory_hub(server).await;
    let client = hub.client();
    let ns_api: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    ns_api
        .create(
            &PostParams::default(),
            &serde_json::from_value(serde_json::json!({"metadata": {"name": "w"}})).unwrap(),
        )
        .await
        .expect("ns");
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "w");
    api.create(&PostParams::default(), &cm("before", &[]))
        .await
        .expect("create");
    let inits = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let (i2, s2) = (inits.clone(), seen.clone());
    let task = tokio::spawn(async move {
        let mut events = watcher(api, watcher::Config::default()).boxed();
        while let Some(ev) = events.next().await {
            match ev {
                Ok(watcher::Event::Init) => {
                    i2.fetch_add(1, Ordering::SeqCst);
                }
                Ok(watcher::Event::InitApply(o)) | Ok(watcher::Event::Apply(o)) => {
                    s2.lock().unwrap().push(o.name_any())
                }
                _ => {}
            }
        }
    });
    eventually("initial list", || async {
        inits.load(Ordering::SeqCst) == 1 && seen.lock().unwrap().contains(&"before".to_string())
    })
    .await;
    // Move history far past the watcher's resourceVersion and compact it away.
    let other: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    for i in 0..20 {
        other
            .create(&PostParams::default(), &cm(&format!("noise-{i}"), &[]))
            .await
            .expect("noise");
    }
    let store = hub.engine().store();
    store
        .compact(store.current_revision())
        .await
        .expect("compact");
    eventually("relist after 410", || async {
        inits.load(Ordering::SeqCst) >= 2
    })
    .await;
    let api: Api<ConfigMap> = Api::namespaced(client, "w");
    api.create(&PostParams::default(), &cm("after", &[]))
        .await
        .expect("create after");
    eventually("event after relist", || async {
        seen.lock().unwrap().contains(&"after".to_string())
    })
    .await;
    task.abort();
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct ReconcileError(String);

#[tokio::test]
async fn finalizer_helper_and_controller_owns_with_garbage_collection() {
    let hub = memory_hub(ServerConfig::default()).await;
    let client = hub.client();
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "default");
    let reconciles = Arc::new(AtomicUsize::new(0));
    let cleanups = Arc::new(AtomicUsize::new(0));
    struct Ctx {
        client: kube::Client,
        reconciles: Arc<AtomicUsize>,
        cleanups: Arc<AtomicUsize>,
    }
    async fn reconcile(
        obj: Arc<ConfigMap>,
        ctx: Arc<Ctx>,
    ) -> Result<Action, kube::runtime::finalizer::Error<ReconcileError>> {
        ctx.reconciles.fetch_add(1, Ordering::SeqCst);
        let api: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), "default");
        let ctx2 = ctx.clone();
        finalizer(&api, "example.com/cleanup", obj, |event| async move {
            match event {
                FinalizerEvent::Apply(cm) => {
                    let owner = cm
                        .controller_owner_ref(&())
                        .ok_or_else(|| ReconcileError("no owner ref".into()))?;
                    let secret = Secret {
                        metadata: ObjectMeta {
                            name: Some(format!("{}-child", cm.name_any())),
                            owner_references: Some(vec![owner]),
                            ..Default::default()
                        },
                        ..Default::default()
                    };
                    let secrets: Api<Secret> = Api::namespaced(ctx2.client.clone(), "default");
                    secrets
                        .patch(
                            &secret.name_any(),
                            &PatchParams::apply("test-controller").force(),
                            &Patch::Apply(&secret),
                        )
                        .await
                        .map_err(|e| ReconcileError(e.to_string()))?;
                    Ok(Action::await_change())
                }
                FinalizerEvent::Cleanup(_) => {
                    ctx2.cleanups.fetch_add(1, Ordering::SeqCst);
                    Ok(Action::await_change())
                }
            }
        })
        .await
    }
    fn error_policy(
        _: Arc<ConfigMap>,
        _: &kube::runtime::finalizer::Error<ReconcileError>,
        _: Arc<Ctx>,
    ) -> Action {
        Action::requeue(Duration::from_millis(200))
    }
    let ctx = Arc::new(Ctx {
        client: client.clone(),
        reconciles: reconciles.clone(),
        cleanups: cleanups.clone(),
    });
    // What a kube-rs user writes, as they write it: the hub must serve it.
    #[allow(clippy::disallowed_methods)]
    let controller = Controller::new(cms.clone(), watcher::Config::default())
        .owns(secrets.clone(), watcher::Config::default())
        .run(reconcile, error_policy, ctx)
        .for_each(|_| async {});
    let task = tokio::spawn(controller);

    cms.create(&PostParams::default(), &cm("parent", &[]))
        .await
        .expect("create parent");
    eventually("owned secret created", || async {
        secrets
            .get_opt("parent-child")
            .await
            .ok()
            .flatten()
            .is_some()
    })
    .await;
    let parent = cms.get("parent").await.expect("parent");
    assert_eq!(parent.finalizers(), &["example.com/cleanup".to_string()]);
    // A change to the owned object re-triggers the owner's reconcile.
    let before = reconciles.load(Ordering::SeqCst);
    secrets
        .patch(
            "parent-child",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"metadata": {"labels": {"touched": "yes"}}})),
        )
        .await
        .expect("touch");
    eventually("owns() maps the secret to its owner", || async {
        reconciles.load(Ordering::SeqCst) > before
    })
    .await;
    // Deleting the owner runs cleanup, removes the finalizer, and GC collects the secret.
    cms.delete("parent", &DeleteParams::default())
        .await
        .expect("delete");
    eventually("cleanup ran and owner is gone", || async {
        cleanups.load(Ordering::SeqCst) >= 1 && cms.get_opt("parent").await.ok().flatten().is_none()
    })
    .await;
    eventually("garbage collector deleted the dependent", || async {
        secrets
            .get_opt("parent-child")
            .await
            .ok()
            .flatten()
            .is_none()
    })
    .await;
    task.abort();
}

#[tokio::test]
async fn foreground_and_orphan_propagation() {
    let hub = memory_hub(ServerConfig::default()).await;
    let cms: Api<ConfigMap> = Api::namespaced(hub.client(), "default");
    for (owner, policy) in [
        ("fg", DeleteParams::foreground()),
        ("or", DeleteParams::orphan()),
    ] {
        let o = cms
            .create(&PostParams::default(), &cm(owner, &[]))
            .await
            .expect("owner");
        let mut child = cm(&format!("{owner}-child"), &[]);
        child.metadata.owner_references = Some(vec![o.controller_owner_ref(&()).expect("ref")]);
        cms.create(&PostParams::default(), &child)
            .await
            .expect("child");
        cms.delete(owner, &policy).await.expect("delete");
        eventually("owner gone", || async {
            cms.get_opt(owner).await.ok().flatten().is_none()
        })
        .await;
        let child = cms.get_opt(&format!("{owner}-child")).await.expect("get");
        if owner == "fg" {
            assert!(
                child.is_none(),
                "foreground deletion must delete dependents first"
            );
        } else {
            let child = child.expect("orphaned child survives");
            assert!(
                child.owner_references().is_empty(),
                "orphaned child keeps no owner reference"
            );
        }
    }
}

#[tokio::test]
async fn no_lost_updates_under_concurrent_read_modify_write() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = SqliteStore::open(SqliteOptions::new(dir.path().join("store.db"))).expect("sqlite");
    let hub = Hub::start(Arc::new(store), HubOptions::default())
        .await
        .expect("hub");
    let api: Api<ConfigMap> = Api::namespaced(hub.client(), "default");
    api.create(&PostParams::default(), &cm("counter", &[("n", "0")]))
        .await
        .expect("create");
    let successes = Arc::new(AtomicUsize::new(0));
    let conflicts = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..16 {
        let (api, successes, conflicts) = (api.clone(), successes.clone(), conflicts.clone());
        tasks.push(tokio::spawn(async move {
            for _ in 0..15 {
                loop {
                    let mut cur = api.get("counter").await.expect("get");
                    let n: u64 = cur.data.as_ref().unwrap()["n"].parse().unwrap();
                    cur.data
                        .as_mut()
                        .unwrap()
                        .insert("n".into(), (n + 1).to_string());
                    match api.replace("counter", &PostParams::default(), &cur).await {
                        Ok(_) => {
                            successes.fetch_add(1, Ordering::SeqCst);
                            break;
                        }
                        Err(kube::Error::Api(s)) if s.code == 409 => {
                            conflicts.fetch_add(1, Ordering::SeqCst);
                        }
                        Err(e) => panic!("unexpected error {e}"),
                    }
                }
            }
        }));
    }
    for t in tasks {
        t.await.expect("task");
    }
    let final_n: usize = api.get("counter").await.unwrap().data.unwrap()["n"]
        .parse()
        .unwrap();
    assert_eq!(final_n, successes.load(Ordering::SeqCst));
    assert_eq!(final_n, 16 * 15);
    assert!(
        conflicts.load(Ordering::SeqCst) > 0,
        "the test must actually contend"
    );
}

#[tokio::test]
async fn generate_name_dry_run_and_delete_collection() {
    let hub = memory_hub(ServerConfig::default()).await;
    let api: Api<ConfigMap> = Api::namespaced(hub.client(), "default");
    let mut generated = cm("", &[]);
    generated.metadata.name = None;
    generated.metadata.generate_name = Some("run-".into());
    let made = api
        .create(&PostParams::default(), &generated)
        .await
        .expect("generateName");
    let name = made.name_any();
    assert!(name.starts_with("run-") && name.len() == 9, "{name}");

    let dry = PostParams {
        dry_run: true,
        ..Default::default()
    };
    let shown = api
        .create(&dry, &cm("dry", &[("k", "v")]))
        .await
        .expect("dry run");
    assert_eq!(shown.data.unwrap()["k"], "v");
    assert!(
        api.get_opt("dry").await.unwrap().is_none(),
        "dryRun=All must not persist"
    );

    for i in 0..4 {
        let mut c = cm(&format!("batch-{i}"), &[]);
        c.metadata.labels = Some(BTreeMap::from([(
            "batch".into(),
            if i < 3 { "yes" } else { "no" }.into(),
        )]));
        api.create(&PostParams::default(), &c)
            .await
            .expect("create");
    }
    api.delete_collection(
        &DeleteParams::default(),
        &ListParams::default().labels("batch=yes"),
    )
    .await
    .expect("deletecollection");
    let left: Vec<String> = api
        .list(&ListParams::default().labels("batch"))
        .await
        .unwrap()
        .items
        .iter()
        .map(|c| c.name_any())
        .collect();
    assert_eq!(left, vec!["batch-3".to_string()]);
}

#[tokio::test]
async fn paged_lists_read_one_consistent_revision() {
    let hub = memory_hub(ServerConfig::default()).await;
    let api: Api<ConfigMap> = Api::namespaced(hub.client(), "default");
    for i in 0..10 {
        api.create(&PostParams::default(), &cm(&format!("p{i:02}"), &[]))
            .await
            .expect("create");
    }
    let first = api
        .list(&ListParams::default().limit(4))
        .await
        .expect("page 1");
    assert_eq!(first.items.len(), 4);
    assert_eq!(first.metadata.remaining_item_count, Some(6));
    // Writes between pages do not show up in later pages.
    api.delete("p05", &DeleteParams::default())
        .await
        .expect("delete");
    api.create(&PostParams::default(), &cm("p99", &[]))
        .await
        .expect("create late");
    let mut names: Vec<String> = first.items.iter().map(|c| c.name_any()).collect();
    let mut token = first.metadata.continue_;
    while let Some(t) = token.filter(|t| !t.is_empty()) {
        let page = api
            .list(&ListParams::default().limit(4).continue_token(&t))
            .await
            .expect("next page");
        assert_eq!(
            page.metadata.resource_version,
            first.metadata.resource_version
        );
        names.extend(page.items.iter().map(|c| c.name_any()));
        token = page.metadata.continue_;
    }
    let expected: Vec<String> = (0..10).map(|i| format!("p{i:02}")).collect();
    assert_eq!(names, expected);
    // A continue token whose revision was compacted away is 410 Expired.
    let again = api
        .list(&ListParams::default().limit(2))
        .await
        .expect("list");
    let store = hub.engine().store();
    api.create(&PostParams::default(), &cm("bump", &[]))
        .await
        .expect("bump");
    store
        .compact(store.current_revision())
        .await
        .expect("compact");
    let err = api
        .list(
            &ListParams::default()
                .limit(2)
                .continue_token(&again.metadata.continue_.unwrap()),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 410 && s.reason == "Expired"),
        "{err:?}"
    );
}

#[tokio::test]
async fn watches_send_bookmarks_and_streaming_lists() {
    let server = ServerConfig {
        bookmark_interval: Duration::from_millis(200),
        ..ServerConfig::default()
    };
    let hub = memory_hub(server).await;
    let api: Api<ConfigMap> = Api::namespaced(hub.client(), "default");
    let made = api
        .create(&PostParams::default(), &cm("b", &[]))
        .await
        .expect("create");
    let mut stream = api
        .watch(
            &WatchParams {
                bookmarks: true,
                ..WatchParams::default()
            },
            &made.resource_version().unwrap(),
        )
        .await
        .expect("watch")
        .boxed();
    let mut bookmark = None;
    for _ in 0..10 {
        if let Some(WatchEvent::Bookmark(b)) =
            tokio::time::timeout(Duration::from_secs(5), stream.try_next())
                .await
                .expect("event in time")
                .expect("ok")
        {
            bookmark = Some(b);
            break;
        }
    }
    let bookmark = bookmark.expect("a bookmark");
    assert!(
        bookmark.metadata.resource_version.parse::<i64>().unwrap()
            >= made.resource_version().unwrap().parse::<i64>().unwrap()
    );

    // sendInitialEvents: ADDED for the current state, then the initial-events-end bookmark.
    let events: Vec<_> = watcher(api.clone(), watcher::Config::default().streaming_lists())
        .take(3)
        .try_collect()
        .await
        .expect("streaming list");
    assert!(matches!(events[0], watcher::Event::Init));
    assert!(matches!(&events[1], watcher::Event::InitApply(o) if o.name_any() == "b"));
    assert!(matches!(events[2], watcher::Event::InitDone));
}

/// Write responses are served from the stored bytes with the resourceVersion spliced in: they
/// must be exactly the object a read returns afterwards, for creates, updates and patches.
#[tokio::test]
async fn write_responses_are_the_object_a_read_returns() {
    let hub = memory_hub(ServerConfig::default()).await;
    let api: Api<ConfigMap> = Api::namespaced(hub.client(), "default");
    let as_json = |c: &ConfigMap| serde_json::to_value(c).unwrap();
    let created = api
        .create(&PostParams::default(), &cm("echo", &[("a", "1")]))
        .await
        .unwrap();
    assert_eq!(as_json(&created), as_json(&api.get("echo").await.unwrap()));
    assert!(created.metadata.resource_version.is_some());
    assert!(created.metadata.managed_fields.is_some());
    let patched = api
        .patch(
            "echo",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"data": {"b": "2"}})),
        )
        .await
        .unwrap();
    assert_eq!(as_json(&patched), as_json(&api.get("echo").await.unwrap()));
    assert_ne!(
        patched.metadata.resource_version,
        created.metadata.resource_version
    );
    let mut replaced = patched.clone();
    replaced.data.as_mut().unwrap().remove("a");
    let replaced = api
        .replace("echo", &PostParams::default(), &replaced)
        .await
        .unwrap();
    assert_eq!(as_json(&replaced), as_json(&api.get("echo").await.unwrap()));
    assert_eq!(replaced.data.unwrap().len(), 1);
}

/// `finalizer::ensure` from a stale copy: the version read was overtaken, so the finalizer
/// goes onto the object as stored, keeping the other writer's change; and an object that has
/// the finalizer already is returned as it is.
#[tokio::test]
async fn ensuring_a_finalizer_from_a_stale_copy_builds_on_the_stored_object() {
    use flotilla_apiserver::finalizer;
    let hub = memory_hub(ServerConfig::default()).await;
    let api: Api<ConfigMap> = Api::namespaced(hub.client(), "default");
    let stale = api
        .create(&PostParams::default(), &cm("c", &[("a", "1")]))
        .await
        .unwrap();
    let mut other = stale.clone();
    other.metadata.finalizers = Some(vec!["example.com/other".into()]);
    api.replace("c", &PostParams::default(), &other)
        .await
        .unwrap();

    let stored = finalizer::ensure(&api, &stale, "example.com/ours")
        .await
        .expect("added over the stored object");
    assert_eq!(
        stored.finalizers(),
        ["example.com/other", "example.com/ours"],
        "the other writer's finalizer is kept"
    );
    let again = finalizer::ensure(&api, &stale, "example.com/ours")
        .await
        .expect("already there");
    assert_eq!(
        again.resource_version(),
        stored.resource_version(),
        "no write"
    );
    assert_eq!(
        api.get("c").await.unwrap(),
        stored,
        "a read (served from the stored bytes) returns what the write did"
    );
}
