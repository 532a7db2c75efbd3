//! A run's bulk records as one value per table (schema 5): its decisions, payoffs and
//! interactions are each written as one JSON array of rows in `run_rows`, one row per run,
//! instead of one SQLite row per record. A naming-game run of 3,000 meetings is then one
//! insert, not 15,000. The `decisions`, `payoffs` and `interactions` views expand them back
//! into rows with the old tables' columns (`json_each`, which every SQLite since 3.38 has), so
//! SQL, `agora export` and pandas read them as before.
//!
//! Each row is an array of the table's columns in order (booleans as 0/1, a missing value as
//! `null`), and the rows are sorted by the old tables' primary keys, so a view lists them in
//! the order a scan of the old table did. A whole number below 10^9 in magnitude is written as a
//! JSON integer (`4`, not `4.0`: the views cast it back to REAL), any other number in the
//! shortest form that reads back to the same `f64` (serde_json's), which SQLite's JSON reader
//! parses exactly. Stores written with `4.0` (before) read the same through the views.

use crate::digits::{Line, Sink, Text};
use crate::pool::Pool;
use crate::run_records::{DecisionRecord, InteractionRecord, PayoffRecord};
use agora_environments::Action;

/// The three columns of `run_rows`, JSON each.
#[derive(Default)]
pub struct RowValues {
    /// `[[step, round, seat, role, action, value, scale, context], …]`, by (step, seat).
    pub decisions: String,
    /// `[[step, round, seat, payoff], …]`, by (step, seat).
    pub payoffs: String,
    /// `[[t, a, b, name_a, name_b, matched], …]`, by t.
    pub interactions: String,
}

impl Drop for RowValues {
    /// The values' buffers go back to [`SPARE`] for the next run's rows.
    fn drop(&mut self) {
        for value in [&mut self.decisions, &mut self.payoffs, &mut self.interactions] {
            SPARE.give(std::mem::take(value).into_bytes());
        }
    }
}

/// Buffers of rows written and let go of, for the rows of the runs that follow.
static SPARE: Pool<Vec<u8>> = Pool::new();

/// A buffer for `bytes` of a run's rows: the smallest spare one that holds them, else the
/// largest kept (grown once by its caller), else a new one. Taking whichever came back last
/// handed the decisions (the longest value) the interactions' buffer, whose growth then took
/// fresh memory from the system for every run, a fifth of the encoding's time.
fn buffer(bytes: usize) -> Vec<u8> {
    SPARE
        .take(|kept| {
            let by_size = |(i, b): (usize, &Vec<u8>)| (i, b.capacity());
            let sizes = kept.iter().enumerate().map(by_size);
            let fits = sizes.clone().filter(|&(_, c)| c >= bytes).min_by_key(|&(_, c)| c);
            fits.or_else(|| sizes.max_by_key(|&(_, c)| c)).map(|(i, _)| i)
        })
        .unwrap_or_default()
}

/// The integer a row writes for `x`: a whole number below 10^9 in magnitude (minus zero aside,
/// which JSON's integers cannot tell from zero).
#[inline]
fn whole(x: f64) -> Option<i64> {
    // `x as i64` back to `x` (a cast, not a call to `trunc` as `fract` makes).
    let n = x as i64;
    (x.abs() < 1e9 && n as f64 == x && !(x == 0.0 && x.is_sign_negative())).then_some(n)
}

/// A number JSON can hold; a non-finite one is refused (JSON has none, and the old REAL NOT
/// NULL columns refused it too).
#[inline]
fn number<W: Sink>(out: &mut W, x: f64, what: impl FnOnce() -> String) -> Result<(), String> {
    if !x.is_finite() {
        return Err(format!("{} is {x}, which a store cannot hold", what()));
    }
    if let Some(n) = whole(x) {
        // Whole numbers (most values: choices, scales, payoffs) as JSON integers, the digits
        // alone: every view casts the column back to REAL, so a view gives the same f64 as for
        // serde_json's "4.0", two bytes a value fewer in the store.
        out.signed(n);
        return Ok(());
    }
    // serde_json's form: the formatter serde_json itself calls for a finite f64.
    out.put_slice(zmij::Buffer::new().format_finite(x).as_bytes());
    Ok(())
}

/// Whether a text is written as it is between quotes (nothing in it JSON escapes).
#[inline]
fn plain(s: &str) -> bool {
    s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\')
}

/// A text as a JSON string.
fn text<W: Sink>(out: &mut W, s: &str) -> Result<(), String> {
    if plain(s) {
        out.put(b'"');
        out.put_slice(s.as_bytes());
        out.put(b'"');
    } else {
        out.put_slice(serde_json::to_string(s).map_err(|e| e.to_string())?.as_bytes());
    }
    Ok(())
}

/// A decision as stored: its action as the store's compact text.
#[derive(Clone, Copy)]
pub struct DecisionRow<'a> {
    /// Stage number within the run, 1-based.
    pub step: u32,
    /// Round, game or interaction, 1-based.
    pub round: u32,
    /// Seat of the agent that decided.
    pub seat: u32,
    /// The role's store name.
    pub role: &'a str,
    /// The action, or its compact text as stored (`c1`, `a17`, `[0,3,0]`).
    pub action: ActionText<'a>,
    /// Numeric value of the action.
    pub value: f64,
    /// The value's natural maximum.
    pub scale: f64,
    /// What the agent faced, where that matters.
    pub context: Option<f64>,
}

/// A decision's action as a row holds it: the action itself (written as [`Action::encode`]
/// writes it, without a string per action) or its text read back from a store.
#[derive(Clone, Copy)]
pub enum ActionText<'a> {
    /// An action recorded by a run.
    Action(&'a Action),
    /// An action's compact text.
    Text(&'a str),
}

impl<'a> From<&'a DecisionRecord> for DecisionRow<'a> {
    fn from(d: &'a DecisionRecord) -> Self {
        DecisionRow {
            step: d.step,
            round: d.round,
            seat: d.seat,
            role: d.role,
            action: ActionText::Action(&d.action),
            value: d.value,
            scale: d.scale,
            context: d.context,
        }
    }
}

/// Encodes a run's records. Errors name the record that cannot be stored.
pub fn encode(
    decisions: &[DecisionRecord],
    payoffs: &[PayoffRecord],
    interactions: &[InteractionRecord],
) -> Result<RowValues, String> {
    encode_any(decisions, payoffs, interactions)
}

/// A decision as [`encode_any`] reads it: a recorded decision, or one read back from a
/// store.
trait AsRow {
    fn row(&self) -> DecisionRow<'_>;
}

impl AsRow for DecisionRecord {
    fn row(&self) -> DecisionRow<'_> {
        DecisionRow::from(self)
    }
}

impl AsRow for DecisionRow<'_> {
    fn row(&self) -> DecisionRow<'_> {
        *self
    }
}

/// Encodes rows as stored. Errors name the record that cannot be stored.
pub fn encode_rows(
    decisions: &[DecisionRow<'_>],
    payoffs: &[PayoffRecord],
    interactions: &[InteractionRecord],
) -> Result<RowValues, String> {
    encode_any(decisions, payoffs, interactions)
}

/// The order of `n` records by `(step, seat)`, stable (records with equal keys keep their
/// order), as indices. Records come nearly in order (steps rise; the seats of a step may not),
/// so they are counted into one bucket per step and each bucket, a few records, sorted by
/// seat: linear where a general sort of a run's records was most of its encoding.
fn order_by_step(n: usize, key: impl Fn(usize) -> (u32, u32)) -> Vec<u32> {
    let max_step = (0..n).map(|i| key(i).0).max().unwrap_or(0) as usize;
    if n > u32::MAX as usize || max_step > 4 * n + 1024 {
        // Sparse steps: a general stable sort.
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_by_key(|&i| key(i as usize));
        return order;
    }
    let mut start = vec![0u32; max_step + 2];
    for i in 0..n {
        start[key(i).0 as usize + 1] += 1;
    }
    for s in 1..start.len() {
        start[s] += start[s - 1];
    }
    let mut next = start.clone();
    let mut order = vec![0u32; n];
    for i in 0..n {
        let step = key(i).0 as usize;
        order[next[step] as usize] = i as u32;
        next[step] += 1;
    }
    for w in start.windows(2) {
        let bucket = &mut order[w[0] as usize..w[1] as usize];
        // Insertion sort by seat: stable, and a bucket holds the few seats of one step.
        for j in 1..bucket.len() {
            let mut k = j;
            while k > 0 && key(bucket[k - 1] as usize).1 > key(bucket[k] as usize).1 {
                bucket.swap(k - 1, k);
                k -= 1;
            }
        }
    }
    order
}

/// Whether a decision's row fits a [`Line`]: a plain role of at most [`Line::ROLE`] bytes and
/// a recorded action that [fits](Line::fits). Other rows are written straight into the output.
#[inline]
fn fits_line(d: &DecisionRow<'_>) -> bool {
    d.role.len() <= Line::ROLE && plain(d.role) && matches!(d.action, ActionText::Action(a) if Line::fits(a))
}

/// Appends one decision row.
#[inline]
fn decision_row<W: Sink>(out: &mut W, d: &DecisionRow<'_>) -> Result<(), String> {
    let at = |field: &'static str| move || format!("decision {field} at step {}, seat {}", d.step, d.seat);
    out.put(b'[');
    out.fields(&[d.step, d.round, d.seat], b',');
    text(out, d.role)?;
    out.put(b',');
    match &d.action {
        // An action's text holds no character JSON escapes, so it is quoted as it is.
        ActionText::Action(a) => {
            out.put(b'"');
            out.action(a);
            out.put(b'"');
        }
        ActionText::Text(t) => text(out, t)?,
    }
    out.put(b',');
    number(out, d.value, at("value"))?;
    out.put(b',');
    number(out, d.scale, at("scale"))?;
    out.put(b',');
    match d.context {
        Some(c) => number(out, c, at("context"))?,
        None => out.put_slice(b"null"),
    }
    out.put(b']');
    Ok(())
}

/// Writes the rows `order` lists (indices, in order) into `out` as a JSON array, a line each:
/// `row` writes the row of an index, after the comma that comes before every row but the first.
fn line_array(
    out: &mut Text,
    order: &[u32],
    mut row: impl FnMut(&mut Line<'_>, usize) -> Result<(), String>,
) -> Result<(), String> {
    out.put(b'[');
    for (k, &i) in order.iter().enumerate() {
        out.line(|line| {
            if k > 0 {
                line.put(b',');
            }
            row(line, i as usize)
        })?;
    }
    out.put(b']');
    Ok(())
}

/// Encodes recorded or stored decisions with their payoffs and interactions.
fn encode_any<D: AsRow>(
    decisions: &[D],
    payoffs: &[PayoffRecord],
    interactions: &[InteractionRecord],
) -> Result<RowValues, String> {
    // Written as bytes (the text is ASCII but for roles, which are copied whole), a row at a
    // time in place ([`Text::line`]), and checked as text once per value at the end; each in a
    // buffer kept from an earlier run where there is one, sized for its table's usual row at
    // once, so that a value is not copied as it grows.
    let mut d_out = Text::in_buffer_for(buffer, 48 * decisions.len() + 2);
    let mut p_out = Text::in_buffer_for(buffer, 28 * payoffs.len() + 2);
    let mut i_out = Text::in_buffer_for(buffer, 24 * interactions.len() + 2);

    let order = order_by_step(decisions.len(), |i| {
        let r = decisions[i].row();
        (r.step, r.seat)
    });
    d_out.put(b'[');
    for (k, &i) in order.iter().enumerate() {
        let d = decisions[i as usize].row();
        if fits_line(&d) {
            d_out.line(|line| {
                if k > 0 {
                    line.put(b',');
                }
                decision_row(line, &d)
            })?;
        } else {
            if k > 0 {
                d_out.put(b',');
            }
            decision_row(&mut d_out, &d)?;
        }
    }
    d_out.put(b']');

    let order = order_by_step(payoffs.len(), |i| (payoffs[i].step, payoffs[i].seat));
    line_array(&mut p_out, &order, |line, i| {
        let p = &payoffs[i];
        line.put(b'[');
        line.fields(&[p.step, p.round, p.seat], b',');
        number(line, p.payoff, || format!("payoff at step {}, seat {}", p.step, p.seat))?;
        line.put(b']');
        Ok(())
    })?;

    // Interactions by t: counted like steps (t has no second key).
    let order = order_by_step(interactions.len(), |i| (interactions[i].t, 0));
    line_array(&mut i_out, &order, |line, i| {
        let x = &interactions[i];
        line.put(b'[');
        line.fields(&[x.t, x.a, x.b, x.name_a, x.name_b], b',');
        line.put(if x.matched { b'1' } else { b'0' });
        line.put(b']');
        Ok(())
    })?;
    let (d_bytes, p_bytes, i_bytes) = (d_out.into_bytes(), p_out.into_bytes(), i_out.into_bytes());
    let utf8 = |bytes: Vec<u8>| String::from_utf8(bytes).map_err(|e| e.to_string());
    Ok(RowValues { decisions: utf8(d_bytes)?, payoffs: utf8(p_bytes)?, interactions: utf8(i_bytes)? })
}

#[cfg(test)]
mod tests {
    use super::*;
    use agora_environments::Action;
    use rand::{Rng, SeedableRng};

    /// The store's schema, so that the views are tested as they ship.
    fn store() -> (tempfile::TempDir, crate::Store) {
        let dir = tempfile::tempdir().expect("temporary folder");
        let store = crate::Store::open(&dir.path().join("s.sqlite")).expect("store");
        (dir, store)
    }

    #[test]
    fn the_views_read_back_every_value_bit_for_bit_in_key_order() {
        let (_dir, store) = store();
        let conn = store.connection();
        conn.execute_batch(
            "INSERT INTO runs (run_id, run_key, study, block, environment, arm, variant, cell, level, roster, family,
                run_index, seed, population, committed, steps, record_hash, spec_json)
             VALUES (1, 'k', 's', 'b', 'e', 'a', 'C0', 'baseline', 'baseline', 'r', 'f', 0, '1', 2, 0, 0, 'h', '{}')",
        )
        .expect("run");
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(9);
        let mut ds = Vec::new();
        let mut ps = Vec::new();
        for step in (1..=400u32).rev() {
            for seat in [1u32, 0] {
                // Every fourth step a whole number (written as a JSON integer), one of them
                // zero and one minus zero (written as serde_json writes it).
                let value: f64 = match step {
                    36 => 0.0,
                    12 => -0.0,
                    s if s % 4 == 0 => f64::from(s as i32 - 200) * 50.0,
                    _ => rng.random::<f64>() * 10f64.powi(rng.random_range(-8..8)),
                };
                ds.push(DecisionRecord {
                    step,
                    round: step,
                    seat,
                    role: if seat == 0 { "speaker" } else { "a \"quoted\" role" },
                    action: Action::Amount(step as i64),
                    value,
                    scale: 1.0 / 3.0,
                    context: (step % 3 == 0).then_some(-value),
                });
                ps.push(PayoffRecord { step, round: step, seat, payoff: value * 7.0 });
            }
        }
        let is: Vec<InteractionRecord> = (1..=50u32)
            .rev()
            .map(|t| InteractionRecord { t, a: t % 5, b: t % 7, name_a: t, name_b: t + 1, matched: t % 2 == 0 })
            .collect();
        let rows = encode(&ds, &ps, &is).expect("encode");
        conn.execute(
            "INSERT INTO run_rows (run_id, decisions, payoffs, interactions) VALUES (1, ?1, ?2, ?3)",
            [&rows.decisions, &rows.payoffs, &rows.interactions],
        )
        .expect("insert");
        let mut want = ds.clone();
        want.sort_by_key(|d| (d.step, d.seat));
        type Row = (u32, u32, u32, String, String, f64, f64, Option<f64>);
        let got: Vec<Row> = conn
            .prepare("SELECT step, round, seat, role, action, value, scale, context FROM decisions WHERE run_id = 1")
            .expect("query")
            .query_map([], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?))
            })
            .expect("rows")
            .map(|r| r.expect("row"))
            .collect();
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(
                (g.0, g.1, g.2, g.3.as_str(), g.4.clone()),
                (w.step, w.round, w.seat, w.role, w.action.encode())
            );
            assert_eq!(g.5.to_bits(), w.value.to_bits());
            assert_eq!(g.6.to_bits(), w.scale.to_bits());
            assert_eq!(g.7.map(f64::to_bits), w.context.map(f64::to_bits));
        }
        let payoffs: Vec<(u32, u32, f64)> = conn
            .prepare("SELECT step, seat, payoff FROM payoffs")
            .expect("query")
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .expect("rows")
            .map(|r| r.expect("row"))
            .collect();
        let mut pw = ps.clone();
        pw.sort_by_key(|p| (p.step, p.seat));
        assert!(payoffs
            .iter()
            .zip(&pw)
            .all(|(g, w)| (g.0, g.1, g.2.to_bits()) == (w.step, w.seat, w.payoff.to_bits())));
        let matched: Vec<(u32, bool)> = conn
            .prepare("SELECT t, matched FROM interactions")
            .expect("query")
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("rows")
            .map(|r| r.expect("row"))
            .collect();
        assert_eq!(matched, (1..=50u32).map(|t| (t, t % 2 == 0)).collect::<Vec<_>>());
        let types: String = conn
            .query_row(
                "SELECT typeof(step) || typeof(value) || typeof(context) FROM decisions WHERE step = 1",
                [],
                |r| r.get(0),
            )
            .expect("types");
        assert_eq!(types, "integerrealnull", "the views give the old columns' types");
        // A whole number stored as a JSON integer is still a REAL in the views.
        let types: String = conn
            .query_row(
                "SELECT group_concat(DISTINCT typeof(d.value) || typeof(d.scale) || typeof(d.context) || typeof(p.payoff))
                 FROM decisions d JOIN payoffs p USING (run_id, step, seat) WHERE d.step IN (12, 24, 36, 48)",
                [],
                |r| r.get(0),
            )
            .expect("types");
        assert_eq!(types, "realrealrealreal");
        assert!(rows.decisions.contains(",-8800,"), "whole numbers are written without a fraction");
    }

    #[test]
    fn numbers_and_texts_are_written_as_serde_json_writes_them_whole_numbers_as_integers() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(3);
        for _ in 0..10_000 {
            let x: f64 = (rng.random::<f64>() - 0.5) * 10f64.powi(rng.random_range(-300..300));
            let mut out = Vec::new();
            number(&mut out, x, String::new).expect("finite");
            assert_eq!(out, serde_json::to_string(&x).expect("json").into_bytes());
        }
        // Whole numbers, written by the shortcut, around its bounds and at its edges.
        let whole = (-2000..2000)
            .map(f64::from)
            .chain([-0.0, 0.0, 1e9 - 1.0, -(1e9 - 1.0), 1e9, -1e9, 1e15, 4503599627370496.0, 1e300])
            .chain((0..10_000).map(|_| f64::from(rng.random::<i32>()) * f64::from(rng.random_range(1..4u8))));
        for x in whole {
            let mut out = Vec::new();
            number(&mut out, x, String::new).expect("finite");
            let want = stored(x).to_string();
            let got = String::from_utf8(out).expect("utf8");
            assert_eq!(got, want, "{x:?}");
            // Read back as JSON, it is the same number.
            assert_eq!(serde_json::from_str::<f64>(&got).expect("number").to_bits(), x.to_bits(), "{x:?}");
        }
        for s in ["speaker", "a \"quoted\" role", "back\\slash", "tab\there", "é"] {
            let mut out = Vec::new();
            text(&mut out, s).expect("text");
            assert_eq!(out, serde_json::to_string(s).expect("json").into_bytes());
        }
    }

    #[test]
    fn the_step_order_is_a_stable_sort_by_step_and_seat() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(11);
        for case in 0..300 {
            let n = rng.random_range(0..200usize);
            // Dense steps, sparse steps (the general sort), and repeated keys.
            let top = if case % 3 == 0 { 1_000_000 } else { 1 + n as u32 / 2 };
            let keys: Vec<(u32, u32)> =
                (0..n).map(|_| (rng.random_range(0..=top), rng.random_range(0..4u32))).collect();
            let mut want: Vec<u32> = (0..n as u32).collect();
            want.sort_by_key(|&i| keys[i as usize]);
            assert_eq!(order_by_step(n, |i| keys[i]), want, "case {case}");
        }
    }

    /// A number as a row holds it, as a JSON value: a whole number below 10^9 in magnitude
    /// (minus zero aside) as an integer, any other as serde_json writes the `f64`.
    fn stored(x: f64) -> serde_json::Value {
        whole(x).map_or_else(|| serde_json::json!(x), |n| serde_json::json!(n))
    }

    #[test]
    fn rows_are_what_serde_json_writes_of_them_on_every_path() {
        // Roles short and long, plain and escaped; actions of every kind and length, and read
        // back as text: the fast path (a line written in place) and the general one agree with
        // serde_json's writing of the same rows.
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(12);
        let long: &'static str = Box::leak("r".repeat(Line::ROLE + 1).into_boxed_str());
        let edge: &'static str = Box::leak("r".repeat(Line::ROLE).into_boxed_str());
        let roles = ["speaker", "a \"quoted\" role", long, edge, "é", ""];
        let mut ds = Vec::new();
        for step in (1..=300u32).rev() {
            for seat in [2u32, 0, 1] {
                let x: f64 = (rng.random::<f64>() - 0.5) * 10f64.powi(rng.random_range(-20..20));
                let action = match rng.random_range(0..4) {
                    0 => Action::Choice(rng.random::<u32>() >> rng.random_range(0..32)),
                    1 => Action::Amount(rng.random::<i64>() >> rng.random_range(0..64)),
                    _ => Action::Allocation(
                        (0..rng.random_range(0..5)).map(|_| rng.random::<i64>() >> rng.random_range(0..64)).collect(),
                    ),
                };
                ds.push(DecisionRecord {
                    step,
                    round: step,
                    seat,
                    role: roles[rng.random_range(0..roles.len())],
                    action,
                    value: if rng.random::<bool>() { x.round() } else { x },
                    scale: f64::from(rng.random_range(1..100u32)),
                    context: rng.random::<bool>().then_some(-x),
                });
            }
        }
        let ps: Vec<PayoffRecord> = ds
            .iter()
            .map(|d| PayoffRecord { step: d.step, round: d.round, seat: d.seat, payoff: d.value * 3.0 })
            .collect();
        let is: Vec<InteractionRecord> = (1..=300u32)
            .rev()
            .map(|t| InteractionRecord {
                t,
                a: t % 5,
                b: u32::MAX - t,
                name_a: t * 977,
                name_b: t,
                matched: t % 3 == 0,
            })
            .collect();
        let rows = encode(&ds, &ps, &is).expect("encode");
        let mut sorted: Vec<&DecisionRecord> = ds.iter().collect();
        sorted.sort_by_key(|d| (d.step, d.seat));
        let want: Vec<serde_json::Value> = sorted
            .iter()
            .map(|d| {
                serde_json::json!([
                    d.step,
                    d.round,
                    d.seat,
                    d.role,
                    d.action.encode(),
                    stored(d.value),
                    stored(d.scale),
                    d.context.map(stored)
                ])
            })
            .collect();
        assert_eq!(rows.decisions, serde_json::to_string(&want).expect("json"));
        // Read back as text (a store's rows re-encoded), the same value.
        let texts: Vec<String> = ds.iter().map(|d| d.action.encode()).collect();
        let as_text: Vec<DecisionRow<'_>> = ds
            .iter()
            .zip(&texts)
            .map(|(d, t)| DecisionRow { action: ActionText::Text(t), ..DecisionRow::from(d) })
            .collect();
        assert_eq!(encode_rows(&as_text, &ps, &is).expect("encode").decisions, rows.decisions);
        let mut pw: Vec<&PayoffRecord> = ps.iter().collect();
        pw.sort_by_key(|p| (p.step, p.seat));
        let want: Vec<serde_json::Value> =
            pw.iter().map(|p| serde_json::json!([p.step, p.round, p.seat, stored(p.payoff)])).collect();
        assert_eq!(rows.payoffs, serde_json::to_string(&want).expect("json"));
        let want: Vec<serde_json::Value> = is
            .iter()
            .rev()
            .map(|x| serde_json::json!([x.t, x.a, x.b, x.name_a, x.name_b, u8::from(x.matched)]))
            .collect();
        assert_eq!(rows.interactions, serde_json::to_string(&want).expect("json"));
    }

    #[test]
    fn a_value_json_cannot_hold_is_refused_by_name() {
        let d = DecisionRecord {
            step: 3,
            round: 3,
            seat: 1,
            role: "r",
            action: Action::Choice(0),
            value: f64::NAN,
            scale: 1.0,
            context: None,
        };
        let err = encode(&[d], &[], &[]).err().expect("refused");
        assert!(err.contains("value at step 3, seat 1"), "{err}");
    }
}
