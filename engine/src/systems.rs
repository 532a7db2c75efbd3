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
    record(&step, &mut log.0);
}

/// Appends one resolved stage to a run's records.
fn record(step: &agora_environments::Step, log: &mut crate::records::RunRecords) {
    log.steps += 1;
    let n = log.steps;
    for d in &step.decisions {
        log.decisions.push(DecisionRecord {
            step: n,
            round: step.round,
            seat: d.agent as u32,
            role: d.role.as_str(),
            action: d.action.clone(),
            value: d.value,
            scale: d.scale,
            context: d.context,
        });
    }
    for &(seat, payoff) in &step.payoffs {
        log.payoffs.push(PayoffRecord { step: n, round: step.round, seat: seat as u32, payoff });
    }
    if let Some(i) = &step.interaction {
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

/// Plays stage after stage while every decision is ready at once (classical policies): the
/// four phases of each stage in the order the two stage schedules run them, with the same
/// environment calls, the same streams and the same records, in one system run instead of two
/// schedule runs per stage. It stops at the end of the game, at a fault, or at a stage with a
/// deferred decision: that stage is left open exactly as [`observe_environment`] and
/// [`collect_decisions`] leave it (the seats asked, the ready actions chosen, the deferred
/// ones parked), for the resolve schedule to finish once the answers are supplied.
#[expect(clippy::too_many_arguments, reason = "one system reads every resource of a stage")]
pub fn play_ready_stages(
    mut env: ResMut<Env>,
    mut rng: ResMut<RunRng>,
    seats: Res<Seats>,
    mut agents: Query<(&Seat, &mut Agent, &mut AgentRng)>,
    mut chosen: Query<&mut Chosen>,
    mut open: ResMut<OpenRequests>,
    deferred: Res<DeferredDecisions>,
    mut fault: ResMut<Fault>,
    mut log: ResMut<Log>,
) {
    // Every seat's policy and stream, looked up once for the whole run, not per decision, and
    // marked changed once here rather than at every decision.
    let mut by_seat: Vec<Option<(&mut Agent, &mut AgentRng)>> = Vec::new();
    by_seat.resize_with(seats.0.len(), || None);
    for (seat, agent, stream) in agents.iter_mut() {
        if let Some(slot) = by_seat.get_mut(seat.0) {
            *slot = Some((agent.into_inner(), stream.into_inner()));
        }
    }
    // The stage's requests, actions and step, their memory reused from stage to stage.
    let mut requests = Vec::new();
    let mut actions: Vec<(usize, agora_environments::Action)> = Vec::new();
    let mut step = agora_environments::Step::default();
    while !env.0.is_done() {
        env.0.pending_into(&mut rng.0, &mut requests);
        actions.clear();
        let mut waiting = false;
        let stale = |actions: &[(usize, agora_environments::Action)]| agora_environments::EnvError::ActionMismatch {
            expected: requests.iter().map(|q| q.agent).collect(),
            got: actions.iter().map(|(s, _)| *s).collect(),
        };
        // A ready action of a stage that waits goes where the resolve schedule reads it.
        let mut choose = |seat: usize, action| {
            if let Ok(mut c) = chosen.get_mut(seats.0[seat]) {
                c.0 = Some(action);
            }
        };
        for (i, r) in requests.iter().enumerate() {
            // A seat asked twice in one stage answers once in the stepped schedules, and the
            // stage then fails for want of its second answer: the same failure here.
            if !waiting && requests[..i].iter().any(|q| q.agent == r.agent) {
                fault.0 = Some(stale(&actions));
                return;
            }
            let Some((agent, stream)) = by_seat.get_mut(r.agent).and_then(Option::as_mut) else {
                if !waiting {
                    fault.0 = Some(stale(&actions));
                    return;
                }
                continue;
            };
            match agent.0.decide(&r.observation, &mut stream.0) {
                Decision::Ready(action) if !waiting => actions.push((r.agent, action)),
                Decision::Ready(action) => choose(r.agent, action),
                Decision::Deferred(future) => {
                    if !waiting {
                        // The stage waits: it continues as the stepped schedules play it.
                        waiting = true;
                        open.0 = requests.iter().map(|q| q.agent).collect();
                        for (seat, action) in actions.drain(..) {
                            choose(seat, action);
                        }
                    }
                    deferred.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push((r.agent, future));
                }
            }
        }
        if waiting {
            return;
        }
        if let Err(e) = env.0.resolve_into(&actions, &mut rng.0, &mut step) {
            fault.0 = Some(e);
            return;
        }
        for (seat, fb) in &step.feedback {
            if let Some((agent, _)) = by_seat.get_mut(*seat).and_then(Option::as_mut) {
                agent.0.update(fb);
            }
        }
        record(&step, &mut log.0);
    }
}

/// Schedule of a run whose decisions are all ready at once: every stage in one pass.
#[derive(ScheduleLabel, Debug, Clone, PartialEq, Eq, Hash)]
pub struct PlaySchedule;

/// Builds the schedule that plays a run's ready stages ([`play_ready_stages`]).
pub fn build_play_schedule() -> Schedule {
    let mut play = Schedule::new(PlaySchedule);
    play.set_executor_kind(bevy_ecs::schedule::ExecutorKind::SingleThreaded);
    play.add_systems(play_ready_stages);
    play
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
