//! Run-level outcomes, one row per stored run.
//!
//! Shares are `value / scale` as recorded (contribution over endowment, offer over pie, amount
//! returned over amount available). Cooperation is choice 0 of the dilemma.

use std::collections::BTreeMap;
use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use crate::convention::first_convention;
use crate::error::AnalysisError;

/// One run's identity and outcomes.
#[derive(Clone, Debug, PartialEq)]
pub struct RunOutcome {
    pub run_id: i64,
    pub run_key: String,
    pub study: String,
    pub block: String,
    pub environment: String,
    pub arm: String,
    pub variant: String,
    pub cell: String,
    pub level: String,
    pub roster: String,
    pub family: String,
    pub sweep: Option<f64>,
    pub committed: i64,
    pub population: i64,
    pub metrics: BTreeMap<String, f64>,
}

/// Opens a store read-only.
pub fn open(path: &Path) -> Result<Connection, AnalysisError> {
    Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|source| AnalysisError::Store { path: path.to_path_buf(), source })
}

/// Ordinary least-squares slope of `ys` on `xs`.
fn slope(points: &[(f64, f64)]) -> Option<f64> {
    let n = points.len() as f64;
    if points.len() < 2 {
        return None;
    }
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

/// Computes every run's outcomes (of one study, or of all).
pub fn run_outcomes(path: &Path, study: Option<&str>) -> Result<Vec<RunOutcome>, AnalysisError> {
    let conn = open(path)?;
    let sql = |source| AnalysisError::Store { path: path.to_path_buf(), source };
    let mut runs: BTreeMap<i64, RunOutcome> = BTreeMap::new();
    let mut naming_specs: BTreeMap<i64, (usize, f64, Option<u32>)> = BTreeMap::new();
    {
        let mut st = conn
            .prepare(
                "SELECT run_id, run_key, study, block, environment, arm, variant, cell, level, roster, family,
                        sweep_value, committed, population, spec_json
                 FROM runs WHERE (?1 IS NULL OR study = ?1) ORDER BY run_id",
            )
            .map_err(sql)?;
        let mut rows = st.query([study]).map_err(sql)?;
        while let Some(r) = rows.next().map_err(sql)? {
            let o = RunOutcome {
                run_id: r.get(0).map_err(sql)?,
                run_key: r.get(1).map_err(sql)?,
                study: r.get(2).map_err(sql)?,
                block: r.get(3).map_err(sql)?,
                environment: r.get(4).map_err(sql)?,
                arm: r.get(5).map_err(sql)?,
                variant: r.get(6).map_err(sql)?,
                cell: r.get(7).map_err(sql)?,
                level: r.get(8).map_err(sql)?,
                roster: r.get(9).map_err(sql)?,
                family: r.get(10).map_err(sql)?,
                sweep: r.get(11).map_err(sql)?,
                committed: r.get(12).map_err(sql)?,
                population: r.get(13).map_err(sql)?,
                metrics: BTreeMap::new(),
            };
            if o.environment == "naming-game" {
                let spec: String = r.get(14).map_err(sql)?;
                let v: serde_json::Value = serde_json::from_str(&spec).map_err(|e| AnalysisError::Spec {
                    path: path.to_path_buf(),
                    run: o.run_key.clone(),
                    message: e.to_string(),
                })?;
                let ng = &v["environment"]["NamingGame"];
                let window = ng["window"].as_u64().unwrap_or(50) as usize;
                let threshold = ng["threshold"].as_f64().unwrap_or(0.95);
                let alternative = ng["tipping"]["alternative"].as_u64().map(|a| a as u32);
                naming_specs.insert(o.run_id, (window, threshold, alternative));
            }
            runs.insert(o.run_id, o);
        }
    }

    // Per run, role and round: mean share and mean raw value.
    let mut per_round: BTreeMap<(i64, String), Vec<(u32, f64, f64)>> = BTreeMap::new();
    {
        let mut st = conn
            .prepare(
                "SELECT d.run_id, d.role, d.round, AVG(d.value / d.scale), AVG(d.value)
                 FROM decisions d JOIN runs r USING (run_id)
                 WHERE r.environment <> 'naming-game' AND (?1 IS NULL OR r.study = ?1)
                 GROUP BY d.run_id, d.role, d.round ORDER BY d.run_id, d.role, d.round",
            )
            .map_err(sql)?;
        let mut rows = st.query([study]).map_err(sql)?;
        while let Some(r) = rows.next().map_err(sql)? {
            let key = (r.get::<_, i64>(0).map_err(sql)?, r.get::<_, String>(1).map_err(sql)?);
            per_round.entry(key).or_default().push((
                r.get(2).map_err(sql)?,
                r.get(3).map_err(sql)?,
                r.get(4).map_err(sql)?,
            ));
        }
    }
    for ((run_id, role), rounds) in &per_round {
        let Some(o) = runs.get_mut(run_id) else {
            continue;
        };
        let m = &mut o.metrics;
        let first = rounds.first().map(|r| r.1).unwrap_or(f64::NAN);
        let last = rounds.last().map(|r| r.1).unwrap_or(f64::NAN);
        let mean_share = rounds.iter().map(|r| r.1).sum::<f64>() / rounds.len() as f64;
        let mean_value = rounds.iter().map(|r| r.2).sum::<f64>() / rounds.len() as f64;
        match role.as_str() {
            "player" => {
                // Choice 0 cooperates: the cooperation share is one minus the mean choice.
                m.insert("cooperation".into(), 1.0 - mean_value);
                m.insert("cooperation_r1".into(), 1.0 - rounds[0].2);
                m.insert("cooperation_last".into(), 1.0 - rounds[rounds.len() - 1].2);
                let pts: Vec<(f64, f64)> = rounds.iter().map(|r| (f64::from(r.0), 1.0 - r.2)).collect();
                if let Some(b) = slope(&pts) {
                    m.insert("cooperation_change".into(), b * (pts.len() as f64 - 1.0));
                }
            }
            "contributor" => {
                m.insert("contribution".into(), mean_share);
                m.insert("contribution_r1".into(), first);
                m.insert("contribution_last".into(), last);
                m.insert("contribution_change".into(), last - first);
            }
            "punisher" => {
                m.insert("punishment_points".into(), mean_value);
            }
            "proposer" => {
                m.insert("offer".into(), mean_share);
            }
            "responder" => {
                m.insert("rejection".into(), mean_value);
            }
            "dictator" => {
                m.insert("giving".into(), mean_share);
            }
            "investor" => {
                m.insert("sent".into(), mean_share);
            }
            "trustee" => {
                m.insert("returned".into(), mean_share);
            }
            _ => {}
        }
    }

    // Acceptance by offer faced (fixed-offer arm), and the 11–20 choice distribution.
    {
        let mut st = conn
            .prepare(
                "SELECT d.run_id, d.role, d.context, AVG(d.value), COUNT(*), d.value - d.context
                 FROM decisions d JOIN runs r USING (run_id)
                 WHERE (r.arm = 'ultimatum-fixed-offer' AND d.role = 'responder')
                    AND (?1 IS NULL OR r.study = ?1)
                 GROUP BY d.run_id, d.context",
            )
            .map_err(sql)?;
        let mut rows = st.query([study]).map_err(sql)?;
        while let Some(r) = rows.next().map_err(sql)? {
            let run_id: i64 = r.get(0).map_err(sql)?;
            let offer: f64 = r.get(2).map_err(sql)?;
            let reject: f64 = r.get(3).map_err(sql)?;
            if let Some(o) = runs.get_mut(&run_id) {
                o.metrics.insert(format!("accept_{offer:02.0}"), 1.0 - reject);
            }
        }
        let mut st = conn
            .prepare(
                "SELECT d.run_id, CAST(d.value - d.context AS INTEGER), COUNT(*)
                 FROM decisions d JOIN runs r USING (run_id)
                 WHERE d.role = 'requester' AND (?1 IS NULL OR r.study = ?1)
                 GROUP BY d.run_id, 2",
            )
            .map_err(sql)?;
        let mut rows = st.query([study]).map_err(sql)?;
        let mut counts: BTreeMap<i64, Vec<(i64, f64)>> = BTreeMap::new();
        while let Some(r) = rows.next().map_err(sql)? {
            counts
                .entry(r.get(0).map_err(sql)?)
                .or_default()
                .push((r.get(1).map_err(sql)?, r.get::<_, i64>(2).map_err(sql)? as f64));
        }
        for (run_id, c) in counts {
            let total: f64 = c.iter().map(|x| x.1).sum();
            if let Some(o) = runs.get_mut(&run_id) {
                for (idx, n) in &c {
                    // Position in the ten-point range: 0 is the lowest request (11 in C0).
                    o.metrics.insert(format!("choice_{:02}", idx + 11), n / total);
                }
                // The human mode is 17 in the canonical range, the seventh value of ten.
                let at_mode = c.iter().filter(|x| x.0 == 6).map(|x| x.1).sum::<f64>();
                o.metrics.insert("mode_share".into(), at_mode / total);
            }
        }
    }

    // Payoff consistency of responders: accepting pays when the offer exceeds what rejection
    // brings (0 in C0–C2, 40 in C3), rejecting when it falls below; at equality either is
    // consistent. Full contributions (consistent with the C3 public-goods payoffs).
    {
        let table = agora_environments::variants::VariantTable::shipped();
        let mut st = conn
            .prepare(
                "SELECT d.run_id, r.variant, d.context, d.value FROM decisions d JOIN runs r USING (run_id)
                 WHERE d.role = 'responder' AND (?1 IS NULL OR r.study = ?1)",
            )
            .map_err(sql)?;
        let mut rows = st.query([study]).map_err(sql)?;
        let mut tally: BTreeMap<i64, (f64, f64)> = BTreeMap::new();
        while let Some(r) = rows.next().map_err(sql)? {
            let run_id: i64 = r.get(0).map_err(sql)?;
            let variant: String = r.get(1).map_err(sql)?;
            let offer: f64 = r.get(2).map_err(sql)?;
            let reject: f64 = r.get(3).map_err(sql)?;
            let v = agora_environments::Variant::ALL.into_iter().find(|v| v.as_str() == variant);
            let outside = v.map(|v| table.bargain(v).responder_outside).unwrap_or(0.0);
            let consistent = if offer > outside {
                reject == 0.0
            } else if offer < outside {
                reject == 1.0
            } else {
                true
            };
            let e = tally.entry(run_id).or_default();
            e.0 += if consistent { 1.0 } else { 0.0 };
            e.1 += 1.0;
        }
        for (run_id, (c, n)) in tally {
            if let Some(o) = runs.get_mut(&run_id) {
                o.metrics.insert("payoff_consistency".into(), c / n);
            }
        }
        let mut st = conn
            .prepare(
                "SELECT d.run_id, AVG(CASE WHEN d.value >= d.scale THEN 1.0 ELSE 0.0 END) FROM decisions d JOIN runs r USING (run_id)
                 WHERE d.role = 'contributor' AND (?1 IS NULL OR r.study = ?1) GROUP BY d.run_id",
            )
            .map_err(sql)?;
        let mut rows = st.query([study]).map_err(sql)?;
        while let Some(r) = rows.next().map_err(sql)? {
            let run_id: i64 = r.get(0).map_err(sql)?;
            if let Some(o) = runs.get_mut(&run_id) {
                o.metrics.insert("full_contribution".into(), r.get(1).map_err(sql)?);
            }
        }
    }

    // Naming game: convention formation and, in the tipping arm, overturning.
    {
        let mut st = conn
            .prepare(
                "SELECT i.run_id, i.t, i.name_a, i.matched
                 FROM interactions i JOIN runs r USING (run_id)
                 WHERE (?1 IS NULL OR r.study = ?1) ORDER BY i.run_id, i.t",
            )
            .map_err(sql)?;
        let mut rows = st.query([study]).map_err(sql)?;
        let mut current: Option<i64> = None;
        let mut seq: Vec<(u32, Option<u32>)> = Vec::new();
        let finish = |run_id: i64, seq: &mut Vec<(u32, Option<u32>)>, runs: &mut BTreeMap<i64, RunOutcome>| {
            let Some((window, threshold, alternative)) = naming_specs.get(&run_id).copied() else {
                return;
            };
            let Some(o) = runs.get_mut(&run_id) else {
                return;
            };
            let matched = seq.iter().filter(|x| x.1.is_some()).count() as f64;
            o.metrics.insert("match_share".into(), matched / seq.len().max(1) as f64);
            o.metrics.insert("interactions".into(), seq.len() as f64);
            match alternative {
                None => {
                    let ev = first_convention(seq.iter().copied(), window, threshold, |_| true);
                    o.metrics.insert("convention".into(), if ev.is_some() { 1.0 } else { 0.0 });
                    if let Some(ev) = ev {
                        o.metrics.insert("convention_time".into(), f64::from(ev.t));
                    }
                }
                Some(alt) => {
                    let ev = first_convention(seq.iter().copied(), window, threshold, |n| n == alt);
                    o.metrics.insert("overturned".into(), if ev.is_some() { 1.0 } else { 0.0 });
                    if let Some(ev) = ev {
                        o.metrics.insert("overturn_time".into(), f64::from(ev.t));
                    }
                }
            }
            seq.clear();
        };
        while let Some(r) = rows.next().map_err(sql)? {
            let run_id: i64 = r.get(0).map_err(sql)?;
            if current != Some(run_id) {
                if let Some(prev) = current {
                    finish(prev, &mut seq, &mut runs);
                }
                current = Some(run_id);
            }
            let t: u32 = r.get(1).map_err(sql)?;
            let name: u32 = r.get(2).map_err(sql)?;
            let matched: bool = r.get(3).map_err(sql)?;
            seq.push((t, matched.then_some(name)));
        }
        if let Some(prev) = current {
            finish(prev, &mut seq, &mut runs);
        }
    }
    Ok(runs.into_values().collect())
}
