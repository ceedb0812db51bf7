//! Properties of simulated rollouts. A placement on `N` available clusters gets new
//! resources and/or moves some clusters; each step runs a round, carries its verdicts out,
//! then lets time pass while touched bindings settle (after a random delay, possibly failing
//! for a while, possibly with untrackable resources). At every step:
//!
//! - at most `maxUnavailable` of the `N` target clusters are unavailable;
//! - a round never binds beyond `N + maxSurge` holders that can become ready, and without
//!   failures the holders never exceed `N + maxSurge`;
//! - the plan does not depend on the order of the bindings, and looks again only later;
//!
//! and the rollout finishes (every cluster Bound, current and ready, the old ones gone)
//! whenever its limits allow progress. In some scenarios the new clusters' bindings are
//! created Bound where `bound_at_creation` says so, before the first round: exactly those a
//! round would have bound, and the same limits hold from then on.

use flotilla_api::conditions::{NewCondition, set_condition};
use flotilla_api::placement::BindingState;
use flotilla_api::placement::policy::{PlacementPolicy, PlacementType};
use flotilla_api::placement::strategy::RolloutStrategy;
use flotilla_placement::rollout::{
    Action, Limits, Readiness, RolloutBinding, RolloutInput, RolloutPlan, bound_at_creation,
    rollout,
};
use flotilla_placement::status::reason;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use proptest::prelude::*;

use crate::fixtures::{now, rolling};

/// The most steps a rollout may take in the simulation.
const MAX_STEPS: usize = 400;
/// How much time passes per step.
const STEP: SignedDuration = SignedDuration::from_secs(20);

/// A simulated placement's shape.
#[derive(Clone, Debug)]
struct Scenario {
    /// `N`.
    n: usize,
    /// How many of the `N` clusters move to new clusters.
    moved: usize,
    /// Whether the resources change (every Bound binding becomes stale).
    new_resources: bool,
    /// `maxUnavailable` and `maxSurge` as written.
    max_unavailable: IntOrString,
    max_surge: IntOrString,
    /// 0: PickAll, 1: PickN, 2: PickFixed.
    placement_type: u8,
    /// `unavailablePeriodSeconds`.
    period: i32,
    /// Whether touched bindings may fail for a while before they recover.
    failures: bool,
    /// Whether the new clusters' bindings are created Bound where `bound_at_creation` says.
    born_bound: bool,
    /// The random stream settling draws from.
    noise: Vec<u8>,
}

fn limit(n: usize) -> impl Strategy<Value = IntOrString> {
    prop_oneof![
        (0..=n as i32 + 1).prop_map(IntOrString::Int),
        prop::sample::select(vec![0u8, 10, 25, 34, 50, 100])
            .prop_map(|p| IntOrString::String(format!("{p}%"))),
    ]
}

fn scenario() -> impl Strategy<Value = Scenario> {
    (1usize..=6).prop_flat_map(|n| {
        (
            Just(n),
            0..=n,
            any::<bool>(),
            limit(n),
            limit(n),
            0u8..3,
            prop::sample::select(vec![0, 30, 60, 90]),
            any::<bool>(),
            any::<bool>(),
            prop::collection::vec(any::<u8>(), 16..64),
        )
            .prop_map(
                |(
                    n,
                    moved,
                    new_resources,
                    max_unavailable,
                    max_surge,
                    placement_type,
                    period,
                    failures,
                    born_bound,
                    noise,
                )| Scenario {
                    n,
                    moved,
                    new_resources: new_resources || moved == 0,
                    max_unavailable,
                    max_surge,
                    placement_type,
                    period,
                    failures,
                    born_bound,
                    noise,
                },
            )
    })
}

/// How a touched binding settles.
#[derive(Clone, Debug)]
struct Settling {
    /// Steps before the member reports.
    delay: u8,
    /// Steps it then reports a failure.
    failing: u8,
    /// Whether its resources' availability cannot be tracked.
    untrackable: bool,
}

/// A simulated binding.
#[derive(Clone, Debug)]
struct SimBinding {
    name: String,
    cluster: String,
    state: BindingState,
    current: bool,
    /// Steps until a deleting binding is gone.
    deleting: Option<u8>,
    generation: i64,
    conditions: Vec<Condition>,
    settling: Option<Settling>,
}

/// The simulated world.
struct Sim {
    scenario: Scenario,
    policy: PlacementPolicy,
    now: Timestamp,
    bindings: Vec<SimBinding>,
    draws: usize,
}

impl Sim {
    fn new(scenario: Scenario) -> Sim {
        let (n, moved) = (scenario.n, scenario.moved);
        let live = |i: usize| format!("m{i}");
        let mut bindings = Vec::new();
        let binding = |cluster: String, state, current| SimBinding {
            name: format!("crp-{cluster}"),
            cluster,
            state,
            current,
            deleting: None,
            generation: 1,
            conditions: Vec::new(),
            settling: None,
        };
        for i in 0..n {
            let state = if i < moved {
                BindingState::Unscheduled
            } else {
                BindingState::Bound
            };
            bindings.push(binding(live(i), state, !scenario.new_resources));
        }
        for i in 0..moved {
            bindings.push(binding(format!("new{i}"), BindingState::Scheduled, false));
        }
        let targets: Vec<String> = (moved..n)
            .map(live)
            .chain((0..moved).map(|i| format!("new{i}")))
            .collect();
        let policy = match scenario.placement_type {
            0 => PlacementPolicy::default(),
            1 => PlacementPolicy {
                placement_type: Some(PlacementType::PickN),
                number_of_clusters: Some(n as i32),
                ..Default::default()
            },
            _ => PlacementPolicy {
                placement_type: Some(PlacementType::PickFixed),
                cluster_names: Some(targets),
                ..Default::default()
            },
        };
        let mut sim = Sim {
            scenario,
            policy,
            now: now(),
            bindings,
            draws: 0,
        };
        for i in 0..sim.bindings.len() {
            if sim.bindings[i].state != BindingState::Scheduled {
                sim.report(i, "Available", "True", reason::ALL_WORK_ARE_AVAILABLE);
            }
        }
        sim
    }

    /// The next random byte.
    fn draw(&mut self, below: u8) -> u8 {
        let noise = &self.scenario.noise;
        let byte = noise[self.draws % noise.len()].wrapping_add((self.draws / noise.len()) as u8);
        self.draws += 1;
        byte % below
    }

    fn period(&self) -> SignedDuration {
        SignedDuration::from_secs(i64::from(self.scenario.period))
    }

    fn limits(&self) -> Limits {
        let strategy = rolling(
            Some(self.scenario.max_unavailable.clone()),
            Some(self.scenario.max_surge.clone()),
        );
        Limits::resolve(strategy.rolling_update.as_ref(), self.scenario.n).unwrap()
    }

    fn views(&self) -> Vec<RolloutBinding> {
        self.bindings
            .iter()
            .map(|b| RolloutBinding {
                name: b.name.clone(),
                cluster: b.cluster.clone(),
                state: b.state,
                deleting: b.deleting.is_some(),
                up_to_date: b.state == BindingState::Bound && b.current,
                readiness: Readiness::judge(&b.conditions, b.generation, self.now, self.period()),
            })
            .collect()
    }

    fn plan(&self, views: &[RolloutBinding]) -> RolloutPlan {
        rollout(&self.input(&self.strategy(), views)).unwrap()
    }

    fn strategy(&self) -> RolloutStrategy {
        rolling(
            Some(self.scenario.max_unavailable.clone()),
            Some(self.scenario.max_surge.clone()),
        )
    }

    fn input<'a>(
        &'a self,
        strategy: &'a RolloutStrategy,
        views: &'a [RolloutBinding],
    ) -> RolloutInput<'a> {
        RolloutInput {
            policy: &self.policy,
            strategy: Some(strategy),
            bindings: views,
            now: self.now,
        }
    }

    /// The Scheduled bindings as if the scheduler were creating them now: those
    /// `bound_at_creation` picks are created Bound (carried out as a bind); returns their
    /// names and the plan a round over every binding would make.
    fn create_bound(&mut self) -> (Vec<String>, RolloutPlan) {
        let views = self.views();
        let (arriving, existing): (Vec<RolloutBinding>, Vec<RolloutBinding>) = views
            .iter()
            .cloned()
            .partition(|v| v.state == BindingState::Scheduled);
        let strategy = self.strategy();
        let born = bound_at_creation(&self.input(&strategy, &existing), &arriving).unwrap();
        let plan = self.plan(&views);
        for i in 0..self.bindings.len() {
            if born.contains(&self.bindings[i].name) {
                self.start(i);
            }
        }
        (born, plan)
    }

    /// Sets condition `type_` on binding `i` for its generation, at the current time.
    fn report(&mut self, i: usize, type_: &str, status: &str, reason: &str) {
        let b = &mut self.bindings[i];
        let condition = NewCondition {
            type_,
            status,
            reason,
            message: String::new(),
            observed_generation: Some(b.generation),
        };
        b.conditions
            .retain(|c| c.observed_generation == Some(b.generation) || c.type_ != type_);
        set_condition(&mut b.conditions, condition, self.now);
    }

    /// Carries out `plan`.
    fn apply(&mut self, plan: &RolloutPlan) {
        for i in 0..self.bindings.len() {
            match plan.action(&self.bindings[i].name) {
                Some(Action::Bind | Action::Update) => self.start(i),
                Some(Action::Delete) => {
                    let steps = self.draw(3);
                    self.bindings[i].deleting = Some(steps);
                }
                _ => {}
            }
        }
    }

    /// Binds binding `i` to the latest resources; it settles later.
    fn start(&mut self, i: usize) {
        let settling = Settling {
            delay: self.draw(3),
            failing: if self.scenario.failures {
                self.draw(3)
            } else {
                0
            },
            untrackable: self.draw(2) == 0,
        };
        let b = &mut self.bindings[i];
        b.state = BindingState::Bound;
        b.current = true;
        b.generation += 1;
        b.settling = Some(settling);
    }

    /// Lets one step of time pass.
    fn tick(&mut self) {
        self.now += STEP;
        self.bindings.retain(|b| b.deleting != Some(0));
        for i in 0..self.bindings.len() {
            if let Some(steps) = self.bindings[i].deleting.as_mut() {
                *steps -= 1;
            }
            let Some(mut settling) = self.bindings[i].settling.take() else {
                continue;
            };
            if settling.delay > 0 {
                settling.delay -= 1;
                self.bindings[i].settling = Some(settling);
            } else if settling.failing > 0 {
                settling.failing -= 1;
                self.report(
                    i,
                    "Applied",
                    "False",
                    reason::NOT_ALL_WORK_HAVE_BEEN_APPLIED,
                );
                self.bindings[i].settling = Some(settling);
            } else {
                let why = if settling.untrackable {
                    reason::NOT_ALL_WORK_ARE_AVAILABILITY_TRACKABLE
                } else {
                    reason::ALL_WORK_ARE_AVAILABLE
                };
                self.report(i, "Applied", "True", reason::ALL_WORK_HAVE_BEEN_APPLIED);
                self.report(i, "Available", "True", why);
            }
        }
    }

    /// Whether every target cluster is Bound, current and ready and nothing else is left.
    fn done(&self, views: &[RolloutBinding]) -> bool {
        views.len() == self.scenario.n
            && views.iter().all(|v| {
                v.state == BindingState::Bound
                    && v.up_to_date
                    && !v.deleting
                    && v.readiness.is_ready()
            })
    }
}

/// Available clusters: ready holders not being deleted.
fn available(views: &[RolloutBinding]) -> usize {
    views
        .iter()
        .filter(|v| v.state != BindingState::Scheduled && !v.deleting && v.readiness.is_ready())
        .count()
}

/// Checks one round's plan against the state it was made for.
fn check_round(
    sim: &Sim,
    views: &[RolloutBinding],
    plan: &RolloutPlan,
) -> Result<(), TestCaseError> {
    let limits = sim.limits();
    prop_assert_eq!(plan.limits, Some(limits));
    let can_become_ready = views
        .iter()
        .filter(|v| v.state != BindingState::Scheduled && v.readiness.can_become_ready())
        .count();
    let binds = plan.names(|a| matches!(a, Action::Bind)).len();
    let room = (limits.target + limits.max_surge).saturating_sub(can_become_ready);
    prop_assert!(binds <= room, "bound {} with room for {}", binds, room);
    if let Some(at) = plan.recheck_at {
        prop_assert!(at > sim.now, "recheck at {} is not after {}", at, sim.now);
    }
    let mut reversed = views.to_vec();
    reversed.reverse();
    prop_assert_eq!(&sim.plan(&reversed), plan);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn rollouts_keep_their_limits_at_every_step_and_finish(scenario in scenario()) {
        let mut sim = Sim::new(scenario.clone());
        let limits = sim.limits();
        let floor = limits.target.saturating_sub(limits.max_unavailable);
        let progress = limits.max_unavailable > 0 || (!scenario.new_resources && limits.max_surge > 0);
        let mut finished = false;
        if scenario.born_bound {
            let (born, plan) = sim.create_bound();
            prop_assert_eq!(born.iter().map(String::as_str).collect::<Vec<_>>(), plan.names(|a| matches!(a, Action::Bind)));
        }
        for step in 0..MAX_STEPS {
            let views = sim.views();
            prop_assert!(available(&views) >= floor, "step {}: {} available, floor {}", step, available(&views), floor);
            if !scenario.failures {
                let holders = views.iter().filter(|v| v.state != BindingState::Scheduled).count();
                prop_assert!(holders <= limits.target + limits.max_surge, "step {}: {} holders", step, holders);
            }
            if sim.done(&views) {
                finished = true;
                break;
            }
            let plan = sim.plan(&views);
            check_round(&sim, &views, &plan)?;
            sim.apply(&plan);
            let after = sim.views();
            prop_assert!(available(&after) >= floor, "step {} after the round: {} available, floor {}", step, available(&after), floor);
            sim.tick();
        }
        if progress {
            prop_assert!(finished, "not finished after {} steps: {:?}", MAX_STEPS, sim.bindings);
        }
    }
}
