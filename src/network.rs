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
    #[arg(long, default_value_t = 100_000)]
    pub agents: usize,
    #[arg(long, value_enum, default_value = "small-world")]
    pub topology: TopologyArg,
    /// Degree of ring, random-regular and small-world networks; links per new agent (m) of
    /// scale-free ones.
    #[arg(long, default_value_t = 4)]
    pub degree: usize,
    /// Rewiring probability of the small world.
    #[arg(long, default_value_t = 0.1)]
    pub rewire: f64,
    #[arg(long, value_enum, default_value = "minimal-naming")]
    pub game: GameArg,
    /// Memory of the coordination game.
    #[arg(long, default_value_t = 5)]
    pub memory: u8,
    #[arg(long, default_value_t = 10)]
    pub pool: u8,
    /// Fraction of agents committed to the alternative name (agents start on an established
    /// convention when it is above 0).
    #[arg(long, default_value_t = 0.0)]
    pub committed: f64,
    #[arg(long, default_value_t = 10_000_000)]
    pub max_interactions: u64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

pub fn main(a: NetworkArgs) -> anyhow::Result<()> {
    if !(0.0..=1.0).contains(&a.committed) {
        return Err(BadInput(format!("--committed {} is not a fraction in [0, 1]", a.committed)).into());
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
