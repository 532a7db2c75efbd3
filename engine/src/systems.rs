//! The round phases and their systems.

use agora_agents::Decision;
use bevy_ecs::prelude::*;
use bevy_ecs::schedule::ScheduleLabel;

use crate::components::*;
use crate::records::{DecisionRecord, InteractionRecord, PayoffRecord};

/// The phases of one stage, run in this order.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RoundPhase {
    /// The environment says who must decide and what each is shown.
    Observe,
    /// Policies answer, now or later.
    Decide,
    /// The environment resolves the stage.
    Resolve,
    /// Agents learn the outcome; the stage is written to the log.
    Record,
}

/// Schedule of the first half of a stage: Observe → Decide.
#[derive(ScheduleLabel, Debug, Clone, PartialEq, Eq, Hash)]
pub struct DecideSchedule;

/// Schedule of the second half of a stage: Resolve → Record.
#[derive(ScheduleLabel, Debug, Clone, PartialEq, Eq, Hash)]
pub struct ResolveSchedule;

/// Asks the environment for the stage's requests and puts each observation in its agent's inbox.
pub fn observe_environment(
    mut env: ResMut<Env>,
    mut rng: ResMut<RunRng>,
    seats: Res<Seats>,
    mut open: ResMut<OpenRequests>,
    mut inboxes: Query<&mut Inbox>,
) {
    let requests = env.0.pending(&mut rng.0);
    open.0 = requests.iter().map(|r| r.agent).collect();
    for r in requests {
        if let Ok(mut inbox) = inboxes.get_mut(seats.0[r.agent]) {
            inbox.0 = Some(r.observation);
        }
    }
}

/// Asks every agent with an observation for its decision; deferred answers are parked for the
/// runner, which awaits them together with those of every other live run.
pub fn collect_decisions(
    seats: Res<Seats>,
    open: Res<OpenRequests>,
    mut agents: Query<(&Seat, &mut Agent, &mut Inbox, &mut Chosen, &mut AgentRng)>,
    deferred: Res<DeferredDecisions>,
) {
    // Only the agents asked this stage (two of 24 in the naming game), in request order; each
    // draws from its own stream, so the order never changes what is decided.
    for &s in &open.0 {
        let Ok((seat, mut agent, mut inbox, mut chosen, mut rng)) = agents.get_mut(seats.0[s]) else { continue };
        let Some(obs) = inbox.0.take() else { continue };
        match agent.0.decide(&obs, &mut rng.0) {
            Decision::Ready(action) => chosen.0 = Some(action),
            Decision::Deferred(future) => {
                deferred.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push((seat.0, future))
            }
        }
    }
}

/// Hands the chosen actions to the environment in request order.
pub fn resolve_actions(
    mut env: ResMut<Env>,
    mut rng: ResMut<RunRng>,
    seats: Res<Seats>,
    open: Res<OpenRequests>,
    mut chosen: Query<&mut Chosen>,
    mut last: ResMut<LastStep>,
    mut fault: ResMut<Fault>,
) {
    let mut actions = Vec::with_capacity(open.0.len());
    for seat in &open.0 {
        let action = chosen.get_mut(seats.0[*seat]).ok().and_then(|mut c| c.0.take());
        match action {
            Some(a) => actions.push((*seat, a)),
            None => {
                fault.0 = Some(agora_environments::EnvError::ActionMismatch {
                    expected: open.0.clone(),
                    got: actions.iter().map(|(s, _)| *s).collect(),
                });
                return;
            }
        }
    }
    match env.0.resolve(&actions, &mut rng.0) {
        Ok(step) => last.0 = Some(step),
        Err(e) => fault.0 = Some(e),
    }
}

/// Gives every agent its feedback (each policy keeps what it remembers).
pub fn deliver_feedback(last: Res<LastStep>, seats: Res<Seats>, mut agents: Query<&mut Agent>) {
    let Some(step) = &last.0 else { return };
    for (seat, fb) in &step.feedback {
        if let Ok(mut agent) = agents.get_mut(seats.0[*seat]) {
            agent.0.update(fb);
        }
    }
}

/// Appends the stage's decisions, payoffs and interaction to the log.
pub fn record_step(mut last: ResMut<LastStep>, mut log: ResMut<Log>) {
    let Some(step) = last.0.take() else { return };
    let log = &mut log.0;
    log.steps += 1;
    let n = log.steps;
    for d in step.decisions {
        log.decisions.push(DecisionRecord {
            step: n,
            round: step.round,
            seat: d.agent as u32,
            role: d.role.as_str(),
            action: d.action,
            value: d.value,
            scale: d.scale,
            context: d.context,
        });
    }
    for (seat, payoff) in step.payoffs {
        log.payoffs.push(PayoffRecord { step: n, round: step.round, seat: seat as u32, payoff });
    }
    if let Some(i) = step.interaction {
        log.interactions.push(InteractionRecord {
            t: step.round,
            a: i.a as u32,
            b: i.b as u32,
            name_a: i.name_a,
            name_b: i.name_b,
            matched: i.matched,
        });
    }
}

/// Builds the two schedules of a stage, single-threaded and with ambiguity detection on:
/// systems with conflicting access and no order would be a determinism bug.
pub fn build_schedules() -> (Schedule, Schedule) {
    use bevy_ecs::schedule::{ExecutorKind, LogLevel, ScheduleBuildSettings};
    let settings = ScheduleBuildSettings { ambiguity_detection: LogLevel::Error, ..ScheduleBuildSettings::default() };
    let mut decide = Schedule::new(DecideSchedule);
    decide.set_executor_kind(ExecutorKind::SingleThreaded);
    decide.set_build_settings(settings.clone());
    decide.configure_sets((RoundPhase::Observe, RoundPhase::Decide).chain());
    decide.add_systems((observe_environment.in_set(RoundPhase::Observe), collect_decisions.in_set(RoundPhase::Decide)));
    let mut resolve = Schedule::new(ResolveSchedule);
    resolve.set_executor_kind(ExecutorKind::SingleThreaded);
    resolve.set_build_settings(settings);
    resolve.configure_sets((RoundPhase::Resolve, RoundPhase::Record).chain());
    resolve.add_systems((
        resolve_actions.in_set(RoundPhase::Resolve),
        (deliver_feedback, record_step).chain().in_set(RoundPhase::Record),
    ));
    (decide, resolve)
}
