//! One run: its world and the two halves of a stage.

use crate::seed::derive;
use crate::spec::RunSpec;
use agora_agents::llm::TranscriptSink;
use agora_agents::{DecisionFuture, Policy};
use agora_environments::Action;
use bevy_ecs::prelude::*;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::components::*;
use crate::error::EngineError;
use crate::pool::Pool;
use crate::records::{AgentRecord, RunRecords};
use crate::systems::{build_play_schedule, build_schedules};

/// A run in progress: a bevy_ecs world with the environment, the agents and their streams.
pub struct RunWorld {
    world: World,
    decide: Schedule,
    resolve: Schedule,
    /// Plays ready stages in one pass ([`crate::systems::play_ready_stages`]).
    play: Schedule,
    key: String,
    /// Where the run's LLM seats record their model calls.
    transcripts: TranscriptSink,
}

impl RunWorld {
    /// Builds the world of a run: the environment and run stream as resources, one entity per
    /// seat with its policy, stream and inbox; agents are told what they remember before the
    /// first stage (an established convention).
    pub fn new(spec: &RunSpec) -> Result<RunWorld, EngineError> {
        RunWorld::with_key(spec, spec.key())
    }

    /// As [`RunWorld::new`], with the run key already computed (the runner has it).
    pub fn with_key(spec: &RunSpec, key: String) -> Result<RunWorld, EngineError> {
        let policies = spec.seats.iter().map(|p| p.build()).collect();
        RunWorld::with_policies(spec, key, policies, TranscriptSink::default())
    }

    /// Builds the world with the given policies, one per seat (policies that need more than
    /// their specification to exist, such as a client for a model server), and the sink their
    /// model calls are recorded in.
    pub fn with_policies(
        spec: &RunSpec,
        key: String,
        policies: Vec<Box<dyn Policy>>,
        transcripts: TranscriptSink,
    ) -> Result<RunWorld, EngineError> {
        let mut env = spec
            .environment
            .build(spec.variant)
            .map_err(|source| EngineError::Environment { run: key.clone(), source })?;
        if spec.is_probe() {
            env = Box::new(crate::probe::ProbeSession::new(env));
        }
        let Schedules { mut world, decide, resolve, play } = recycled();
        let mut log = RunRecords::new(spec, key.clone());
        let hint = (spec.environment.kind(), spec.seats.len());
        if let Some((d, p, i)) = size_hint(hint) {
            log.decisions.reserve_exact(d);
            log.payoffs.reserve_exact(p);
            log.interactions.reserve_exact(i);
        }
        let mut seats = Vec::with_capacity(spec.seats.len());
        if policies.len() != env.population() {
            return Err(EngineError::Environment {
                run: key,
                source: agora_environments::EnvError::ActionMismatch {
                    expected: (0..env.population()).collect(),
                    got: (0..policies.len()).collect(),
                },
            });
        }
        let noise = spec.noise();
        for (i, mut policy) in policies.into_iter().enumerate() {
            if noise > 0.0 {
                policy = Box::new(crate::noise::Noisy::new(policy, noise, spec.seed, i));
            }
            for fb in env.prehistory(i) {
                policy.update(&fb);
            }
            let meta = policy.meta();
            let committed = spec.committed.contains(&i);
            log.agents.push(AgentRecord { seat: i as u32, policy: meta.name, family: meta.family, committed });
            let stream = Xoshiro256PlusPlus::seed_from_u64(derive(spec.seed, &["seat", &i.to_string()]));
            let mut entity =
                world.spawn((Seat(i), Agent(policy), AgentRng(stream), Inbox::default(), Chosen::default()));
            if committed {
                entity.insert(Committed);
            }
            seats.push(entity.id());
        }
        world.insert_resource(Env(env));
        world.insert_resource(RunRng(Xoshiro256PlusPlus::seed_from_u64(spec.seed)));
        world.insert_resource(Seats(seats));
        world.insert_resource(OpenRequests::default());
        world.insert_resource(DeferredDecisions::default());
        world.insert_resource(LastStep::default());
        world.insert_resource(Fault::default());
        world.insert_resource(Log(log));
        Ok(RunWorld { world, decide, resolve, play, key, transcripts })
    }

    /// The run key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Whether the game has ended.
    pub fn is_done(&self) -> bool {
        self.world.resource::<Env>().0.is_done()
    }

    /// Runs Observe → Decide and returns the decisions that must be awaited.
    pub fn begin_stage(&mut self) -> Vec<(usize, DecisionFuture)> {
        self.decide.run(&mut self.world);
        let deferred = self.world.resource::<DeferredDecisions>();
        std::mem::take(&mut *deferred.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
    }

    /// Supplies an awaited decision.
    pub fn supply(&mut self, seat: usize, action: Action) {
        let entity = self.world.resource::<Seats>().0[seat];
        if let Some(mut chosen) = self.world.get_mut::<Chosen>(entity) {
            chosen.0 = Some(action);
        }
    }

    /// Runs Resolve → Record.
    pub fn finish_stage(&mut self) -> Result<(), EngineError> {
        self.resolve.run(&mut self.world);
        self.take_fault()
    }

    fn take_fault(&mut self) -> Result<(), EngineError> {
        match self.world.resource_mut::<Fault>().0.take() {
            Some(source) => Err(EngineError::Environment { run: self.key.clone(), source }),
            None => Ok(()),
        }
    }

    /// Plays stages while every decision is ready at once, to the end of the game or to a
    /// stage that awaits decisions, and returns those (empty once the game has ended). Such a
    /// stage is open as after [`RunWorld::begin_stage`]: supply its decisions, then
    /// [`RunWorld::finish_stage`]. The records are those the stage-by-stage calls give.
    pub fn play_ready(&mut self) -> Result<Vec<(usize, DecisionFuture)>, EngineError> {
        self.play.run(&mut self.world);
        let deferred = std::mem::take(
            &mut *self
                .world
                .resource::<DeferredDecisions>()
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        self.take_fault()?;
        Ok(deferred)
    }

    /// Plays the run to its end where every decision is synchronous. A deferred decision is an
    /// error here: such runs go through the runner.
    pub fn run_to_end(mut self) -> Result<RunRecords, EngineError> {
        let deferred = self.play_ready()?;
        if let Some((seat, _)) = deferred.first() {
            return Err(EngineError::Decision {
                run: self.key.clone(),
                seat: *seat,
                source: agora_agents::AgentError::Failed("asynchronous decision outside the runner".into()),
            });
        }
        Ok(self.into_records())
    }

    /// The records of a finished run.
    pub fn into_records(mut self) -> RunRecords {
        let mut log = self
            .world
            .remove_resource::<Log>()
            .map(|l| l.0)
            .expect("invariant: the log resource lives as long as the run");
        log.transcripts = self.transcripts.drain();
        log.compute_metrics();
        let hint = (log.spec.environment.kind(), log.spec.seats.len());
        let sizes = (log.decisions.len(), log.payoffs.len(), log.interactions.len());
        let mut hints = SIZES.take_any().unwrap_or_default();
        if let Some(i) = hints.0.iter().position(|(k, _)| *k == hint) {
            hints.0[i].1 = sizes;
        } else if hints.0.len() < 64 {
            hints.0.push((hint, sizes));
        }
        SIZES.give(hints);
        // Emptied before it is kept: a kept world holds nothing of its run (its policies hold
        // the model session and with it the reply cache, which must close when the study ends).
        self.world.clear_entities();
        self.world.clear_resources();
        RECYCLED.give(Schedules { world: self.world, decide: self.decide, resolve: self.resolve, play: self.play });
        log
    }
}

/// How many decisions, payoffs and interactions the last run of a game with so many seats
/// recorded: the next such run reserves as much at once, instead of growing its records by
/// doubling (each growth a copy of everything recorded so far). Runs of one game and
/// population record about as much; the records are the same either way.
#[derive(Default)]
struct SizeHints(Vec<(SizeKey, Sizes)>);

impl crate::pool::Held for SizeHints {
    fn bytes(&self) -> usize {
        self.0.capacity() * std::mem::size_of::<(SizeKey, Sizes)>()
    }
}

static SIZES: Pool<SizeHints> = Pool::new();

/// The sizes the last run of `hint`'s game and population recorded, if one is known.
fn size_hint(hint: SizeKey) -> Option<Sizes> {
    let hints = SIZES.take_any()?;
    let found = hints.0.iter().find(|(k, _)| *k == hint).map(|(_, n)| *n);
    SIZES.give(hints);
    found
}

/// A game and its number of seats.
type SizeKey = (agora_environments::EnvKind, usize);
/// Decisions, payoffs and interactions a run recorded.
type Sizes = (usize, usize, usize);

/// Finished runs leave their world and schedules here for the next run: building and
/// initialising the schedules costs more than playing a short game. A kept world is emptied of
/// entities, and every resource is inserted anew by the next run.
struct Schedules {
    world: World,
    decide: Schedule,
    resolve: Schedule,
    play: Schedule,
}

/// What a world with its schedules counts against the bound on kept memory: a nominal size
/// (their memory is not measured), so that at most a few thousand are kept.
const WORLD_BYTES: usize = 32 << 10;

impl crate::pool::Held for Schedules {
    fn bytes(&self) -> usize {
        WORLD_BYTES
    }
}

static RECYCLED: Pool<Schedules> = Pool::new();

fn recycled() -> Schedules {
    match RECYCLED.take_any() {
        Some(s) => s,
        None => {
            let (decide, resolve) = build_schedules();
            Schedules { world: World::new(), decide, resolve, play: build_play_schedule() }
        }
    }
}
