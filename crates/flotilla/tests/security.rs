//! The secured hub driven by the real kubectl: 401 without credentials, member tokens confined
//! to their member and revocable, `kubectl auth can-i` / `whoami` answering from RBAC,
//! client certificates minted by `flotilla kubeconfig --user`, expired certificates refused
//! with a 401 saying why, and the audit log.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::HubProcess;

/// `flotilla ARGS` against the hub's kubeconfig; stdout, panicking on failure.
fn flotilla(hub: &HubProcess, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(args)
        .arg("--kubeconfig")
        .arg(hub.kubeconfig())
        .output()
        .expect("run flotilla");
    assert!(
        out.status.success(),
        "flotilla {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Writes `text` as a kubeconfig in the hub's data directory.
fn write_kubeconfig(hub: &HubProcess, name: &str, text: &str) -> PathBuf {
    let path = hub.dir().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// kubectl with another kubeconfig (or extra flags), returning (success, stdout, stderr).
fn kubectl_as(hub: &HubProcess, kubeconfig: &Path, args: &[&str]) -> (bool, String, String) {
    let out = hub
        .kubectl_cmd(args)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .output()
        .expect("kubectl");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).trim().to_string(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn member_cluster(name: &str) -> String {
    format!(
        "apiVersion: cluster.kubernetes-fleet.io/v1\nkind: MemberCluster\nmetadata:\n  name: {name}\nspec:\n  identity: {{kind: ServiceAccount, name: agent-{name}, namespace: fleet-system}}\n"
    )
}

/// `kubectl auth can-i ARGS` as `kubeconfig`: "yes" or "no".
fn can_i(hub: &HubProcess, kubeconfig: &Path, args: &[&str]) -> String {
    let mut full = vec!["auth", "can-i"];
    full.extend_from_slice(args);
    let (_, out, err) = kubectl_as(hub, kubeconfig, &full);
    assert!(out == "yes" || out == "no", "can-i {args:?}: {out} {err}");
    out
}

#[test]
fn tokens_certificates_rbac_and_audit_through_kubectl() {
    let hub = HubProcess::start();
    let admin_text = std::fs::read_to_string(hub.kubeconfig()).unwrap();
    let admin = hub.kubeconfig();

    // No credentials: 401 for the API, but health and version stay public.
    let anonymous = write_kubeconfig(
        &hub,
        "anonymous.kubeconfig",
        &admin_text
            .lines()
            .filter(|l| !l.trim_start().starts_with("token:"))
            .collect::<Vec<_>>()
            .join("\n"),
    );
    // (kube-rs, because kubectl prompts for a password when a kubeconfig has no credentials.)
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (api, health) = runtime.block_on(async {
        let config = kube::config::Kubeconfig::read_from(&anonymous).unwrap();
        let config = kube::Config::from_custom_kubeconfig(config, &Default::default())
            .await
            .unwrap();
        let client = kube::Client::try_from(config).unwrap();
        let get = |path: &str| {
            let client = client.clone();
            let request = http::Request::get(path).body(Vec::new()).unwrap();
            async move { client.request_text(request).await }
        };
        (
            get("/apis/cluster.kubernetes-fleet.io/v1/memberclusters").await,
            get("/healthz").await,
        )
    });
    assert!(
        matches!(&api, Err(kube::Error::Api(s)) if s.code == 401 && s.reason == "Unauthorized"),
        "{api:?}"
    );
    assert_eq!(health.unwrap(), "ok");

    // A member token reaches its own member and namespace only.
    hub.create(&member_cluster("m1"));
    hub.create(&member_cluster("m2"));
    let token = flotilla(&hub, &["token", "issue", "m1"]).trim().to_string();
    assert!(token.starts_with("flotilla-member.m1."), "{token}");
    let member = write_kubeconfig(
        &hub,
        "m1.kubeconfig",
        &admin_text.replace(
            admin_text
                .lines()
                .find(|l| l.trim_start().starts_with("token:"))
                .unwrap(),
            &format!("    token: {token}"),
        ),
    );
    common::eventually("m1's roles are in force", 10, || {
        kubectl_as(&hub, &member, &["get", "membercluster", "m1"])
            .0
            .then_some(())
    });
    for forbidden in [
        vec!["get", "membercluster", "m2"],
        vec!["get", "works", "-n", "fleet-member-m2"],
        vec!["get", "clusterresourceplacements"],
        vec!["get", "secrets", "-n", "fleet-system"],
        vec!["create", "configmap", "x", "-n", "default"],
    ] {
        let (ok, _, err) = kubectl_as(&hub, &member, &forbidden);
        assert!(
            !ok && err.contains("is forbidden: User"),
            "{forbidden:?}: {err}"
        );
    }
    let (ok, _, err) = kubectl_as(
        &hub,
        &member,
        &["create", "configmap", "x", "-n", "fleet-member-m1"],
    );
    assert!(ok, "{err}");
    let answers = [
        (
            vec![
                "list",
                "works.placement.kubernetes-fleet.io",
                "-n",
                "fleet-member-m1",
            ],
            "yes",
        ),
        (
            vec![
                "list",
                "works.placement.kubernetes-fleet.io",
                "-n",
                "fleet-member-m2",
            ],
            "no",
        ),
        (
            vec!["patch", "memberclusters/m1", "--subresource=status"],
            "yes",
        ),
        (
            vec!["patch", "memberclusters/m2", "--subresource=status"],
            "no",
        ),
        (vec!["delete", "memberclusters/m1"], "no"),
        (vec!["create", "clusterresourceplacements"], "no"),
    ];
    for (args, want) in &answers {
        assert_eq!(can_i(&hub, &member, args), *want, "member can-i {args:?}");
    }
    let (_, who, _) = kubectl_as(
        &hub,
        &member,
        &[
            "auth",
            "whoami",
            "-o",
            "jsonpath={.status.userInfo.username}",
        ],
    );
    assert_eq!(who, "fleet-member:m1");

    // Revoked: the same token is refused at once, and its open watch ends.
    let mut watching = hub
        .kubectl_cmd(&["get", "membercluster", "m1", "--watch", "-o", "name"])
        .arg("--kubeconfig")
        .arg(&member)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(watching.stdout.as_mut().unwrap()),
        &mut first,
    )
    .unwrap();
    assert_eq!(first.trim(), "membercluster.cluster.kubernetes-fleet.io/m1");
    flotilla(&hub, &["token", "revoke", "m1"]);
    common::eventually("the revoked token's watch ends", 10, || {
        watching.try_wait().unwrap().map(|_| ())
    });
    let (ok, _, err) = kubectl_as(&hub, &member, &["get", "membercluster", "m1"]);
    assert!(!ok && err.contains("Unauthorized"), "{err}");

    // A viewer certificate minted by the hub's CA: reads, never writes.
    let viewer_text = flotilla(
        &hub,
        &[
            "kubeconfig",
            "--user",
            "val",
            "--group",
            "fleet:viewers",
            "--data-dir",
            hub.dir().to_str().unwrap(),
        ],
    );
    let viewer = write_kubeconfig(&hub, "val.kubeconfig", &viewer_text);
    let (ok, out, err) = kubectl_as(&hub, &viewer, &["get", "memberclusters", "-o", "name"]);
    assert!(ok, "{err}");
    assert_eq!(
        out,
        "membercluster.cluster.kubernetes-fleet.io/m1\nmembercluster.cluster.kubernetes-fleet.io/m2"
    );
    let (ok, _, err) = kubectl_as(&hub, &viewer, &["delete", "membercluster", "m2"]);
    assert!(!ok && err.contains(r#"is forbidden: User "val""#), "{err}");
    let (_, groups, _) = kubectl_as(
        &hub,
        &viewer,
        &["auth", "whoami", "-o", "jsonpath={.status.userInfo.groups}"],
    );
    assert!(groups.contains("fleet:viewers"), "{groups}");
    assert_eq!(
        can_i(&hub, &viewer, &["list", "clusterresourceplacements"]),
        "yes"
    );
    assert_eq!(
        can_i(&hub, &viewer, &["create", "clusterresourceplacements"]),
        "no"
    );
    assert_eq!(can_i(&hub, &admin, &["*", "*"]), "yes");
    // kubectl --as: the administrator asks as the viewer, and acts as nobody.
    assert_eq!(
        can_i(
            &hub,
            &admin,
            &[
                "create",
                "clusterresourceplacements",
                "--as=val",
                "--as-group=fleet:viewers"
            ]
        ),
        "no"
    );
    let (ok, _, err) = kubectl_as(&hub, &admin, &["get", "configmaps", "--as=nobody"]);
    assert!(!ok && err.contains(r#"User "nobody" cannot list"#), "{err}");
    let (ok, _, err) = kubectl_as(&hub, &viewer, &["get", "configmaps", "--as=flotilla-admin"]);
    assert!(!ok && err.contains("cannot impersonate"), "{err}");
    // A viewer reads everything but Secrets (as Kubernetes' `view` role).
    assert_eq!(
        can_i(&hub, &viewer, &["get", "secrets", "-n", "fleet-system"]),
        "no"
    );
    let (ok, _, err) = kubectl_as(&hub, &viewer, &["get", "secrets", "-A"]);
    assert!(
        !ok && err.contains("cannot list resource \"secrets\""),
        "{err}"
    );
    let (ok, list, err) = kubectl_as(&hub, &viewer, &["auth", "can-i", "--list"]);
    assert!(ok, "{err}");
    let line = |resource: &str| {
        list.lines()
            .find(|l| l.split_whitespace().next() == Some(resource))
    };
    assert!(
        line("configmaps").is_some_and(|l| l.contains("[get list watch]")),
        "{list}"
    );
    assert!(
        line("*.placement.kubernetes-fleet.io").is_some_and(|l| l.contains("[get list watch]")),
        "{list}"
    );
    assert!(line("secrets").is_none() && line("*.*").is_none(), "{list}");

    // An expired certificate from the same CA gets a 401 saying why, as with kube-apiserver.
    let expired = write_kubeconfig(
        &hub,
        "expired.kubeconfig",
        &expired_kubeconfig(&hub, &admin_text),
    );
    let (ok, _, err) = kubectl_as(&hub, &expired, &["get", "memberclusters"]);
    assert!(!ok, "an expired certificate was accepted");
    assert!(
        err.contains("You must be logged in to the server")
            && err.contains("client certificate refused")
            && err.contains("expired"),
        "{err}"
    );
    // So does a certificate from another CA (even one with the same name): the handshake
    // succeeds, and the request is a 401 saying why, not a TLS alert.
    let foreign = write_kubeconfig(
        &hub,
        "foreign.kubeconfig",
        &certificate_kubeconfig(&admin_text, rcgen::KeyPair::generate().unwrap(), (-1, 30)),
    );
    let (ok, _, err) = kubectl_as(&hub, &foreign, &["get", "memberclusters"]);
    assert!(!ok, "a foreign certificate was accepted");
    assert!(
        err.contains("You must be logged in to the server")
            && err.contains("client certificate refused"),
        "{err}"
    );

    // The audit log names who changed what, refusals included.
    let audit: Vec<serde_json::Value> = std::fs::read_to_string(hub.dir().join("audit.log"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let find = |user: &str, verb: &str, code: u64| {
        audit
            .iter()
            .find(|l| l["user"] == user && l["verb"] == verb && l["code"] == code)
            .unwrap_or_else(|| panic!("no audit line for {user} {verb} {code}"))
    };
    assert_eq!(
        find("flotilla-admin", "delete", 200)["name"],
        "fleet-member-m1-token"
    );
    assert_eq!(
        find("fleet-member:m1", "create", 403)["namespace"],
        "default"
    );
    assert_eq!(find("val", "delete", 403)["resource"], "memberclusters");
}

/// A kubeconfig whose client certificate, signed by the hub's CA, expired yesterday.
fn expired_kubeconfig(hub: &HubProcess, admin_text: &str) -> String {
    let ca_key =
        rcgen::KeyPair::from_pem(&std::fs::read_to_string(hub.dir().join("ca.key")).unwrap())
            .unwrap();
    certificate_kubeconfig(admin_text, ca_key, (-30, -1))
}

/// `admin_text` with its token replaced by a client certificate for `late` in
/// `system:masters`, signed by a CA named like the hub's with `ca_key`, valid between the
/// two day offsets from now.
fn certificate_kubeconfig(admin_text: &str, ca_key: rcgen::KeyPair, days: (i64, i64)) -> String {
    use base64::Engine as _;
    // The hub's CA identity: its subject and key (what `tls.rs` signs with).
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(rcgen::DnType::CommonName, "flotilla-ca");
    let issuer = rcgen::Issuer::new(ca, ca_key);
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "late");
    params
        .distinguished_name
        .push(rcgen::DnType::OrganizationName, "system:masters");
    params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
    let now = time::OffsetDateTime::now_utc();
    params.not_before = now + time::Duration::days(days.0);
    params.not_after = now + time::Duration::days(days.1);
    let cert = params.signed_by(&key, &issuer).unwrap();
    let b64 = |s: String| base64::engine::general_purpose::STANDARD.encode(s);
    let token_line = admin_text
        .lines()
        .find(|l| l.trim_start().starts_with("token:"))
        .unwrap();
    admin_text.replace(
        token_line,
        &format!(
            "    client-certificate-data: {}\n    client-key-data: {}",
            b64(cert.pem()),
            b64(key.serialize_pem())
        ),
    )
}

/// The data directory (CA key, tokens, a store full of Secrets) is its owner's alone: 0700,
/// and the store's files 0600.
#[test]
fn the_data_directory_and_store_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let hub = HubProcess::start();
    hub.kubectl_ok(&["create", "secret", "generic", "s", "--from-literal=k=v"]);
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(hub.dir()), 0o700, "{}", hub.dir().display());
    for file in ["store.db", "store.db-wal", "ca.key", "token"] {
        let path = hub.dir().join(file);
        if path.exists() {
            assert_eq!(mode(&path), 0o600, "{}", path.display());
        } else {
            assert_ne!(file, "store.db", "the store exists");
        }
    }
}
