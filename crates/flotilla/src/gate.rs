//! `flotilla gate approve NAME` and `flotilla gate list`: `az fleet gate`'s conveniences over
//! the `Gate`s an update run creates when it reaches a stage's or group's gate.
//!
//! `approve` sets a Pending gate's `status.state` to `Completed` through the status
//! subresource, the patch a user gives kubectl (`kubectl patch gate NAME --type=merge
//! -p '{"status":{"state":"Completed"}}' --subresource=status`), guarded by the resourceVersion
//! read so a gate skipped meanwhile is not approved. A gate already Completed or Skipped, or
//! missing, is refused. `list` prints the gates, optionally only one state's or one run's.

use std::path::PathBuf;

use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, Subcommand, ValueEnum};
use flotilla_api::updates::gate::{GATE_RUN_LABEL, Gate, GateState};
use kube::api::{ListParams, Patch, PatchParams};
use kube::{Api, ResourceExt};
use serde::Serialize;
use serde_json::{Value, json};

use crate::updaterun::{FIELD_MANAGER, refused};

/// How kubectl names the kind in its messages (`gate.updates.flotilla.dev/<name>`).
pub const KUBECTL_KIND: &str = "gate.updates.flotilla.dev";

/// How many times the read-and-patch is retried when the gate changes in between.
const ATTEMPTS: usize = 5;

/// What `flotilla gate` does.
#[derive(Debug, Subcommand)]
pub enum GateCommand {
    /// Approve a Pending gate (set its state Completed) so its update run goes on.
    Approve(ApproveArgs),
    /// List gates: their run, stage, group, timing and state.
    List(ListArgs),
}

/// Arguments of `flotilla gate approve`.
#[derive(Debug, Args)]
pub struct ApproveArgs {
    /// The Gate (`flotilla gate list --state Pending` lists those waiting).
    pub name: String,
    /// The hub's kubeconfig; default `$KUBECONFIG`, else `.flotilla/kubeconfig`.
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
}

/// The `--state` values of `gate list`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "PascalCase")]
pub enum GateStateArg {
    /// Waiting for a person (or for its scheduled start).
    Pending,
    /// Passed without approval: its group or stage was skipped.
    Skipped,
    /// Approved, or its scheduled start came.
    Completed,
}

impl From<GateStateArg> for GateState {
    fn from(arg: GateStateArg) -> Self {
        match arg {
            GateStateArg::Pending => GateState::Pending,
            GateStateArg::Skipped => GateState::Skipped,
            GateStateArg::Completed => GateState::Completed,
        }
    }
}

/// Arguments of `flotilla gate list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only gates in this state.
    #[arg(long, value_enum)]
    pub state: Option<GateStateArg>,
    /// Only the gates of this UpdateRun.
    #[arg(long, value_name = "RUN")]
    pub update_run: Option<String>,
    /// The hub's kubeconfig; default `$KUBECONFIG`, else `.flotilla/kubeconfig`.
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
}

/// Runs `flotilla gate`.
pub async fn run(command: GateCommand) -> Result<()> {
    match command {
        GateCommand::Approve(args) => approve(args).await,
        GateCommand::List(args) => list(args).await,
    }
}

/// Approves gate `args.name`, reading it again if it changes before the write lands.
async fn approve(args: ApproveArgs) -> Result<()> {
    let api = Api::<Gate>::all(crate::member::hub_client(args.kubeconfig).await?);
    let name = &args.name;
    let params = PatchParams {
        field_manager: Some(FIELD_MANAGER.to_string()),
        ..Default::default()
    };
    for _ in 0..ATTEMPTS {
        let Some(gate) = api.get_opt(name).await.context("reaching the hub")? else {
            bail!("Gate {name:?} not found on the hub (`flotilla gate list` lists them)");
        };
        let patch = approval(&gate).map_err(|e| anyhow!(e))?;
        match api.patch_status(name, &params, &Patch::Merge(&patch)).await {
            Ok(_) => {
                println!("{KUBECTL_KIND}/{name} approved");
                return Ok(());
            }
            // The gate changed since it was read: read it again.
            Err(kube::Error::Api(status)) if status.code == 409 => continue,
            Err(kube::Error::Api(status)) => {
                bail!(refused(&format!("approve Gate {name:?}"), &status))
            }
            Err(e) => return Err(e).context("reaching the hub"),
        }
    }
    bail!("Gate {name:?} kept changing while being approved; try again")
}

/// The gate's state (Pending until its run or a person writes one).
fn state(gate: &Gate) -> GateState {
    gate.status.as_ref().map(|s| s.state).unwrap_or_default()
}

/// The status merge patch approving `gate`, guarded by its resourceVersion; refused unless
/// the gate is Pending.
pub fn approval(gate: &Gate) -> Result<Value, String> {
    let name = gate.name_any();
    match state(gate) {
        GateState::Pending => Ok(json!({
            "metadata": {"resourceVersion": gate.resource_version()},
            "status": {"state": "Completed"},
        })),
        GateState::Completed => Err(format!(
            "Gate {name:?} is already Completed: there is nothing to approve"
        )),
        GateState::Skipped => Err(format!(
            "Gate {name:?} was Skipped (its group or stage was skipped): there is nothing to approve"
        )),
    }
}

/// Prints the gates `args` selects, as a table.
async fn list(args: ListArgs) -> Result<()> {
    let api = Api::<Gate>::all(crate::member::hub_client(args.kubeconfig).await?);
    let mut params = ListParams::default();
    if let Some(run) = &args.update_run {
        params = params.labels(&format!("{GATE_RUN_LABEL}={run}"));
    }
    let gates = api.list(&params).await.context("listing gates")?.items;
    let wanted = args.state.map(GateState::from);
    let shown: Vec<&Gate> = gates
        .iter()
        .filter(|gate| wanted.is_none_or(|want| state(gate) == want))
        .collect();
    if shown.is_empty() {
        eprintln!("No gates found.");
    } else {
        print!("{}", table(&shown));
    }
    Ok(())
}

/// A unit enum's API name (its serde name), for the table.
fn api_name(value: &impl Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(Value::String(name)) => name,
        _ => String::new(),
    }
}

/// The gates as kubectl prints a table: NAME TYPE UPDATE-RUN STAGE GROUP TIMING STATE, columns
/// padded to their widest cell and three spaces apart.
pub fn table(gates: &[&Gate]) -> String {
    let mut rows = vec![
        [
            "NAME",
            "TYPE",
            "UPDATE-RUN",
            "STAGE",
            "GROUP",
            "TIMING",
            "STATE",
        ]
        .map(str::to_string),
    ];
    for gate in gates {
        let target = &gate.spec.target;
        rows.push([
            gate.name_any(),
            api_name(&gate.spec.gate_type),
            target.update_run.clone(),
            target.stage.clone(),
            target.group.clone().unwrap_or_else(|| "<none>".to_string()),
            api_name(&target.timing),
            api_name(&state(gate)),
        ]);
    }
    let mut widths = [0; 7];
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.len());
        }
    }
    let mut out = String::new();
    for row in &rows {
        let cells: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(cell, width)| format!("{cell:width$}"))
            .collect();
        out.push_str(cells.join("   ").trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(yaml: &str) -> Gate {
        serde_saphyr::from_str(yaml).unwrap()
    }

    fn stage_gate(state: &str) -> Gate {
        gate(&format!(
            r#"
apiVersion: updates.flotilla.dev/v1beta1
kind: Gate
metadata: {{name: r.canary.after, resourceVersion: "12"}}
spec:
  gateType: Approval
  target: {{updateRun: r, stage: canary, timing: After}}
status: {{state: {state}}}
"#
        ))
    }

    #[test]
    fn a_pending_gate_is_approved_through_its_status_at_the_version_read() {
        assert_eq!(
            approval(&stage_gate("Pending")).unwrap(),
            json!({"metadata": {"resourceVersion": "12"}, "status": {"state": "Completed"}})
        );
    }

    #[test]
    fn completed_and_skipped_gates_are_refused() {
        assert_eq!(
            approval(&stage_gate("Completed")).unwrap_err(),
            r#"Gate "r.canary.after" is already Completed: there is nothing to approve"#
        );
        assert_eq!(
            approval(&stage_gate("Skipped")).unwrap_err(),
            r#"Gate "r.canary.after" was Skipped (its group or stage was skipped): there is nothing to approve"#
        );
    }

    #[test]
    fn the_table_names_run_stage_group_timing_and_state() {
        let group_gate = gate(
            r#"
apiVersion: updates.flotilla.dev/v1beta1
kind: Gate
metadata: {name: r.prod.b.before}
spec:
  gateType: ScheduledStart
  target: {updateRun: r, stage: prod, group: b, timing: Before}
"#,
        );
        let stage_gate = stage_gate("Completed");
        assert_eq!(
            table(&[&stage_gate, &group_gate]),
            "\
NAME              TYPE             UPDATE-RUN   STAGE    GROUP    TIMING   STATE
r.canary.after    Approval         r            canary   <none>   After    Completed
r.prod.b.before   ScheduledStart   r            prod     b        Before   Pending
"
        );
    }
}
