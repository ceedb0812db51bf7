//! `flotilla autoupgradeprofile generate-update-run -n PROFILE`: `az fleet autoupgradeprofile
//! generate-update-run`. Builds the update run a profile's channel calls for now (on the hub's
//! clock and catalog) and creates it without starting it. Its name comes from the profile and
//! the versions, so generating again — or the profile's own trigger for the same release —
//! finds the same run, left unchanged.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use flotilla_api::updates::auto_upgrade::AUTO_UPGRADE_PROFILE_LABEL;
use flotilla_api::updates::{AutoUpgradeProfile, KubernetesVersion, NodeImageVersion, UpdateRun};
use flotilla_updates::auto_upgrade::generate_update_run;
use flotilla_updates::release::Catalog;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Api;
use kube::api::PostParams;

/// `flotilla autoupgradeprofile …` commands.
#[derive(Debug, Subcommand)]
pub enum ProfileCommand {
    /// Create (without starting) the update run the profile's channel calls for now.
    GenerateUpdateRun(GenerateArgs),
}

/// Arguments of `generate-update-run`.
#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// The AutoUpgradeProfile.
    #[arg(
        long = "profile-name",
        short = 'n',
        alias = "auto-upgrade-profile-name"
    )]
    pub name: String,
    /// The hub's kubeconfig; default `$KUBECONFIG`, else `.flotilla/kubeconfig`.
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
}

/// Runs a profile command.
pub async fn run(command: ProfileCommand) -> Result<()> {
    match command {
        ProfileCommand::GenerateUpdateRun(args) => generate(args).await,
    }
}

/// Generates the run and says whether it was created or already there.
async fn generate(args: GenerateArgs) -> Result<()> {
    let client = crate::member::hub_client(args.kubeconfig).await?;
    let profile = Api::<AutoUpgradeProfile>::all(client.clone())
        .get_opt(&args.name)
        .await?
        .with_context(|| {
            format!(
                "autoupgradeprofile {:?} not found (kubectl get autoupgradeprofiles lists them)",
                args.name
            )
        })?;
    let kubernetes: Vec<KubernetesVersion> = crate::member::list_all(&client).await?;
    let images: Vec<NodeImageVersion> = crate::member::list_all(&client).await?;
    let catalog = Catalog::new(
        kubernetes.iter().map(|k| &k.spec),
        images.iter().map(|i| &i.spec),
    );
    let now = crate::hub_clock::now(&client).await?;
    let generated = match generate_update_run(&args.name, &profile.spec, &catalog, now) {
        Ok(generated) => generated,
        Err(e) => bail!(
            "the {:?} channel of profile {} has no target now: {e}",
            profile.spec.channel,
            args.name
        ),
    };
    let run = UpdateRun {
        metadata: ObjectMeta {
            name: Some(generated.name.clone()),
            labels: Some([(AUTO_UPGRADE_PROFILE_LABEL.to_string(), args.name.clone())].into()),
            ..Default::default()
        },
        spec: generated.spec,
        status: None,
    };
    let name = &generated.name;
    match Api::<UpdateRun>::all(client)
        .create(&PostParams::default(), &run)
        .await
    {
        Ok(_) => println!("updaterun.updates.flotilla.dev/{name} created"),
        Err(kube::Error::Api(e)) if e.code == 409 => {
            println!("updaterun.updates.flotilla.dev/{name} unchanged (already generated)")
        }
        Err(e) => return Err(e).context(format!("creating update run {name}")),
    }
    println!(
        "start it with: kubectl patch updaterun {name} --type=merge -p '{{\"spec\":{{\"state\":\"Run\"}}}}'"
    );
    Ok(())
}
