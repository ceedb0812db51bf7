//! `flotilla token issue|revoke <member>`: the bearer token a member agent joins the hub
//! with. Issuing stores only the token's hash (a Secret in `fleet-system`), creates the
//! member's namespace and the RBAC that confines its agent to it, and prints the token once;
//! issuing again rotates it. Revoking deletes the Secret: the token stops working at once.
//! On a hub that is a plain Kubernetes cluster the token is a ServiceAccount token instead
//! ([`issue_token`]).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use flotilla_apiserver::auth::member_tokens;
use flotilla_apiserver::rbac::bootstrap;
use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::core::v1::ServiceAccount;
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::discovery::ApiResource;
use serde_json::{Value, json};

/// `flotilla token` subcommands.
#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Issue (or rotate) a member's token and print it with the command that joins the member.
    Issue(TokenArgs),
    /// Revoke a member's token.
    Revoke(TokenArgs),
}

/// Arguments of both subcommands.
#[derive(Debug, Args)]
pub struct TokenArgs {
    /// The member cluster's name (its MemberCluster on the hub).
    pub member: String,
    /// The hub's kubeconfig (an administrator's); default `$KUBECONFIG`, else
    /// `.flotilla/kubeconfig`.
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
}

/// Runs a `flotilla token` subcommand.
pub async fn run(command: TokenCommand) -> Result<()> {
    match command {
        TokenCommand::Issue(args) => issue(args).await,
        TokenCommand::Revoke(args) => revoke(args).await,
    }
}

async fn issue(args: TokenArgs) -> Result<()> {
    let kubeconfig = crate::member::hub_kubeconfig_path(args.kubeconfig);
    let client = crate::member::hub_client(Some(kubeconfig.clone())).await?;
    let token = issue_token(&client, &args.member).await?;
    println!("{token}");
    let (server, ca) = hub_of(&kubeconfig)?;
    let ca = ca
        .map(|path| format!(" --hub-ca {}", shell_word(&path.display().to_string())))
        .unwrap_or_default();
    eprintln!(
        "Token issued for member {:?} (shown once; issuing again rotates it). Join the member with:\n  flotilla member --hub {}{ca} --name {} --token {token} --kubeconfig <member kubeconfig>",
        args.member,
        shell_word(&server),
        args.member,
    );
    Ok(())
}

/// Issues (or rotates) member `member`'s token on the hub: its namespace, the RBAC that
/// confines its agent to it, and the token. On Flotilla's hub the token is a member token (the
/// hub stores its hash in a Secret; revoking deletes it). A hub that is a plain Kubernetes
/// cluster knows no member tokens: there the agent is the ServiceAccount [`HUB_AGENT`] of the
/// member's namespace, and the token a TokenRequest for it valid for [`TOKEN_LIFETIME`].
pub async fn issue_token(client: &kube::Client, member: &str) -> Result<String> {
    validate_name(member)?;
    let namespace = bootstrap::member_namespace(member);
    let namespaces: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &ApiResource::erase::<k8s_openapi::api::core::v1::Namespace>(&()),
    );
    let ns: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}
    }))?;
    match namespaces.create(&PostParams::default(), &ns).await {
        Ok(_) => {}
        Err(kube::Error::Api(e)) if e.code == 409 => {}
        Err(e) => return Err(e).context("creating the member's namespace"),
    }
    if !is_flotilla_hub(client).await? {
        return service_account_token(client, member, &namespace).await;
    }
    for obj in bootstrap::member_objects(member) {
        apply(client, obj).await?;
    }
    let random: [u8; 32] = rand::random();
    let token = member_tokens::token(member, &random);
    apply(client, member_tokens::secret(member, &token)).await?;
    Ok(token)
}

/// The member agent's ServiceAccount in its namespace on a hub that is a plain Kubernetes
/// cluster.
pub const HUB_AGENT: &str = "fleet-member-agent";
/// How long a ServiceAccount token issued for an agent is valid (a year); `flotilla token
/// issue` again (or `flotilla join`) issues a new one.
pub const TOKEN_LIFETIME: Duration = Duration::from_secs(365 * 24 * 3600);

/// Whether the hub is Flotilla's own API server (its version says so), which authenticates
/// member tokens.
async fn is_flotilla_hub(client: &kube::Client) -> Result<bool> {
    let version = client
        .apiserver_version()
        .await
        .context("reaching the hub")?;
    Ok(version.git_version.contains("-flotilla."))
}

/// The agent's ServiceAccount, its RBAC, and a TokenRequest for it.
async fn service_account_token(
    client: &kube::Client,
    member: &str,
    namespace: &str,
) -> Result<String> {
    apply(
        client,
        json!({"apiVersion": "v1", "kind": "ServiceAccount",
               "metadata": {"name": HUB_AGENT, "namespace": namespace}}),
    )
    .await?;
    let subject = json!([{"kind": "ServiceAccount", "name": HUB_AGENT, "namespace": namespace}]);
    for obj in bootstrap::member_objects_for(member, subject) {
        apply(client, obj).await?;
    }
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), namespace);
    let request: TokenRequest = serde_json::from_value(json!({
        "spec": {"audiences": [], "expirationSeconds": TOKEN_LIFETIME.as_secs()}
    }))?;
    let issued = accounts
        .create_token_request(HUB_AGENT, &PostParams::default(), &request)
        .await
        .context("requesting a token for the agent's ServiceAccount")?;
    issued
        .status
        .and_then(|s| s.token)
        .context("the hub issued no token for the agent's ServiceAccount")
}

/// The hub's URL and a file holding its CA certificate, from the administrator's kubeconfig
/// at `path` (its current context). A CA given inline is found beside the kubeconfig
/// (`flotilla up` writes `ca.crt` there) or else written to `hub-ca.crt` in the current
/// directory, so the printed join command works as printed.
fn hub_of(path: &std::path::Path) -> Result<(String, Option<PathBuf>)> {
    use base64::Engine as _;
    let config = kube::config::Kubeconfig::read_from(path)
        .with_context(|| format!("reading {}", path.display()))?;
    let (cluster, server) = crate::member::current_cluster(&config)?;
    let beside = |name: &str| {
        let dir = path.parent().unwrap_or(std::path::Path::new("."));
        std::path::absolute(dir.join(name)).unwrap_or_else(|_| dir.join(name))
    };
    if let Some(file) = &cluster.certificate_authority {
        return Ok((server, Some(beside(file))));
    }
    let Some(data) = &cluster.certificate_authority_data else {
        return Ok((server, None));
    };
    let pem = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .context("decoding the hub's certificate-authority-data")?;
    let next_to_kubeconfig = beside("ca.crt");
    if std::fs::read(&next_to_kubeconfig).is_ok_and(|c| c == pem) {
        return Ok((server, Some(next_to_kubeconfig)));
    }
    let written = std::path::absolute("hub-ca.crt")?;
    if !std::fs::read(&written).is_ok_and(|c| c == pem) {
        std::fs::write(&written, &pem)
            .with_context(|| format!("writing the hub's CA to {}", written.display()))?;
        eprintln!("(The hub's CA certificate is in {}.)", written.display());
    }
    Ok((server, Some(written)))
}

/// `word` quoted for a POSIX shell when it holds anything but safe characters.
fn shell_word(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./:=@,+%".contains(c);
    if word.chars().all(safe) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

async fn revoke(args: TokenArgs) -> Result<()> {
    let client = crate::member::hub_client(args.kubeconfig).await?;
    let deleted = if is_flotilla_hub(&client).await? {
        let secrets: Api<k8s_openapi::api::core::v1::Secret> =
            Api::namespaced(client, member_tokens::TOKEN_NAMESPACE);
        secrets
            .delete(
                &member_tokens::secret_name(&args.member),
                &DeleteParams::default(),
            )
            .await
            .map(drop)
    } else {
        // Deleting the ServiceAccount invalidates every token issued for it.
        let accounts: Api<ServiceAccount> =
            Api::namespaced(client, &bootstrap::member_namespace(&args.member));
        accounts
            .delete(HUB_AGENT, &DeleteParams::default())
            .await
            .map(drop)
    };
    match deleted {
        Ok(()) => {
            eprintln!("Token of member {:?} revoked.", args.member);
            Ok(())
        }
        Err(kube::Error::Api(e)) if e.code == 404 => {
            bail!("member {:?} has no token to revoke", args.member)
        }
        Err(e) => Err(e).context("revoking the member's token"),
    }
}

/// Creates or replaces `obj` by server-side apply, as field manager `flotilla-token`.
async fn apply(client: &kube::Client, obj: Value) -> Result<()> {
    let (group, version) = match obj["apiVersion"]
        .as_str()
        .unwrap_or_default()
        .split_once('/')
    {
        Some((g, v)) => (g.to_string(), v.to_string()),
        None => (
            String::new(),
            obj["apiVersion"].as_str().unwrap_or("v1").to_string(),
        ),
    };
    let kind = obj["kind"].as_str().unwrap_or_default().to_string();
    let gvk = kube::api::GroupVersionKind::gvk(&group, &version, &kind);
    let plural = format!("{}s", kind.to_ascii_lowercase());
    let resource = ApiResource::from_gvk_with_plural(&gvk, &plural);
    let name = obj["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let api: Api<DynamicObject> = match obj["metadata"]["namespace"].as_str() {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &resource),
        None => Api::all_with(client.clone(), &resource),
    };
    api.patch(
        &name,
        &PatchParams::apply("flotilla-token").force(),
        &Patch::Apply(&obj),
    )
    .await
    .with_context(|| format!("applying {kind} {name}"))?;
    Ok(())
}

/// Member names are DNS labels, as MemberCluster names are.
fn validate_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if !ok {
        bail!("member name {name:?} must be a DNS label (lower-case letters, digits and '-')");
    }
    Ok(())
}
