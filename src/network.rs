//! `agora network`: one naming or coordination game on a large network, with an optional
//! committed minority, printed as JSON (the network kernel in `agora_engine::network`).

use agora_environments::naming::network::{simulate, NetGame, NetRun, Network, Topology};

use crate::BadInput;

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum TopologyArg {
    Complete,
    Ring,
    RandomRegular,
    SmallWorld,
    ScaleFree,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum GameArg {
    /// Speaker–hearer minimal naming game (Baronchelli et al. 2006).
    MinimalNaming,
    /// The engine's simultaneous-proposal variant.
    SimultaneousNaming,
    /// Memory-window coordination (Centola & Baronchelli 2015).
    MemoryCoordination,
}

#[derive(Debug, clap::Args)]
pub struct NetworkArgs {
    /// Agents on the network (bounded by the memory the run would take).
    #[arg(long, default_value_t = 100_000)]
    pub agents: usize,
    /// How agents are linked.
    #[arg(long, value_enum, default_value = "small-world")]
    pub topology: TopologyArg,
    /// Degree of ring, random-regular and small-world networks; links per new agent (m) of
    /// scale-free ones.
    #[arg(long, default_value_t = 4)]
    pub degree: usize,
    /// Rewiring probability of the small world.
    #[arg(long, default_value_t = 0.1)]
    pub rewire: f64,
    /// The game played on the links.
    #[arg(long, value_enum, default_value = "minimal-naming")]
    pub game: GameArg,
    /// Memory of the coordination game.
    #[arg(long, default_value_t = 5)]
    pub memory: u8,
    /// Names in the pool of the naming games.
    #[arg(long, default_value_t = 10)]
    pub pool: u8,
    /// Fraction of agents committed to the alternative name (agents start on an established
    /// convention when it is above 0).
    #[arg(long, default_value_t = 0.0)]
    pub committed: f64,
    /// Interactions after which the run stops whether or not a convention has formed.
    #[arg(long, default_value_t = 10_000_000)]
    pub max_interactions: u64,
    /// Seed of the run's random streams (the network and the play).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// The most memory a network run may plan to use (Agora's bound, below the 24 GiB of the
/// machines it is built on): a larger estimate is refused before anything is allocated.
pub const MEMORY_LIMIT: u64 = 16 << 30;

/// The bytes a run of `a` needs, from the figures measured in the benchmarks (docs: Large
/// populations on networks): the population's state (3 bytes an agent for the naming games, 8
/// for memory-5 coordination, one more a step of memory) and, but for complete mixing, about
/// 17 bytes an agent per unit of degree at the peak of building the graph (66.2 at degree 4).
pub fn estimated_bytes(a: &NetworkArgs) -> u64 {
    let state: u64 = match a.game {
        GameArg::MemoryCoordination => 3 + u64::from(a.memory),
        _ => 3,
    };
    let graph: u64 = match a.topology {
        TopologyArg::Complete => 0,
        _ => 17 * a.degree.max(1) as u64,
    };
    (a.agents as u64).saturating_mul(state + graph)
}

pub fn main(a: NetworkArgs) -> anyhow::Result<()> {
    if !(0.0..=1.0).contains(&a.committed) {
        return Err(BadInput(format!("--committed {} is not a fraction in [0, 1]", a.committed)).into());
    }
    if a.agents > u32::MAX as usize {
        return Err(
            BadInput(format!("--agents {}: at most {} (agents are indexed by 32 bits)", a.agents, u32::MAX)).into()
        );
    }
    let need = estimated_bytes(&a);
    if need > MEMORY_LIMIT {
        return Err(BadInput(format!(
            "--agents {}: this network needs about {:.1} GiB, above the {:.0} GiB Agora allows a network run \
             (fewer agents, a smaller --degree, or complete mixing)",
            a.agents,
            need as f64 / f64::from(1u32 << 30),
            MEMORY_LIMIT as f64 / f64::from(1u32 << 30)
        ))
        .into());
    }
    let topology = match a.topology {
        TopologyArg::Complete => Topology::Complete,
        TopologyArg::Ring => Topology::Ring { k: a.degree },
        TopologyArg::RandomRegular => Topology::RandomRegular { d: a.degree },
        TopologyArg::SmallWorld => Topology::SmallWorld { k: a.degree, p: a.rewire },
        TopologyArg::ScaleFree => Topology::ScaleFree { m: a.degree },
    };
    let game = match a.game {
        GameArg::MinimalNaming => NetGame::MinimalNaming,
        GameArg::SimultaneousNaming => NetGame::SimultaneousNaming,
        GameArg::MemoryCoordination => NetGame::MemoryCoordination { memory: a.memory },
    };
    let bad = |e: agora_environments::naming::network::NetworkError| BadInput(e.to_string());
    let start = std::time::Instant::now();
    let net = Network::build(topology, a.agents, a.seed).map_err(bad)?;
    let built = start.elapsed().as_secs_f64();
    let committed = (a.committed * a.agents as f64).round() as usize;
    let run = NetRun {
        pool: a.pool,
        committed,
        established: committed > 0,
        ..NetRun::fresh(game, a.max_interactions, a.seed)
    };
    let start = std::time::Instant::now();
    let o = simulate(&net, &run).map_err(bad)?;
    let secs = start.elapsed().as_secs_f64();
    let out = serde_json::json!({
        "game": game.label(),
        "topology": topology.label(),
        "agents": a.agents,
        "edges": net.edges(),
        "committed": committed,
        "interactions": o.interactions,
        "consensus_at": o.converged_at,
        "convention": o.convention,
        "alternative_share": o.alternative_share,
        "match_share": o.matches as f64 / o.interactions.max(1) as f64,
        "seconds_building": built,
        "seconds_playing": secs,
        "interactions_per_second": o.interactions as f64 / secs.max(1e-9),
        "state_bytes": o.state_bytes,
        "network_bytes": net.heap_bytes(),
    });
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}
