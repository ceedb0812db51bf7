//! Bad input over real HTTPS: every malformed request gets the right 4xx `Status`, nothing
//! stored changes, and the server keeps serving.

mod common;

use common::HubProcess;
use http::{Method, Request};
use http_body_util::BodyExt;
use serde_json::{Value, json};

struct Reply {
    code: u16,
    body: Value,
}

async fn send(
    client: &kube::Client,
    method: Method,
    path: &str,
    content_type: &str,
    body: Vec<u8>,
) -> Reply {
    let req = Request::builder()
        .method(method)
        .uri(path)
        .header("Content-Type", content_type)
        .body(kube::client::Body::from(body))
        .expect("request");
    let resp = client.send(req).await.expect("send");
    let code = resp.status().as_u16();
    let bytes = resp.into_body().collect().await.expect("body").to_bytes();
    let body = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| json!({"raw": String::from_utf8_lossy(&bytes)}));
    Reply { code, body }
}

fn assert_status(r: &Reply, code: u16, reason: &str, fragment: &str) {
    assert_eq!(r.code, code, "unexpected code, body: {}", r.body);
    assert_eq!(r.body["kind"], "Status", "{}", r.body);
    assert_eq!(r.body["reason"], reason, "{}", r.body);
    let msg = r.body["message"].as_str().unwrap_or_default();
    assert!(msg.contains(fragment), "message {msg:?} lacks {fragment:?}");
}

const CRPS: &str = "/apis/placement.kubernetes-fleet.io/v1beta1/clusterresourceplacements";
const CMS: &str = "/api/v1/namespaces/default/configmaps";

fn crp(name: &str, policy: Value) -> Value {
    json!({"apiVersion": "placement.kubernetes-fleet.io/v1beta1", "kind": "ClusterResourcePlacement",
        "metadata": {"name": name},
        "spec": {"resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "test"}], "policy": policy}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_get_precise_statuses_and_change_nothing() {
    let hub = HubProcess::start();
    let client = hub.client().await;
    let json_ct = "application/json";
    let good = send(&client, Method::POST, CMS, json_ct, serde_json::to_vec(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "keep"}, "data": {"a": "1"}})).unwrap()).await;
    assert_eq!(good.code, 201, "{}", good.body);
    let good_crp = send(
        &client,
        Method::POST,
        CRPS,
        json_ct,
        serde_json::to_vec(&crp("keep", json!({"placementType": "PickAll"}))).unwrap(),
    )
    .await;
    assert_eq!(good_crp.code, 201, "{}", good_crp.body);
    let snapshot = send(
        &client,
        Method::GET,
        &format!("{CMS}/keep"),
        json_ct,
        vec![],
    )
    .await
    .body;

    // Malformed JSON and YAML bodies.
    assert_status(
        &send(
            &client,
            Method::POST,
            CMS,
            json_ct,
            b"{\"apiVersion\": ".to_vec(),
        )
        .await,
        400,
        "BadRequest",
        "json",
    );
    assert_status(
        &send(
            &client,
            Method::POST,
            CMS,
            "application/yaml",
            b"kind: [unclosed".to_vec(),
        )
        .await,
        400,
        "BadRequest",
        "YAML",
    );
    assert_status(
        &send(&client, Method::POST, CMS, json_ct, b"[1,2]".to_vec()).await,
        400,
        "BadRequest",
        "",
    );
    // A built-in kind's missing kind comes from the URL, as kube-apiserver's typed decoding
    // takes it; a custom resource must say what it is.
    let bare = send(
        &client,
        Method::POST,
        CMS,
        json_ct,
        br#"{"metadata":{"name":"bare"}}"#.to_vec(),
    )
    .await;
    assert_eq!(
        (bare.code, &bare.body["kind"]),
        (201, &json!("ConfigMap")),
        "{}",
        bare.body
    );
    assert_eq!(bare.body["apiVersion"], "v1", "{}", bare.body);
    assert_status(
        &send(
            &client,
            Method::POST,
            CRPS,
            json_ct,
            br#"{"apiVersion":"placement.kubernetes-fleet.io/v1beta1","metadata":{"name":"x"}}"#
                .to_vec(),
        )
        .await,
        400,
        "BadRequest",
        "Kind",
    );
    // Wrong types name the field.
    let r = send(
        &client,
        Method::POST,
        CRPS,
        json_ct,
        serde_json::to_vec(&crp(
            "typed",
            json!({"placementType": "PickN", "numberOfClusters": "ten"}),
        ))
        .unwrap(),
    )
    .await;
    assert_status(&r, 422, "Invalid", "spec.policy.numberOfClusters");
    // Cross-field rules name every bad field.
    let r = send(
        &client,
        Method::POST,
        CRPS,
        json_ct,
        serde_json::to_vec(&crp(
            "fixed",
            json!({"placementType": "PickFixed", "numberOfClusters": 3}),
        ))
        .unwrap(),
    )
    .await;
    assert_status(&r, 422, "Invalid", "spec.policy.numberOfClusters");
    let causes = r.body["details"]["causes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        causes
            .iter()
            .any(|c| c["field"] == "spec.policy.numberOfClusters"),
        "{}",
        r.body
    );
    // Unknown fields under strict validation; duplicates too.
    let strict = format!("{CRPS}?fieldValidation=Strict");
    let mut unknown = crp("unknown", json!({"placementType": "PickAll"}));
    unknown["spec"]["bogus"] = json!(true);
    assert_status(
        &send(
            &client,
            Method::POST,
            &strict,
            json_ct,
            serde_json::to_vec(&unknown).unwrap(),
        )
        .await,
        400,
        "BadRequest",
        "unknown field \"spec.bogus\"",
    );
    let dup = br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup","name":"dup2"}}"#
        .to_vec();
    assert_status(
        &send(
            &client,
            Method::POST,
            &format!("{CMS}?fieldValidation=Strict"),
            json_ct,
            dup,
        )
        .await,
        400,
        "BadRequest",
        "duplicate field",
    );
    assert_status(
        &send(
            &client,
            Method::POST,
            &format!("{CMS}?fieldValidation=Sometimes"),
            json_ct,
            b"{}".to_vec(),
        )
        .await,
        // As kube-apiserver: the CreateOptions are invalid, naming the field.
        422,
        "Invalid",
        "fieldValidation",
    );
    // Oversized body.
    let big = vec![b' '; 4 * 1024 * 1024];
    assert_status(
        &send(&client, Method::POST, CMS, json_ct, big).await,
        413,
        "RequestEntityTooLarge",
        "",
    );
    // Invalid selectors.
    assert_status(
        &send(
            &client,
            Method::GET,
            &format!("{CMS}?labelSelector=a%20in%20(b"),
            json_ct,
            vec![],
        )
        .await,
        400,
        "BadRequest",
        "",
    );
    assert_status(
        &send(
            &client,
            Method::GET,
            &format!("{CMS}?fieldSelector=spec.foo%3Dbar"),
            json_ct,
            vec![],
        )
        .await,
        400,
        "BadRequest",
        "field label not supported: spec.foo",
    );
    assert_status(
        &send(
            &client,
            Method::GET,
            &format!("{CMS}?limit=abc"),
            json_ct,
            vec![],
        )
        .await,
        400,
        "BadRequest",
        "limit",
    );
    assert_status(
        &send(
            &client,
            Method::GET,
            &format!("{CMS}?continue=garbage"),
            json_ct,
            vec![],
        )
        .await,
        400,
        "BadRequest",
        "continue",
    );
    // Bad patches.
    let keep = format!("{CMS}/keep");
    assert_status(
        &send(
            &client,
            Method::PATCH,
            &keep,
            "application/merge-patch+json",
            b"{not json".to_vec(),
        )
        .await,
        400,
        "BadRequest",
        "",
    );
    assert_status(
        &send(
            &client,
            Method::PATCH,
            &keep,
            "application/json-patch+json",
            br#"{"op":"add"}"#.to_vec(),
        )
        .await,
        400,
        "BadRequest",
        "",
    );
    let r = send(
        &client,
        Method::PATCH,
        &keep,
        "application/json-patch+json",
        br#"[{"op":"test","path":"/data/a","value":"2"}]"#.to_vec(),
    )
    .await;
    assert_eq!(r.code, 422, "{}", r.body);
    let r = send(
        &client,
        Method::PATCH,
        &keep,
        "application/json-patch+json",
        br#"[{"op":"replace","path":"/nope/x","value":1}]"#.to_vec(),
    )
    .await;
    assert_eq!(r.code, 422, "{}", r.body);
    assert_status(
        &send(&client, Method::PATCH, &keep, "text/plain", b"x".to_vec()).await,
        415,
        "UnsupportedMediaType",
        "",
    );
    assert_status(
        &send(
            &client,
            Method::PATCH,
            &format!("{CRPS}/keep"),
            "application/strategic-merge-patch+json",
            b"{}".to_vec(),
        )
        .await,
        415,
        "UnsupportedMediaType",
        "",
    );
    assert_status(
        &send(
            &client,
            Method::PATCH,
            &keep,
            "application/apply-patch+yaml",
            b"apiVersion: v1\nkind: ConfigMap\n".to_vec(),
        )
        .await,
        // As kube-apiserver: the PatchOptions are invalid, naming the field.
        422,
        "Invalid",
        "fieldManager",
    );
    // A merge patch that makes the object invalid is rejected as a whole.
    let r = send(
        &client,
        Method::PATCH,
        &format!("{CRPS}/keep"),
        "application/merge-patch+json",
        br#"{"spec":{"policy":{"placementType":"PickN"}}}"#.to_vec(),
    )
    .await;
    assert_eq!(r.code, 422, "{}", r.body);
    // Verbs a path does not support.
    assert_status(
        &send(&client, Method::PUT, CMS, json_ct, b"{}".to_vec()).await,
        405,
        "MethodNotAllowed",
        "update is not supported",
    );
    // Conflicting writes.
    let mut stale = snapshot.clone();
    stale["metadata"]["resourceVersion"] = json!("1");
    stale["data"]["a"] = json!("stale");
    assert_status(
        &send(
            &client,
            Method::PUT,
            &keep,
            json_ct,
            serde_json::to_vec(&stale).unwrap(),
        )
        .await,
        409,
        "Conflict",
        "the object has been modified",
    );
    let mut renamed = snapshot.clone();
    renamed["metadata"]["name"] = json!("other");
    assert_status(
        &send(
            &client,
            Method::PUT,
            &keep,
            json_ct,
            serde_json::to_vec(&renamed).unwrap(),
        )
        .await,
        400,
        "BadRequest",
        "does not match",
    );
    assert_status(
        &send(
            &client,
            Method::POST,
            CMS,
            json_ct,
            serde_json::to_vec(&snapshot).unwrap(),
        )
        .await,
        409,
        "AlreadyExists",
        "configmaps \"keep\" already exists",
    );
    assert_status(
        &send(
            &client,
            Method::GET,
            &format!("{CMS}/missing"),
            json_ct,
            vec![],
        )
        .await,
        404,
        "NotFound",
        "configmaps \"missing\" not found",
    );
    assert_status(
        &send(
            &client,
            Method::POST,
            "/api/v1/namespaces/nowhere/configmaps",
            json_ct,
            serde_json::to_vec(
                &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}),
            )
            .unwrap(),
        )
        .await,
        404,
        "NotFound",
        "namespaces \"nowhere\" not found",
    );

    // Nothing stored changed, and the server still serves.
    let after = send(&client, Method::GET, &keep, json_ct, vec![])
        .await
        .body;
    assert_eq!(
        after, snapshot,
        "a rejected request changed the stored object"
    );
    let crps = send(&client, Method::GET, CRPS, json_ct, vec![]).await.body;
    let names: Vec<&str> = crps["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["metadata"]["name"].as_str())
        .collect();
    assert_eq!(names, vec!["keep"]);
    let cms = send(&client, Method::GET, CMS, json_ct, vec![]).await.body;
    // `keep` and the kind-less `bare`, which is valid; nothing of the bad requests.
    assert_eq!(cms["items"].as_array().unwrap().len(), 2, "{cms}");
}

/// A body far over the 3 MiB limit (80 MiB) gets a 413 `Status` over HTTP/1.1 (with and
/// without `Expect: 100-continue`) and HTTP/2, not a dropped connection.
#[test]
fn huge_bodies_get_a_413_not_a_dropped_connection() {
    let hub = HubProcess::start();
    let body = hub.dir().join("huge.json");
    std::fs::write(&body, vec![b' '; 80 * 1024 * 1024]).unwrap();
    let url = format!("{}/api/v1/namespaces/default/configmaps", hub.server());
    for flags in [
        &["--http1.1", "-H", "Expect:"][..],
        &["--http1.1", "-H", "Expect: 100-continue"][..],
        &["--http2"][..],
    ] {
        let out = std::process::Command::new("curl")
            .args(["-sS", "--cacert"])
            .arg(hub.dir().join("ca.crt"))
            .args(flags)
            .args([
                "-H",
                &format!("Authorization: Bearer {}", hub.admin_token()),
            ])
            .args(["-H", "Content-Type: application/json", "--data-binary"])
            .arg(format!("@{}", body.display()))
            .args(["-w", "\n%{http_code}", &url])
            .output()
            .expect("curl");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{flags:?}: curl failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let (status, code) = stdout.rsplit_once('\n').unwrap();
        assert_eq!(code, "413", "{flags:?}: {stdout}");
        let status: Value = serde_json::from_str(status).unwrap();
        assert_eq!(
            status["reason"], "RequestEntityTooLarge",
            "{flags:?}: {status}"
        );
    }
}
