//! `flotilla join NAME`: the manifests that run the member agent inside member cluster NAME,
//! for `flotilla join NAME | kubectl --context NAME apply -f -`.
//!
//! It issues (or rotates) the member's hub token ([`crate::token::issue_token`]) and prints,
//! in namespace [`AGENT_NAMESPACE`]: the agent's ServiceAccount; a Secret with the hub's URL,
//! the token and the hub's CA; the agent's Deployment (one replica, replaced not surged, so
//! one agent at a time acts for the member); and two ClusterRoles bound to the service
//! account. `flotilla-member-agent` holds exactly what the agent does itself: install its
//! AppliedWork CustomResourceDefinition and namespace, read nodes and pods for the member's
//! properties, follow workloads' availability. `flotilla-member-agent-placement` holds what
//! placed objects need: read and write of every kind, or only of the kinds `--placeable` names;
//! a placement of anything else fails on the member with the API's Forbidden, reported in the
//! placement's status. Everything carries [`PART_OF`] so `kubectl delete` with that label
//! selector removes the agent after the member has left.
//!
//! [`manifests`] is pure; the command around it reads the hub's kubeconfig and issues the token.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use base64::Engine as _;
use clap::Args;
use flotilla_member::setup::{AGENT_NAMESPACE, PART_OF, REMOVE_AGENT};
use serde_json::{Value, json};

/// The name of the agent's ServiceAccount, Deployment and own ClusterRole.
pub const AGENT: &str = "flotilla-member-agent";
/// The ClusterRole for what placements create on the member.
pub const PLACEMENT_ROLE: &str = "flotilla-member-agent-placement";
/// The Secret holding the hub's URL, the member's token and the hub's CA.
pub const HUB_SECRET: &str = "flotilla-hub";
/// Where the agent's container finds the hub's CA (the Secret, mounted).
pub const HUB_MOUNT: &str = "/etc/flotilla/hub";

/// Arguments of `flotilla join`.
#[derive(Debug, Args)]
pub struct JoinArgs {
    /// The member cluster's name: its MemberCluster on the hub.
    pub name: String,
    /// The agent's container image (built from the repository's Dockerfile).
    #[arg(long, default_value = concat!("flotilla:", env!("CARGO_PKG_VERSION")))]
    pub image: String,
    /// The hub's URL as the member cluster reaches it; default the server in the hub's
    /// kubeconfig.
    #[arg(long)]
    pub hub_url: Option<String>,
    /// Only these kinds may be placed on the member, as `RESOURCE.GROUP` (`deployments.apps`)
    /// or `RESOURCE` for the core group (`configmaps`); repeat. Default: every kind.
    #[arg(long = "placeable", value_name = "RESOURCE.GROUP")]
    pub placeable: Vec<String>,
    /// A ConfigMap on the member, `NAMESPACE/NAME`, holding the price table (`prices.yaml`)
    /// for the member's cost properties; the agent may read it.
    #[arg(long)]
    pub prices_configmap: Option<String>,
    /// The hub's kubeconfig (an administrator's); default `$KUBECONFIG`, else
    /// `.flotilla/kubeconfig`.
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
}

/// What the manifests are made of.
#[derive(Debug, Clone, PartialEq)]
pub struct Join {
    /// The member's name.
    pub name: String,
    /// The agent's image.
    pub image: String,
    /// The hub's URL.
    pub hub_url: String,
    /// The member's hub token.
    pub token: String,
    /// The hub's CA certificate, PEM.
    pub hub_ca: String,
    /// `(group, resource)` placeable; empty for every kind.
    pub placeable: Vec<(String, String)>,
    /// The price ConfigMap, `(namespace, name)`.
    pub prices_configmap: Option<(String, String)>,
}

/// Prints the manifests that join cluster `args.name` (see the module docs).
pub async fn run(args: JoinArgs) -> Result<()> {
    let kubeconfig = crate::member::hub_kubeconfig_path(args.kubeconfig);
    let text = std::fs::read_to_string(&kubeconfig)
        .with_context(|| format!("reading the hub's kubeconfig {}", kubeconfig.display()))?;
    let config =
        kube::config::Kubeconfig::from_yaml(&text).context("parsing the hub's kubeconfig")?;
    let (cluster, server) = crate::member::current_cluster(&config)?;
    let hub_ca = match (
        &cluster.certificate_authority_data,
        &cluster.certificate_authority,
    ) {
        (Some(data), _) => String::from_utf8(
            base64::engine::general_purpose::STANDARD
                .decode(data.trim())
                .context("decoding the hub's certificate-authority-data")?,
        )?,
        (None, Some(file)) => {
            let path = kubeconfig
                .parent()
                .unwrap_or(std::path::Path::new("."))
                .join(file);
            std::fs::read_to_string(&path)
                .with_context(|| format!("reading the hub's CA {}", path.display()))?
        }
        (None, None) => bail!("the hub's kubeconfig names no certificate authority"),
    };
    let placeable = args
        .placeable
        .iter()
        .map(|p| parse_placeable(p))
        .collect::<Result<_>>()?;
    let prices_configmap = match &args.prices_configmap {
        Some(reference) => {
            let (namespace, name) = reference.split_once('/').with_context(|| {
                format!("--prices-configmap {reference:?} is not NAMESPACE/NAME")
            })?;
            Some((namespace.to_string(), name.to_string()))
        }
        None => None,
    };
    let client = crate::member::hub_client(Some(kubeconfig.clone())).await?;
    let members: kube::Api<flotilla_api::cluster::MemberCluster> = kube::Api::all(client.clone());
    if members
        .get_opt(&args.name)
        .await
        .context("reaching the hub")?
        .is_none()
    {
        bail!(
            "MemberCluster {:?} does not exist on the hub; create it first (kubectl apply -f membercluster.yaml)",
            args.name
        );
    }
    let token = crate::token::issue_token(&client, &args.name).await?;
    let join = Join {
        name: args.name,
        image: args.image,
        hub_url: args.hub_url.unwrap_or(server),
        token,
        hub_ca,
        placeable,
        prices_configmap,
    };
    let mut out = String::new();
    for manifest in manifests(&join) {
        out.push_str("---\n");
        out.push_str(&serde_saphyr::to_string(&manifest)?);
    }
    print!("{out}");
    eprintln!(
        "Apply to member cluster {0}: flotilla join {0} | kubectl --context {0} apply -f -\n\
         (this rotated the member's hub token). After the member leaves the fleet, remove the agent with:\n  \
         {REMOVE_AGENT}",
        join.name
    );
    Ok(())
}

/// `RESOURCE.GROUP` (or `RESOURCE` for the core group) as `(group, resource)`.
fn parse_placeable(text: &str) -> Result<(String, String)> {
    let (resource, group) = text.split_once('.').unwrap_or((text, ""));
    let ok = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
    };
    if resource.is_empty() || !ok(resource) || !ok(group) {
        bail!(
            "--placeable {text:?} is not RESOURCE.GROUP (deployments.apps) or RESOURCE (configmaps)"
        );
    }
    Ok((group.to_string(), resource.to_string()))
}

/// The manifests, in the order `kubectl apply` needs them.
pub fn manifests(join: &Join) -> Vec<Value> {
    let labels = json!({
        PART_OF.0: PART_OF.1,
        "app.kubernetes.io/name": AGENT,
        "kubernetes-fleet.io/member": join.name,
    });
    let meta = |name: &str, namespaced: bool| {
        let mut m = json!({"name": name, "labels": labels});
        if namespaced {
            m["namespace"] = json!(AGENT_NAMESPACE);
        }
        m
    };
    let all = [
        "get", "list", "watch", "create", "update", "patch", "delete",
    ];
    let read = ["get", "list", "watch"];
    let own_rules = json!([
        {"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"],
         "verbs": ["get", "list", "watch", "create", "update", "patch"]},
        {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "list", "watch", "create", "patch"]},
        {"apiGroups": [""], "resources": ["nodes", "pods"], "verbs": read},
        {"apiGroups": ["apps"], "resources": ["deployments", "statefulsets", "daemonsets"], "verbs": read},
        {"apiGroups": ["placement.kubernetes-fleet.io"],
         "resources": ["appliedworks", "appliedworks/status"], "verbs": all},
    ]);
    let placement_rules = if join.placeable.is_empty() {
        json!([{"apiGroups": ["*"], "resources": ["*"], "verbs": all}])
    } else {
        Value::Array(
            join.placeable
                .iter()
                .map(|(group, resource)| json!({"apiGroups": [group], "resources": [resource], "verbs": all}))
                .collect(),
        )
    };
    let binding = |role: &str| {
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": meta(role, false),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": AGENT, "namespace": AGENT_NAMESPACE}],
        })
    };
    let mut args = vec![
        "member".to_string(),
        "--name".into(),
        join.name.clone(),
        "--hub-ca".into(),
        format!("{HUB_MOUNT}/ca.crt"),
        "--metrics-bind-address".into(),
        "0.0.0.0:8080".into(),
    ];
    if let Some((namespace, name)) = &join.prices_configmap {
        args.extend(["--prices-configmap".into(), format!("{namespace}/{name}")]);
    }
    let from_secret = |var: &str, key: &str| json!({"name": var, "valueFrom": {"secretKeyRef": {"name": HUB_SECRET, "key": key}}});
    let mut out = vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": meta(AGENT_NAMESPACE, false)}),
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(AGENT, true)}),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": meta(AGENT, false),
            "rules": own_rules,
        }),
        binding(AGENT),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": meta(PLACEMENT_ROLE, false),
            "rules": placement_rules,
        }),
        binding(PLACEMENT_ROLE),
    ];
    if let Some((namespace, name)) = &join.prices_configmap {
        let mut role_meta = meta(&format!("{AGENT}-prices"), false);
        role_meta["namespace"] = json!(namespace);
        out.push(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": role_meta,
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "resourceNames": [name], "verbs": read},
                      {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list", "watch"]}],
        }));
        out.push(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": role_meta,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": format!("{AGENT}-prices")},
            "subjects": [{"kind": "ServiceAccount", "name": AGENT, "namespace": AGENT_NAMESPACE}],
        }));
    }
    out.push(json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": meta(HUB_SECRET, true),
        "type": "Opaque",
        "stringData": {"hub-url": join.hub_url, "token": join.token, "ca.crt": join.hub_ca},
    }));
    out.push(json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta(AGENT, true),
        "spec": {
            "replicas": 1,
            "strategy": {"type": "Recreate"},
            "selector": {"matchLabels": {"app.kubernetes.io/name": AGENT}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "serviceAccountName": AGENT,
                    "securityContext": {"runAsNonRoot": true, "runAsUser": 65532, "seccompProfile": {"type": "RuntimeDefault"}},
                    "containers": [{
                        "name": "agent",
                        "image": join.image,
                        "args": args,
                        "env": [
                            from_secret("FLOTILLA_HUB_URL", "hub-url"),
                            from_secret("FLOTILLA_HUB_TOKEN", "token"),
                            // mimalloc returns freed pages to the system instead of keeping its
                            // arenas committed: the agent's resident memory on a member holding
                            // 200 objects drops from about 70 MiB to about 43 (BENCHMARKS.md).
                            {"name": "MIMALLOC_ARENA_EAGER_COMMIT", "value": "0"},
                        ],
                        "ports": [{"name": "metrics", "containerPort": 8080}],
                        "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}, "limits": {"memory": "256Mi"}},
                        "securityContext": {
                            "allowPrivilegeEscalation": false,
                            "readOnlyRootFilesystem": true,
                            "capabilities": {"drop": ["ALL"]},
                        },
                        "volumeMounts": [{"name": "hub", "mountPath": HUB_MOUNT, "readOnly": true}],
                    }],
                    "volumes": [{"name": "hub", "secret": {"secretName": HUB_SECRET, "items": [{"key": "ca.crt", "path": "ca.crt"}]}}],
                },
            },
        },
    }));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn join() -> Join {
        Join {
            name: "prod-east-1".into(),
            image: "registry.example/flotilla:1".into(),
            hub_url: "https://hub.example:6443".into(),
            token: "secret-token".into(),
            hub_ca: "-----BEGIN CERTIFICATE-----\n".into(),
            placeable: Vec::new(),
            prices_configmap: None,
        }
    }

    fn kinds(manifests: &[Value]) -> Vec<String> {
        manifests
            .iter()
            .map(|m| {
                format!(
                    "{}/{}",
                    m["kind"].as_str().unwrap(),
                    m["metadata"]["name"].as_str().unwrap()
                )
            })
            .collect()
    }

    #[test]
    fn the_agent_runs_with_the_secret_s_hub_and_token_and_every_object_is_labelled() {
        let m = manifests(&join());
        assert_eq!(
            kinds(&m),
            [
                "Namespace/fleet-system",
                "ServiceAccount/flotilla-member-agent",
                "ClusterRole/flotilla-member-agent",
                "ClusterRoleBinding/flotilla-member-agent",
                "ClusterRole/flotilla-member-agent-placement",
                "ClusterRoleBinding/flotilla-member-agent-placement",
                "Secret/flotilla-hub",
                "Deployment/flotilla-member-agent",
            ]
        );
        for manifest in &m {
            assert_eq!(
                manifest["metadata"]["labels"][PART_OF.0], PART_OF.1,
                "{manifest}"
            );
        }
        let secret = &m[6]["stringData"];
        assert_eq!(secret["token"], "secret-token");
        assert_eq!(secret["hub-url"], "https://hub.example:6443");
        let container = &m[7]["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(container["image"], "registry.example/flotilla:1");
        assert_eq!(
            container["args"],
            json!([
                "member",
                "--name",
                "prod-east-1",
                "--hub-ca",
                "/etc/flotilla/hub/ca.crt",
                "--metrics-bind-address",
                "0.0.0.0:8080"
            ])
        );
        let env: Vec<&str> = container["env"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            env,
            [
                "FLOTILLA_HUB_URL",
                "FLOTILLA_HUB_TOKEN",
                "MIMALLOC_ARENA_EAGER_COMMIT"
            ]
        );
        assert!(
            !m[7].to_string().contains("secret-token"),
            "the token is only in the Secret"
        );
    }

    #[test]
    fn placeable_kinds_narrow_the_placement_role_and_a_price_configmap_gets_a_role() {
        let mut j = join();
        j.placeable = vec![
            parse_placeable("configmaps").unwrap(),
            parse_placeable("deployments.apps").unwrap(),
        ];
        j.prices_configmap = Some(("pricing".into(), "prices".into()));
        let m = manifests(&j);
        let role = m
            .iter()
            .find(|m| m["metadata"]["name"] == PLACEMENT_ROLE && m["kind"] == "ClusterRole")
            .unwrap();
        let rules: Vec<(String, String)> = role["rules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["apiGroups"][0].as_str().unwrap().into(),
                    r["resources"][0].as_str().unwrap().into(),
                )
            })
            .collect();
        assert_eq!(
            rules,
            [
                ("".into(), "configmaps".into()),
                ("apps".into(), "deployments".into())
            ]
        );
        assert!(kinds(&m).contains(&"Role/flotilla-member-agent-prices".to_string()));
        let args =
            m.last().unwrap()["spec"]["template"]["spec"]["containers"][0]["args"].to_string();
        assert!(
            args.contains("\"--prices-configmap\",\"pricing/prices\""),
            "{args}"
        );
        assert!(parse_placeable("Deployments.apps").is_err());
        assert!(parse_placeable("").is_err());
    }
}
