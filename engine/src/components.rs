//! Components and resources of a run's world.

use std::sync::Mutex;

use agora_agents::{DecisionFuture, Policy};
use agora_environments::{Action, Environment, Observation, Step};
use bevy_ecs::prelude::*;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::records::RunRecords;

/// Seat of an agent in the population.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seat(pub usize);

/// The agent's decision rule.
#[derive(Component)]
pub struct Agent(pub Box<dyn Policy>);

/// Marks a committed-minority agent.
#[derive(Component)]
pub struct Committed;

/// The observation waiting for this agent's decision in the current stage.
#[derive(Component, Default)]
pub struct Inbox(pub Option<Observation>);

/// The agent's action in the current stage, once decided.
#[derive(Component, Default)]
pub struct Chosen(pub Option<Action>);

/// The agent's own random stream, derived from the run seed and its seat, so that the order in
/// which agents are asked never changes what they draw.
#[derive(Component)]
pub struct AgentRng(pub Xoshiro256PlusPlus);

/// The game.
#[derive(Resource)]
pub struct Env(pub Box<dyn Environment>);

/// The run's environment stream: pairing, role assignment, schedules.
#[derive(Resource)]
pub struct RunRng(pub Xoshiro256PlusPlus);

/// Entities by seat.
#[derive(Resource, Default)]
pub struct Seats(pub Vec<Entity>);

/// Seats asked for a decision in the current stage, in request order.
#[derive(Resource, Default)]
pub struct OpenRequests(pub Vec<usize>);

/// Decisions that will arrive later (LLM calls), with their seats. A mutex makes the boxed
/// futures shareable as a resource; only the runner's thread touches them.
#[derive(Resource, Default)]
pub struct DeferredDecisions(pub Mutex<Vec<(usize, DecisionFuture)>>);

/// The stage just resolved, for the Record phase.
#[derive(Resource, Default)]
pub struct LastStep(pub Option<Step>);

/// Everything recorded so far.
#[derive(Resource)]
pub struct Log(pub RunRecords);

/// A failure raised inside a system, picked up by the runner after the schedule ran.
#[derive(Resource, Default)]
pub struct Fault(pub Option<agora_environments::EnvError>);
