//! The peers section: the same rules on Mesa and Axelrod (`bench/peers/peers.py`), in a virtual
//! environment under the target directory, beside the engine.

use super::*;

/// Mean, standard deviation and count of a sample.
#[derive(Clone, Copy, Debug)]
struct Summary {
    mean: f64,
    sd: f64,
    n: f64,
}

impl Summary {
    fn of(xs: &[f64]) -> Summary {
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n.max(1.0);
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
        Summary { mean, sd: var.sqrt(), n }
    }

    fn from_json(v: &serde_json::Value) -> Summary {
        let f = |k: &str| v.get(k).and_then(serde_json::Value::as_f64).unwrap_or(f64::NAN);
        Summary { mean: f("mean"), sd: f("sd"), n: f("n") }
    }

    /// Standard error of the mean.
    fn se(&self) -> f64 {
        self.sd / self.n.max(1.0).sqrt()
    }
}

/// The stated tolerance for peers' statistics: two means agree when they differ by at most
/// this many combined standard errors (or by at most 1e-9 where both are exact).
const PEER_TOLERANCE_SE: f64 = 3.0;

/// How far apart two means are, in combined standard errors (0 when equal, infinite when
/// they differ and neither varies).
fn z_apart(a: Summary, b: Summary) -> f64 {
    let diff = (a.mean - b.mean).abs();
    if diff <= 1e-9 {
        return 0.0;
    }
    let se = (a.se().powi(2) + b.se().powi(2)).sqrt();
    if se > 0.0 {
        diff / se
    } else {
        f64::INFINITY
    }
}

fn agreement(z: f64) -> String {
    if z <= PEER_TOLERANCE_SE {
        format!("agree (|z| = {z:.1} ≤ {PEER_TOLERANCE_SE})")
    } else {
        format!("MISMATCH (|z| = {z:.1} > {PEER_TOLERANCE_SE})")
    }
}

/// The Python of the peers' virtual environment under the target directory, created and
/// filled from PyPI when missing; `Err` carries why it is unavailable.
fn peers_python(quick: bool) -> Result<PathBuf, String> {
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    // target/<profile>/agora-bench → target/peers-venv
    let target = me.parent().and_then(Path::parent).ok_or("no target directory above the executable")?;
    let venv = target.join("peers-venv");
    let python = venv.join("bin").join("python");
    let ready = || {
        Command::new(&python).args(["-c", "import mesa, axelrod"]).output().map(|o| o.status.success()).unwrap_or(false)
    };
    if ready() {
        return Ok(python);
    }
    if quick {
        return Err(format!("--quick does not install them; a full run creates {}", venv.display()));
    }
    println!(
        "peers: creating {} with mesa 3 and axelrod from PyPI (once; several GB: axelrod pulls in torch)",
        venv.display()
    );
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .output()
        .map_err(|e| format!("python3 -m venv: {e}"))?;
    if !made.status.success() {
        return Err(format!("python3 -m venv failed: {}", last_line(&made.stderr)));
    }
    let pip = Command::new(venv.join("bin").join("pip"))
        .args(["install", "--quiet", "mesa==3.*", "axelrod"])
        .output()
        .map_err(|e| format!("pip: {e}"))?;
    if !pip.status.success() {
        return Err(format!("pip install mesa==3.* axelrod failed (PyPI unreachable?): {}", last_line(&pip.stderr)));
    }
    if ready() {
        Ok(python)
    } else {
        Err("mesa or axelrod does not import after pip install".into())
    }
}

fn last_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string()
}

/// Runs `bench/peers/peers.py GAME RUNS SEED [AGENTS]`; returns its JSON.
fn peer(python: &Path, game: &str, runs: usize, agents: Option<usize>) -> anyhow::Result<serde_json::Value> {
    let script = repo_file("bench/peers/peers.py")?;
    let mut cmd = Command::new(python);
    cmd.arg(&script).args([game, &runs.to_string(), "1"]);
    if let Some(n) = agents {
        cmd.arg(n.to_string());
    }
    let out = cmd.output().context("running peers.py")?;
    anyhow::ensure!(out.status.success(), "peers.py {game} failed: {}", String::from_utf8_lossy(&out.stderr));
    Ok(serde_json::from_slice(&out.stdout)?)
}

/// Work units per second of a peer's JSON (interactions or decisions).
fn peer_rate(v: &serde_json::Value) -> f64 {
    let work = v.get("interactions").or_else(|| v.get("decisions")).and_then(serde_json::Value::as_f64).unwrap_or(0.0);
    work / v["seconds"].as_f64().unwrap_or(f64::NAN)
}

/// Plays the same distinct runs as [`engine_runs`] again, untimed, and hands each run's
/// records to `see` (the statistics are taken outside the timed loop).
fn engine_records(
    specs: &[RunSpec],
    count: usize,
    see: &mut dyn FnMut(&agora_engine::RunRecords),
) -> anyhow::Result<()> {
    for i in 0..count {
        let rec = RunWorld::new(&distinct(&specs[i % specs.len()], i))?.run_to_end()?;
        see(&rec);
    }
    Ok(())
}

pub(super) fn peers(quick: bool, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    let python = match peers_python(quick) {
        Ok(p) => p,
        Err(why) => {
            rows.push(row("peers", "Mesa and Axelrod (bench/peers)", "skipped", why));
            return Ok(());
        }
    };
    let super::Blocks { naming, pd, pgg, .. } = super::blocks()?;
    let scale = if quick { 10 } else { 1 };

    // The 24-agent naming game: Mesa beside the engine.
    let n_runs = 300 / scale;
    let (ei, _, es) = engine_runs(&naming, n_runs)?;
    let mut per_run = Vec::with_capacity(n_runs);
    engine_records(&naming, n_runs, &mut |r| per_run.push(r.interactions.len() as f64))?;
    let e = Summary::of(&per_run);
    let m = peer(&python, "naming", n_runs, None)?;
    let ms = Summary::from_json(&m["stats"]["interactions_per_run"]);
    let (e_rate, m_rate) = (ei as f64 / es, peer_rate(&m));
    let mesa_v = m["mesa"].as_str().unwrap_or("?").to_string();
    let axl_v = m["axelrod"].as_str().unwrap_or("?").to_string();
    rows.push(row(
        "peers: naming game, 24 agents",
        format!("Mesa {mesa_v} model, minimal naming (simultaneous), {n_runs} runs, distinct seeds, 1 thread"),
        format!("{} interactions/s; engine = {:.1}× Mesa", thousands(m_rate), e_rate / m_rate),
        format!(
            "engine {} interactions/s; interactions to convention: engine {:.0} ± {:.0}, Mesa {:.0} ± {:.0} (mean ± SE): {}",
            thousands(e_rate),
            e.mean,
            e.se(),
            ms.mean,
            ms.se(),
            agreement(z_apart(e, ms))
        ),
    ));

    // Public goods, four conditional cooperators: Mesa beside the engine.
    let count = 20_000 / scale;
    let (_, ed, es) = engine_runs(&pgg, count)?;
    let rounds = 10usize;
    let mut by_round: Vec<Vec<f64>> = (0..rounds).map(|_| Vec::with_capacity(count)).collect();
    engine_records(&pgg, count, &mut |r| {
        let mut sum = vec![0.0; rounds];
        let mut seats = vec![0.0; rounds];
        for d in r.decisions.iter().filter(|d| d.role == "contributor") {
            if let Some(k) = (d.round as usize).checked_sub(1).filter(|k| *k < rounds) {
                sum[k] += d.value;
                seats[k] += 1.0;
            }
        }
        for k in 0..rounds {
            by_round[k].push(sum[k] / f64::max(seats[k], 1.0));
        }
    })?;
    let m = peer(&python, "pgg", count, None)?;
    let stats = &m["stats"]["contribution_by_round"];
    let mut worst = 0.0f64;
    let mut side = Vec::new();
    for (k, engine_round) in by_round.iter().enumerate() {
        let e = Summary::of(engine_round);
        let p = Summary {
            mean: stats["mean"][k].as_f64().unwrap_or(f64::NAN),
            sd: stats["sd"][k].as_f64().unwrap_or(f64::NAN),
            n: stats["n"].as_f64().unwrap_or(f64::NAN),
        };
        worst = worst.max(z_apart(e, p));
        if k < 5 {
            side.push(format!("{:.2}/{:.2}", e.mean, p.mean));
        }
    }
    let (e_rate, m_rate) = (ed as f64 / es, peer_rate(&m));
    rows.push(row(
        "peers: public goods",
        format!("Mesa {mesa_v} model, 4 conditional cooperators, 10 rounds, {count} runs, 1 thread"),
        format!("{} decisions/s; engine = {:.1}× Mesa", thousands(m_rate), e_rate / m_rate),
        format!(
            "engine {} decisions/s; mean contribution rounds 1–5, engine/Mesa: {} (rounds 6–10 both 0): {} (worst round)",
            thousands(e_rate),
            side.join(", "),
            agreement(worst)
        ),
    ));

    // The prisoner's dilemma between Roth–Erev learners: Axelrod beside the engine.
    let (_, ed, es) = engine_runs(&pd, count)?;
    let mut rates = Vec::with_capacity(count);
    engine_records(&pd, count, &mut |r| {
        let n = r.decisions.len() as f64;
        let c = r.decisions.iter().filter(|d| d.value == 0.0).count() as f64;
        rates.push(c / n.max(1.0));
    })?;
    let e = Summary::of(&rates);
    let a = peer(&python, "pd", count, None)?;
    let asum = Summary::from_json(&a["stats"]["cooperation_per_run"]);
    let floor = peer(&python, "pd-floor", count, None)?;
    let (e_rate, a_rate, f_rate) = (ed as f64 / es, peer_rate(&a), peer_rate(&floor));
    rows.push(row(
        "peers: prisoner's dilemma",
        format!("Axelrod {axl_v} matches, 2 Roth–Erev (an axelrod.Player), 10 turns, {count} runs, 1 thread"),
        format!("{} decisions/s; engine = {:.1}× Axelrod", thousands(a_rate), e_rate / a_rate),
        format!(
            "engine {} decisions/s; cooperation rate: engine {:.3} ± {:.3}, Axelrod {:.3} ± {:.3} (mean ± SE): {}",
            thousands(e_rate),
            e.mean,
            e.se(),
            asum.mean,
            asum.se(),
            agreement(z_apart(e, asum))
        ),
    ));
    rows.push(row(
        "peers: prisoner's dilemma",
        format!("Axelrod {axl_v} floor: TitForTat vs Defector (built in), 10 turns, {count} runs"),
        format!("{} decisions/s; engine's Roth–Erev = {:.1}× this floor", thousands(f_rate), e_rate / f_rate),
        format!(
            "the cheapest Axelrod match, no learning; cooperation rate {:.3} (TitForTat opens with C)",
            floor["stats"]["cooperation_rate"].as_f64().unwrap_or(f64::NAN)
        ),
    ));

    // Large populations: Mesa's naming model beside the network kernel (`agora network`).
    let sizes: &[usize] = if quick { &[1_000] } else { &[10_000, 100_000] };
    for &n in sizes {
        let max = 20 * n as u64;
        let net = Network::build(Topology::Complete, n, 7)?;
        let run = NetRun {
            stop: StopRule::Window { window: 50, threshold: 0.95 },
            ..NetRun::fresh(NetGame::SimultaneousNaming, max, 11)
        };
        let base = reset_peak();
        let start = Instant::now();
        let o = simulate(&net, &run)?;
        let secs = start.elapsed().as_secs_f64();
        let heap = (net.heap_bytes() + PEAK.load(Ordering::Relaxed) - base) as f64 / n as f64;
        stop_counting();
        let a_rate = o.interactions as f64 / secs;
        let m = peer(&python, "naming-large", 1, Some(n))?;
        let m_rate = peer_rate(&m);
        rows.push(row(
            "peers: naming game, large",
            format!("Mesa {mesa_v} model, complete mixing, {} agents, ≤ 20 interactions/agent", thousands(n as f64)),
            format!("{} interactions/s; `agora network` = {:.0}× Mesa", thousands(m_rate), a_rate / m_rate),
            format!(
                "`agora network` kernel {} interactions/s, heap {heap:.1} B/agent; Mesa model {:.0} B/agent once built (tracemalloc)",
                thousands(a_rate),
                m["bytes_per_agent_built"].as_f64().unwrap_or(f64::NAN)
            ),
        ));
    }
    Ok(())
}
