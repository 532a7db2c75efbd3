//! Large classical populations on networks: the minimal naming game and the memory-window
//! coordination game with 10^4 to 10^6 agents.
//!
//! A per-run bevy_ecs world with one entity and one boxed policy per agent is the right shape
//! for 24 agents whose every decision is recorded; it is the wrong one for a million agents
//! whose individual decisions nobody stores. This module keeps the same rules as the classical
//! policies (`minimal-naming`, `memory-coordination`, `committed`) but holds the population as
//! flat arrays (structure of arrays: two bytes per agent for the naming game's inventory, six
//! for a memory of five names) and the network as a petgraph CSR graph, and records only the
//! run's outcome: interactions played, when consensus was reached, and the final shares.
//!
//! One interaction: a uniformly drawn agent meets a uniformly drawn neighbour (under complete
//! mixing, any other agent); both propose a name at once; they match or not; both update.

use petgraph::csr::Csr;
use petgraph::Undirected;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

use super::convention::ConventionWindow;

/// Names are drawn from a pool of at most this many (an inventory is a 16-bit set).
pub const MAX_POOL: u8 = 16;

/// How agents are connected.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Topology {
    /// Everyone can meet everyone: no edge list is built (10^12 edges at a million agents);
    /// the partner is drawn uniformly among the others.
    Complete,
    /// Ring lattice: each agent linked to its `k / 2` nearest neighbours on either side.
    Ring {
        /// Degree of every agent (even).
        k: usize,
    },
    /// Random `d`-regular graph by the configuration model; self-loops and repeated pairs
    /// are dropped, so a few agents end with degree below `d`.
    RandomRegular {
        /// Target degree of every agent.
        d: usize,
    },
    /// Watts–Strogatz small world: a ring lattice of degree `k` with each edge's far end
    /// rewired with probability `p` (duplicates dropped).
    SmallWorld {
        /// Degree of the starting ring lattice (even).
        k: usize,
        /// Probability that an edge is rewired.
        p: f64,
    },
    /// Barabási–Albert scale-free graph: each new agent links to `m` existing agents chosen
    /// in proportion to degree, starting from a clique of `m + 1`.
    ScaleFree {
        /// Links each new agent makes.
        m: usize,
    },
}

impl Topology {
    /// The topology and its parameters in words, for reports and error messages.
    pub fn label(&self) -> String {
        match self {
            Topology::Complete => "complete mixing".into(),
            Topology::Ring { k } => format!("ring lattice (k = {k})"),
            Topology::RandomRegular { d } => format!("random regular (d = {d})"),
            Topology::SmallWorld { k, p } => format!("small world (k = {k}, p = {p})"),
            Topology::ScaleFree { m } => format!("scale-free (m = {m})"),
        }
    }
}

/// Errors in a network or population specification.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum NetworkError {
    /// Fewer than two agents: nobody to meet.
    #[error("population {0} is too small (at least 2 agents)")]
    TooSmall(usize),
    /// More agents than a 32-bit node index can address in both edge directions.
    #[error("population {0} exceeds the 32-bit node index")]
    TooLarge(usize),
    /// A topology or run parameter is out of range; the message says which and why.
    #[error("{0}")]
    Parameter(String),
}

/// A population's contact network.
pub struct Network {
    /// How the agents are connected.
    pub topology: Topology,
    agents: usize,
    /// Every edge in both directions; `None` under complete mixing.
    graph: Option<Csr<(), (), Undirected, u32>>,
}

impl Network {
    /// Builds the network of `agents` agents, seeded.
    pub fn build(topology: Topology, agents: usize, seed: u64) -> Result<Network, NetworkError> {
        if agents < 2 {
            return Err(NetworkError::TooSmall(agents));
        }
        if agents > u32::MAX as usize / 2 {
            return Err(NetworkError::TooLarge(agents));
        }
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let n = agents as u32;
        let edges: Vec<(u32, u32)> = match topology {
            Topology::Complete => return Ok(Network { topology, agents, graph: None }),
            Topology::Ring { k } => {
                check_even_degree(k, agents)?;
                (0..n).flat_map(|i| (1..=(k / 2) as u32).map(move |j| (i, (i + j) % n))).collect()
            }
            Topology::SmallWorld { k, p } => {
                check_even_degree(k, agents)?;
                if !(0.0..=1.0).contains(&p) {
                    return Err(NetworkError::Parameter(format!("rewiring probability {p} is not in [0, 1]")));
                }
                let mut e = Vec::with_capacity(agents * k / 2);
                for i in 0..n {
                    for j in 1..=(k / 2) as u32 {
                        let mut target = (i + j) % n;
                        if rng.random_bool(p) {
                            target = rng.random_range(0..n - 1);
                            if target >= i {
                                target += 1;
                            }
                        }
                        e.push((i, target));
                    }
                }
                e
            }
            Topology::RandomRegular { d } => {
                if d == 0 || d >= agents || (agents * d) % 2 == 1 {
                    return Err(NetworkError::Parameter(format!(
                        "degree {d} with {agents} agents: need 0 < d < agents and agents × d even"
                    )));
                }
                let mut stubs: Vec<u32> = (0..n).flat_map(|i| std::iter::repeat_n(i, d)).collect();
                stubs.shuffle(&mut rng);
                stubs.chunks_exact(2).map(|c| (c[0], c[1])).collect()
            }
            Topology::ScaleFree { m } => {
                if m == 0 || m + 1 >= agents {
                    return Err(NetworkError::Parameter(format!(
                        "m = {m} with {agents} agents: need 0 < m < agents - 1"
                    )));
                }
                // `ends` holds every edge end, so a uniform draw from it is a draw in
                // proportion to degree.
                let mut e = Vec::with_capacity(agents * m);
                let mut ends: Vec<u32> = Vec::with_capacity(2 * agents * m);
                for i in 0..=m as u32 {
                    for j in 0..i {
                        e.push((j, i));
                        ends.extend([i, j]);
                    }
                }
                let mut chosen: Vec<u32> = Vec::with_capacity(m);
                for i in (m as u32 + 1)..n {
                    chosen.clear();
                    while chosen.len() < m {
                        let t = ends[rng.random_range(0..ends.len())];
                        if !chosen.contains(&t) {
                            chosen.push(t);
                        }
                    }
                    for &t in &chosen {
                        e.push((t, i));
                        ends.extend([i, t]);
                    }
                }
                e
            }
        };
        let mut both: Vec<(u32, u32)> = Vec::with_capacity(edges.len() * 2);
        for (a, b) in edges {
            if a != b {
                both.push((a, b));
                both.push((b, a));
            }
        }
        both.sort_unstable();
        both.dedup();
        let graph = Csr::from_sorted_edges(&both).map_err(|e| NetworkError::Parameter(format!("{e:?}")))?;
        if graph.node_count() != agents || (0..n).any(|a| graph.neighbors_slice(a).is_empty()) {
            return Err(NetworkError::Parameter(format!("{} left an agent without neighbours", topology.label())));
        }
        Ok(Network { topology, agents, graph: Some(graph) })
    }

    /// Number of agents.
    pub fn agents(&self) -> usize {
        self.agents
    }

    /// Undirected edges (0 under complete mixing, where none is stored).
    pub fn edges(&self) -> usize {
        self.graph.as_ref().map_or(0, |g| g.edge_count() / 2)
    }

    /// Number of neighbours of agent `a` (everyone else under complete mixing).
    pub fn degree(&self, a: u32) -> usize {
        match &self.graph {
            Some(g) => g.neighbors_slice(a).len(),
            None => self.agents - 1,
        }
    }

    /// The neighbours of agent `a`, sorted; `None` under complete mixing, where none is stored.
    pub fn neighbours(&self, a: u32) -> Option<&[u32]> {
        self.graph.as_ref().map(|g| g.neighbors_slice(a))
    }

    /// Heap bytes the network holds (row offsets and column indices).
    pub fn heap_bytes(&self) -> usize {
        self.graph.as_ref().map_or(0, |g| (g.node_count() + 1) * std::mem::size_of::<usize>() + g.edge_count() * 4)
    }

    #[inline]
    fn partner(&self, a: u32, rng: &mut Xoshiro256PlusPlus) -> u32 {
        match &self.graph {
            Some(g) => {
                let ns = g.neighbors_slice(a);
                ns[rng.random_range(0..ns.len())]
            }
            None => {
                let b = rng.random_range(0..self.agents as u32 - 1);
                b + u32::from(b >= a)
            }
        }
    }
}

fn check_even_degree(k: usize, agents: usize) -> Result<(), NetworkError> {
    if k == 0 || k % 2 == 1 || k >= agents {
        return Err(NetworkError::Parameter(format!("lattice degree {k} must be even, positive and below {agents}")));
    }
    Ok(())
}

/// The game the population plays.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum NetGame {
    /// The minimal naming game of Baronchelli et al. (2006): the first agent speaks a name
    /// from its inventory (inventing one from the pool when it is empty); if the hearer knows
    /// it, both keep only that name, otherwise the hearer learns it.
    MinimalNaming,
    /// The engine's variant (`minimal-naming` in the naming-game environment): both propose at
    /// once (a random pool name from an empty inventory); on a match both keep only that name,
    /// on a mismatch both learn the other's. It converges for a few dozen agents but not for
    /// large populations, where agents come to know the whole pool.
    SimultaneousNaming,
    /// Propose the name partners used most often in the last `memory` interactions (ties at
    /// random; a random pool name with no memory yet).
    MemoryCoordination {
        /// Interactions remembered (1 to 64).
        memory: u8,
    },
}

impl NetGame {
    /// The game in words, for reports.
    pub fn label(&self) -> String {
        match self {
            NetGame::MinimalNaming => "minimal naming game".into(),
            NetGame::SimultaneousNaming => "minimal naming game, simultaneous proposals".into(),
            NetGame::MemoryCoordination { memory } => format!("memory-{memory} coordination"),
        }
    }
}

/// When a run stops.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum StopRule {
    /// Every agent would propose the same name (its inventory is that one name, or it is the
    /// single most frequent name in its memory).
    Consensus,
    /// The naming game's convention rule ([`super::convention`]): at least `threshold` of the
    /// last `window` interactions matched; the convention is the name most matched on there.
    Window {
        /// Number of most recent interactions looked at.
        window: usize,
        /// Share of them that must have matched.
        threshold: f64,
    },
}

/// A network run's settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NetRun {
    /// The game the population plays.
    pub game: NetGame,
    /// Names 0..pool.
    pub pool: u8,
    /// Agents 0..committed always propose `alternative` and never update.
    pub committed: usize,
    /// The name the committed agents propose.
    pub alternative: u8,
    /// Every other agent starts as if name 0 were the established convention (inventory {0},
    /// memory full of 0); otherwise agents start with nothing.
    pub established: bool,
    /// Interactions after which the run stops whatever happened.
    pub max_interactions: u64,
    /// When the run stops before `max_interactions`.
    pub stop: StopRule,
    /// Seed of the run's random stream (who meets whom, what is proposed).
    pub seed: u64,
}

impl NetRun {
    /// A run from scratch: a pool of 10 names, no committed agents, no established
    /// convention, stopping at consensus or after `max_interactions`.
    pub fn fresh(game: NetGame, max_interactions: u64, seed: u64) -> NetRun {
        NetRun {
            game,
            pool: 10,
            committed: 0,
            alternative: 1,
            established: false,
            max_interactions,
            stop: StopRule::Consensus,
            seed,
        }
    }
}

/// What a network run did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NetOutcome {
    /// Interactions played.
    pub interactions: u64,
    /// The interaction at which the stop rule held, if it did.
    pub converged_at: Option<u64>,
    /// The name agreed on, if any.
    pub convention: Option<u8>,
    /// Interactions in which both agents proposed the same name.
    pub matches: u64,
    /// Share of agents whose current name (see [`StopRule::Consensus`]) is the alternative.
    pub alternative_share: f64,
    /// Heap bytes of the population state.
    pub state_bytes: usize,
}

/// The population: one array per field.
struct Population {
    game: NetGame,
    /// Minimal naming game: inventory as a bit set of names.
    inventory: Vec<u16>,
    /// Memory game: the last `memory` names seen, a ring per agent, and how many are held.
    memory: Vec<u8>,
    held: Vec<u8>,
    next: Vec<u8>,
    /// Each agent's current name (`NONE` when it has none or a tie), and how many agents
    /// hold each name, for an O(1) consensus check.
    current: Vec<u8>,
    holders: [usize; MAX_POOL as usize],
}

const NONE: u8 = u8::MAX;

impl Population {
    fn new(game: NetGame, agents: usize, run: &NetRun) -> Population {
        let m = match game {
            NetGame::MemoryCoordination { memory } => memory as usize,
            NetGame::MinimalNaming | NetGame::SimultaneousNaming => 0,
        };
        let mut p = Population {
            game,
            inventory: if m == 0 { vec![0; agents] } else { Vec::new() },
            memory: vec![0; agents * m],
            held: vec![0; if m == 0 { 0 } else { agents }],
            next: vec![0; if m == 0 { 0 } else { agents }],
            current: vec![NONE; agents],
            holders: [0; MAX_POOL as usize],
        };
        for a in 0..agents {
            if a < run.committed {
                p.set_current(a, run.alternative);
            } else if run.established {
                if m == 0 {
                    p.inventory[a] = 1;
                } else {
                    p.memory[a * m..(a + 1) * m].fill(0);
                    p.held[a] = m as u8;
                }
                p.set_current(a, 0);
            }
        }
        p
    }

    fn bytes(&self) -> usize {
        self.inventory.capacity() * 2
            + self.memory.capacity()
            + self.held.capacity()
            + self.next.capacity()
            + self.current.capacity()
    }

    #[inline]
    fn set_current(&mut self, a: usize, name: u8) {
        let old = self.current[a];
        if old != name {
            if old != NONE {
                self.holders[old as usize] -= 1;
            }
            if name != NONE {
                self.holders[name as usize] += 1;
            }
            self.current[a] = name;
        }
    }

    #[inline]
    fn propose(&self, a: usize, pool: u8, rng: &mut Xoshiro256PlusPlus) -> u8 {
        match self.game {
            NetGame::MinimalNaming | NetGame::SimultaneousNaming => {
                let inv = self.inventory[a];
                if inv == 0 {
                    return rng.random_range(0..pool);
                }
                let mut k = rng.random_range(0..inv.count_ones());
                let mut bits = inv;
                loop {
                    let name = bits.trailing_zeros() as u8;
                    if k == 0 {
                        return name;
                    }
                    k -= 1;
                    bits &= bits - 1;
                }
            }
            NetGame::MemoryCoordination { memory } => {
                // The agent's current name is kept up to date: where its memory has a single
                // most frequent name, that is the proposal.
                if self.current[a] != NONE {
                    return self.current[a];
                }
                if self.held[a] == 0 {
                    return rng.random_range(0..pool);
                }
                let (counts, best) = self.memory_counts(a, memory as usize);
                let tied = counts.iter().filter(|c| **c == best).count();
                let mut k = if tied == 1 { 0 } else { rng.random_range(0..tied) };
                for (name, c) in counts.iter().enumerate() {
                    if *c == best {
                        if k == 0 {
                            return name as u8;
                        }
                        k -= 1;
                    }
                }
                unreachable!("a most frequent name exists")
            }
        }
    }

    /// How often each name stands in agent `a`'s memory (of `m` slots), and the largest count.
    #[inline]
    fn memory_counts(&self, a: usize, m: usize) -> ([u8; MAX_POOL as usize], u8) {
        let mut counts = [0u8; MAX_POOL as usize];
        for &name in &self.memory[a * m..a * m + self.held[a] as usize] {
            counts[name as usize] += 1;
        }
        let best = *counts.iter().max().unwrap_or(&0);
        (counts, best)
    }

    #[inline]
    fn set_inventory(&mut self, a: usize, inv: u16) {
        self.inventory[a] = inv;
        let current = if inv.count_ones() == 1 { inv.trailing_zeros() as u8 } else { NONE };
        self.set_current(a, current);
    }

    #[inline]
    fn update(&mut self, a: usize, own: u8, other: u8) {
        match self.game {
            NetGame::MinimalNaming | NetGame::SimultaneousNaming => {
                let inv = if own == other { 1u16 << own } else { self.inventory[a] | (1u16 << other) };
                self.set_inventory(a, inv);
            }
            NetGame::MemoryCoordination { memory } => {
                let m = memory as usize;
                let slot = self.next[a] as usize;
                self.memory[a * m + slot] = other;
                self.next[a] = ((slot + 1) % m) as u8;
                if (self.held[a] as usize) < m {
                    self.held[a] += 1;
                }
                let (counts, best) = self.memory_counts(a, m);
                let mut modes = counts.iter().enumerate().filter(|(_, c)| **c == best);
                let current = match (modes.next(), modes.next()) {
                    (Some((name, _)), None) => name as u8,
                    _ => NONE,
                };
                self.set_current(a, current);
            }
        }
    }
}

/// Plays one run on a network.
pub fn simulate(net: &Network, run: &NetRun) -> Result<NetOutcome, NetworkError> {
    if run.pool < 2 || run.pool > MAX_POOL {
        return Err(NetworkError::Parameter(format!("name pool {} is not in 2..={MAX_POOL}", run.pool)));
    }
    if run.alternative >= run.pool || (run.established && run.alternative == 0 && run.committed > 0) {
        return Err(NetworkError::Parameter(format!(
            "alternative name {} must be in the pool and differ from the established name 0",
            run.alternative
        )));
    }
    if run.committed > net.agents() {
        return Err(NetworkError::Parameter(format!("{} committed of {} agents", run.committed, net.agents())));
    }
    if let NetGame::MemoryCoordination { memory } = run.game {
        if memory == 0 || memory > 64 {
            return Err(NetworkError::Parameter(format!("memory {memory} is not in 1..=64")));
        }
    }
    let n = net.agents();
    let mut pop = Population::new(run.game, n, run);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(run.seed);
    // The naming game's one convention rule (super::convention), applied as it is in a run.
    let mut rule = match run.stop {
        StopRule::Window { window, threshold } => {
            Some(ConventionWindow::new(u32::try_from(window.max(1)).unwrap_or(u32::MAX), threshold))
        }
        StopRule::Consensus => None,
    };
    let mut matches = 0u64;
    let mut converged_at = None;
    let mut convention = None;
    let mut t = 0u64;
    let consensus = |pop: &Population| pop.holders.iter().position(|h| *h == n).map(|x| x as u8);
    if run.stop == StopRule::Consensus {
        if let Some(name) = consensus(&pop) {
            return Ok(outcome(0, Some(0), Some(name), 0, &pop, run));
        }
    }
    while t < run.max_interactions {
        t += 1;
        let a = rng.random_range(0..n as u32);
        let b = net.partner(a, &mut rng);
        let (a, b) = (a as usize, b as usize);
        let (na, matched) = if run.game == NetGame::MinimalNaming {
            // a speaks, b hears.
            let word = if a < run.committed {
                run.alternative
            } else if pop.inventory[a] == 0 {
                let w = rng.random_range(0..run.pool);
                pop.set_inventory(a, 1 << w);
                w
            } else {
                pop.propose(a, run.pool, &mut rng)
            };
            let known = if b < run.committed { word == run.alternative } else { pop.inventory[b] & (1 << word) != 0 };
            if known {
                if a >= run.committed {
                    pop.set_inventory(a, 1 << word);
                }
                if b >= run.committed {
                    pop.set_inventory(b, 1 << word);
                }
            } else if b >= run.committed {
                pop.set_inventory(b, pop.inventory[b] | (1 << word));
            }
            (word, known)
        } else {
            let na = if a < run.committed { run.alternative } else { pop.propose(a, run.pool, &mut rng) };
            let nb = if b < run.committed { run.alternative } else { pop.propose(b, run.pool, &mut rng) };
            if a >= run.committed {
                pop.update(a, na, nb);
            }
            if b >= run.committed {
                pop.update(b, nb, na);
            }
            (na, na == nb)
        };
        matches += u64::from(matched);
        match run.stop {
            StopRule::Consensus => {
                if let Some(name) = consensus(&pop) {
                    converged_at = Some(t);
                    convention = Some(name);
                    break;
                }
            }
            StopRule::Window { .. } => {
                let rule = rule.as_mut().expect("invariant: a window rule exists for a window stop");
                rule.push(matched.then_some(u32::from(na)));
                if let Some(name) = rule.convention() {
                    converged_at = Some(t);
                    convention = Some(name as u8);
                    break;
                }
            }
        }
    }
    Ok(outcome(t, converged_at, convention, matches, &pop, run))
}

fn outcome(
    t: u64,
    converged_at: Option<u64>,
    convention: Option<u8>,
    matches: u64,
    pop: &Population,
    run: &NetRun,
) -> NetOutcome {
    NetOutcome {
        interactions: t,
        converged_at,
        convention,
        matches,
        alternative_share: pop.holders[run.alternative as usize] as f64 / pop.current.len() as f64,
        state_bytes: pop.bytes(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generators_have_the_degrees_they_promise() {
        let n = 2_000;
        let ring = Network::build(Topology::Ring { k: 4 }, n, 1).expect("ring");
        assert_eq!(ring.edges(), 2 * n);
        assert!((0..n as u32).all(|a| ring.degree(a) == 4));
        assert_eq!(ring.neighbours(0).expect("graph"), &[1, 2, (n - 2) as u32, (n - 1) as u32]);

        let rr = Network::build(Topology::RandomRegular { d: 4 }, n, 1).expect("regular");
        let exact = (0..n as u32).filter(|a| rr.degree(*a) == 4).count();
        assert!(exact as f64 > 0.99 * n as f64, "{exact} of {n} agents have degree 4");
        assert!((0..n as u32).all(|a| rr.degree(a) <= 4));

        let ws = Network::build(Topology::SmallWorld { k: 4, p: 0.1 }, n, 1).expect("small world");
        let mean = (0..n as u32).map(|a| ws.degree(a)).sum::<usize>() as f64 / n as f64;
        assert!((mean - 4.0).abs() < 0.1, "mean degree {mean}");
        let far = (0..n as u32)
            .flat_map(|a| ws.neighbours(a).expect("graph").iter().map(move |b| (a, *b)))
            .filter(|(a, b)| {
                let d = a.abs_diff(*b);
                d.min(n as u32 - d) > 2
            })
            .count();
        // About p of the lattice's edge ends are rewired.
        let share = far as f64 / (2 * ws.edges()) as f64;
        assert!((0.05..0.15).contains(&share), "rewired share {share}");

        let ba = Network::build(Topology::ScaleFree { m: 3 }, n, 1).expect("scale-free");
        assert!((0..n as u32).all(|a| ba.degree(a) >= 3));
        assert_eq!(ba.edges(), 6 + 3 * (n - 4));
        let max = (0..n as u32).map(|a| ba.degree(a)).max().unwrap_or(0);
        assert!(max > 40, "hubs: the largest degree is {max}");

        let all = Network::build(Topology::Complete, n, 1).expect("complete");
        assert_eq!((all.edges(), all.degree(7), all.heap_bytes()), (0, n - 1, 0));
    }

    #[test]
    fn bad_parameters_are_refused() {
        assert_eq!(Network::build(Topology::Complete, 1, 0).err(), Some(NetworkError::TooSmall(1)));
        assert!(Network::build(Topology::Ring { k: 3 }, 10, 0).is_err());
        assert!(Network::build(Topology::RandomRegular { d: 3 }, 11, 0).is_err());
        assert!(Network::build(Topology::SmallWorld { k: 4, p: 1.5 }, 10, 0).is_err());
        assert!(Network::build(Topology::ScaleFree { m: 9 }, 10, 0).is_err());
        let net = Network::build(Topology::Complete, 10, 0).expect("net");
        let mut r = NetRun::fresh(NetGame::MinimalNaming, 10, 0);
        r.pool = 17;
        assert!(simulate(&net, &r).is_err());
        let mut r = NetRun::fresh(NetGame::MemoryCoordination { memory: 0 }, 10, 0);
        r.pool = 10;
        assert!(simulate(&net, &r).is_err());
    }

    #[test]
    fn same_seed_same_run_and_another_seed_another() {
        let net = Network::build(Topology::SmallWorld { k: 4, p: 0.1 }, 500, 3).expect("net");
        let again = Network::build(Topology::SmallWorld { k: 4, p: 0.1 }, 500, 3).expect("net");
        assert!((0..500).all(|a| net.neighbours(a) == again.neighbours(a)));
        let r = NetRun::fresh(NetGame::MinimalNaming, 200_000, 9);
        let a = simulate(&net, &r).expect("runs");
        assert_eq!(a, simulate(&again, &r).expect("runs"));
        let b = simulate(&net, &NetRun { seed: 10, ..r }).expect("runs");
        assert_ne!(a, b);
    }

    #[test]
    fn canonical_population_forms_a_convention_as_the_engine_does() {
        // 24 agents, complete mixing, the engine's window rule: the engine's minimal naming
        // game takes a median of 2,800-3,800 interactions (README); the kernel must agree.
        let net = Network::build(Topology::Complete, 24, 0).expect("net");
        let mut times: Vec<u64> = (0..60)
            .map(|s| {
                let r = NetRun {
                    stop: StopRule::Window { window: 50, threshold: 0.95 },
                    ..NetRun::fresh(NetGame::SimultaneousNaming, 20_000, s)
                };
                simulate(&net, &r).expect("runs").converged_at.expect("a convention forms")
            })
            .collect();
        times.sort_unstable();
        let median = times[30];
        assert!((1_500..6_000).contains(&median), "median {median}");
    }

    #[test]
    fn consensus_is_reached_on_every_topology_of_a_small_population() {
        for topology in [
            Topology::Complete,
            Topology::Ring { k: 4 },
            Topology::RandomRegular { d: 4 },
            Topology::SmallWorld { k: 4, p: 0.1 },
            Topology::ScaleFree { m: 3 },
        ] {
            let net = Network::build(topology, 200, 5).expect("net");
            let o = simulate(&net, &NetRun::fresh(NetGame::MinimalNaming, 5_000_000, 5)).expect("runs");
            let name =
                o.convention.unwrap_or_else(|| panic!("{}: no consensus in {}", topology.label(), o.interactions));
            assert!(name < 10);
        }
    }

    #[test]
    fn a_committed_minority_tips_the_memory_game_above_its_critical_mass_only() {
        let net = Network::build(Topology::Complete, 200, 0).expect("net");
        let tip = |committed: usize, seed: u64| {
            let r = NetRun {
                committed,
                established: true,
                ..NetRun::fresh(NetGame::MemoryCoordination { memory: 5 }, 400_000, seed)
            };
            simulate(&net, &r).expect("runs")
        };
        // 10 % committed: the established convention holds; 40 %: the alternative wins.
        let low: Vec<f64> = (0..5).map(|s| tip(20, s).alternative_share).collect();
        assert!(low.iter().all(|s| *s < 0.5), "{low:?}");
        for s in 0..5 {
            let o = tip(80, s);
            assert_eq!(o.convention, Some(1), "{o:?}");
        }
    }

    #[test]
    fn state_is_linear_in_agents() {
        for (game, per_agent) in [
            (NetGame::MinimalNaming, 3),
            (NetGame::SimultaneousNaming, 3),
            (NetGame::MemoryCoordination { memory: 5 }, 8),
        ] {
            for n in [1_000, 10_000] {
                let net = Network::build(Topology::Ring { k: 4 }, n, 0).expect("net");
                let o = simulate(&net, &NetRun::fresh(game, 10, 0)).expect("runs");
                assert_eq!(o.state_bytes, per_agent * n, "{game:?} at {n}");
            }
        }
    }
}
