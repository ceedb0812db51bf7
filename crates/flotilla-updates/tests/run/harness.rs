//! A modelled fleet for the run core: the member upgrades, gates and windows a controller
//! would observe, updated from the actions each pass returns.

use std::collections::{BTreeMap, HashMap, HashSet};

use flotilla_api::updates::gate::GateState;
use flotilla_api::updates::member_upgrade::UpgradePhase;
use flotilla_api::updates::strategy::UpdateRunStrategy;
use flotilla_api::updates::update_run::{
    MemberStatus, RunAction, SkipTarget, UpdateRunStatus, UpdateState,
};
use flotilla_updates::run::init::{PlanMember, plan};
use flotilla_updates::run::{
    Action, GateReport, Observed, Outcome, Readiness, UpgradeOrder, UpgradeReport, WindowFacts,
    advance,
};
use jiff::{SignedDuration, Timestamp};
use serde_json::json;

/// The run under test and the world it sees.
pub struct World {
    pub now: Timestamp,
    pub status: UpdateRunStatus,
    pub action: RunAction,
    pub attempt: u32,
    pub skip: Vec<SkipTarget>,
    pub windows: HashMap<String, WindowFacts>,
    pub upgrades: HashMap<(String, String), UpgradeReport>,
    /// Which member each upgrade is for.
    pub upgrade_member: HashMap<(String, String), String>,
    pub gates: HashMap<String, GateReport>,
    /// Readiness per member (default: upgrade).
    pub ready: HashMap<String, Readiness>,
    /// Members whose upgrades fail.
    pub failing: HashSet<String>,
    /// Every action, in order.
    pub log: Vec<Action>,
    pub last: Outcome,
}

pub fn t0() -> Timestamp {
    "2026-11-21T00:00:00Z".parse().unwrap()
}

/// Members `name → group label`.
pub fn members(groups: &[(&str, &str)]) -> Vec<PlanMember> {
    groups
        .iter()
        .map(|(name, group)| PlanMember {
            name: name.to_string(),
            labels: BTreeMap::from([("updates.flotilla.dev/group".to_string(), group.to_string())]),
        })
        .collect()
}

pub fn strategy(value: serde_json::Value) -> UpdateRunStrategy {
    serde_json::from_value(value).unwrap()
}

/// Two stages of two groups with a wait between: the acceptance scenario's shape.
pub fn two_stage_strategy() -> UpdateRunStrategy {
    strategy(json!({"stages": [
        {"name": "test", "groups": [{"name": "a"}, {"name": "b"}], "afterStageWaitInSeconds": 3600},
        {"name": "prod", "groups": [{"name": "c"}, {"name": "d"}]}
    ]}))
}

impl World {
    pub fn new(strategy: UpdateRunStrategy, members: &[PlanMember]) -> World {
        let stages = plan(&strategy, members).expect("plan");
        World {
            now: t0(),
            status: UpdateRunStatus {
                strategy: Some(strategy),
                stages,
                ..Default::default()
            },
            action: RunAction::Run,
            attempt: 0,
            skip: Vec::new(),
            windows: HashMap::new(),
            upgrades: HashMap::new(),
            upgrade_member: HashMap::new(),
            gates: HashMap::new(),
            ready: HashMap::new(),
            failing: HashSet::new(),
            log: Vec::new(),
            last: Outcome::default(),
        }
    }

    /// One pass; its actions are carried out at once.
    pub fn pass(&mut self) -> &Outcome {
        let ready = self.ready.clone();
        let readiness = move |m: &str| {
            ready
                .get(m)
                .cloned()
                .unwrap_or(Readiness::Upgrade(UpgradeOrder {
                    kubernetes_version: Some("1.31.2".into()),
                    node_images: vec![],
                }))
        };
        let now = self.now;
        let scheduled = move |_: &flotilla_api::updates::strategy::ScheduledStartConfiguration| {
            Some(now + SignedDuration::from_hours(2))
        };
        let obs = Observed {
            now: self.now,
            run: "run",
            action: self.action,
            attempt: self.attempt,
            skip: &self.skip,
            windows: &self.windows,
            upgrades: &self.upgrades,
            gates: &self.gates,
            readiness: &readiness,
            scheduled_start: &scheduled,
        };
        let out = advance(&mut self.status, &obs);
        for action in &out.actions {
            match action {
                Action::CreateUpgrade { member, name, .. } => {
                    let key = (member.clone(), name.clone());
                    assert!(!self.upgrades.contains_key(&key), "{key:?} created twice");
                    self.upgrades.insert(
                        key.clone(),
                        UpgradeReport {
                            phase: UpgradePhase::Running,
                            message: None,
                        },
                    );
                    self.upgrade_member.insert(key, member.clone());
                }
                Action::CreateGate { name, spec } => {
                    assert!(!self.gates.contains_key(name), "gate {name} created twice");
                    self.gates.insert(
                        name.clone(),
                        GateReport {
                            state: GateState::Pending,
                            scheduled_start: spec.scheduled_start_time.as_ref().map(|t| t.0),
                        },
                    );
                }
                Action::SetGateState { name, state } => {
                    if let Some(gate) = self.gates.get_mut(name) {
                        gate.state = *state;
                    }
                }
            }
        }
        self.log.extend(out.actions.iter().cloned());
        self.last = out;
        &self.last
    }

    /// Every running upgrade finishes (failing members fail).
    pub fn finish_upgrades(&mut self) {
        for (key, report) in &mut self.upgrades {
            if report.phase == UpgradePhase::Running {
                let member = &self.upgrade_member[key];
                if self.failing.contains(member) {
                    report.phase = UpgradePhase::Failed;
                    report.message = Some(format!("{member}: node drain timed out"));
                } else {
                    report.phase = UpgradePhase::Succeeded;
                }
            }
        }
    }

    pub fn approve(&mut self, gate: &str) {
        self.gates.get_mut(gate).expect("gate exists").state = GateState::Completed;
    }

    pub fn advance_time(&mut self, by: SignedDuration) {
        self.now += by;
    }

    /// Passes and finishes upgrades until the run stops changing or `limit` passes; jumps
    /// time to each recheck.
    pub fn run_to_end(&mut self, limit: usize) {
        for _ in 0..limit {
            self.pass();
            if self.status.progress.state.is_final() {
                return;
            }
            self.finish_upgrades();
            if let Some(at) = self.last.recheck_at
                && at > self.now
                && self.last.actions.is_empty()
            {
                self.now = at;
            }
        }
    }

    pub fn member(&self, name: &str) -> &MemberStatus {
        self.status
            .stages
            .iter()
            .flat_map(|s| &s.groups)
            .flat_map(|g| &g.members)
            .find(|m| m.name == name)
            .expect("member in the run")
    }

    pub fn state(&self, name: &str) -> UpdateState {
        self.member(name).progress.state
    }

    /// The members whose upgrades were created, in order.
    pub fn started(&self) -> Vec<String> {
        self.log
            .iter()
            .filter_map(|a| match a {
                Action::CreateUpgrade { member, .. } => Some(member.clone()),
                _ => None,
            })
            .collect()
    }

    pub fn stage_state(&self, stage: &str) -> UpdateState {
        self.status
            .stages
            .iter()
            .find(|s| s.name == stage)
            .unwrap()
            .progress
            .state
    }

    pub fn group_state(&self, group: &str) -> UpdateState {
        self.status
            .stages
            .iter()
            .flat_map(|s| &s.groups)
            .find(|g| g.name == group)
            .unwrap()
            .progress
            .state
    }
}
