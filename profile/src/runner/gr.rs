//! General Robustness in the profile (the profile methods §GR): asking the 23 conditions and summarising
//! one model's 21 comparisons with its usable and strictly compliant answers (§GR3).

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use crate::score::gr_binary::{binary_comparison, BinaryCounts};
use crate::score::gr_open::{derive_seed, open_comparison};
use crate::tasks::gr::{Format, Wording, OPEN_MAX};
use serde_json::json;

use super::ask::{Answer, Ask, Asked};
use super::run::{Ctx, Job};
use crate::error::Error;
use crate::tasks::gr_review::Reviewed;

/// A stored GR row: (condition, format, class, value, strict, support — the wording the value
/// was read from, `None` without a value or in a store written before it was recorded).
pub use agora_records::families::profile::GrRow;

/// One General Robustness slot's record.
#[derive(Clone, Debug)]
pub struct GrRecorded {
    /// The condition's identifier.
    pub condition: &'static str,
    /// `open` or `binary`.
    pub format: &'static str,
    /// `reference`, `core` or `secondary`.
    pub class: &'static str,
    /// 0-based slot.
    pub slot: u32,
    /// The slot's key: the store's resume key and the reply cache's slot.
    pub slot_key: String,
    /// The economic value: dollars given (open) or `equal` / `self-only` (binary).
    pub value: Option<String>,
    /// Whether the adopted answer matches the requested format exactly.
    pub strict: bool,
    /// The wording of the adopted reply the value was read from (§GR3's review: a JSON object,
    /// a decision such as `I give $5`, or the bare reply); `None` without a value.
    pub support: Option<String>,
    /// The question.
    pub prompt: String,
    /// The attempts.
    pub asked: Asked,
}

/// The GR slots that `done` (the slot keys already recorded) does not hold.
pub fn jobs(
    ctx: &Arc<Ctx>,
    wording: &Wording,
    responses: u32,
    done: &HashSet<String>,
) -> crate::error::Result<Vec<Job<GrRecorded>>> {
    let conditions = wording.conditions().map_err(|(f, r)| Error::BadInput(format!("gr.ron: field `{f}`: {r}")))?;
    let mut out: Vec<Job<GrRecorded>> = Vec::new();
    for c in conditions {
        for slot in 0..responses {
            let slot_key = format!("profile/{}/gr/{}/{slot}", ctx.study, c.id);
            if done.contains(&slot_key) {
                continue;
            }
            let (asker, c) = (ctx.asker.clone(), c.clone());
            out.push((
                slot_key.clone(),
                Box::pin(async move {
                    let ask = match c.format {
                        Format::Open => Ask::Amount { max: OPEN_MAX },
                        Format::Binary => Ask::Choice { labels: c.shown.iter().map(|(l, _)| l.clone()).collect() },
                    };
                    // GR's full-answer review (§GR3) reads the whole visible reply; the wording of
                    // the answer adopted (the last read, as the first usable attempt ends the slot) is
                    // kept with it.
                    let support: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);
                    // A reply cut at the token limit is not a complete visible reply: usable only
                    // where a complete JSON answer came before the cut, and then read as a whole.
                    let read = |reply: &str, cut: bool| -> Result<Answer, String> {
                        if cut {
                            let text = agora_reply::strip_deliberation(reply);
                            let answered = agora_reply::first_object(&text).is_some_and(|(_, _, m)| {
                                agora_reply::answer_keys(&c.field).iter().any(|k| m.contains_key(*k))
                            });
                            if !answered {
                                return Err("truncated".into());
                            }
                        }
                        let review = crate::tasks::gr_review::review(reply, &c)?;
                        if let Ok(mut s) = support.lock() {
                            *s = Some(review.support);
                        }
                        Ok(match review.answer {
                            Reviewed::Amount(a) => Answer::Amount(a),
                            Reviewed::Label(i) => Answer::Label(i),
                        })
                    };
                    let asked = asker.ask_with(&c.text, &c.field, &ask, &slot_key, &read).await?;
                    let value = asked.answer.and_then(|a| match (a, c.format) {
                        (Answer::Amount(x), Format::Open) => Some(x.to_string()),
                        (Answer::Label(i), Format::Binary) => c.shown.get(i).map(|(_, m)| (*m).to_string()),
                        _ => None,
                    });
                    let strict =
                        value.is_some() && asked.attempts.last().is_some_and(|a| ask.strict(&a.reply, &c.field));
                    let support = if value.is_some() { support.into_inner().ok().flatten() } else { None };
                    Ok(GrRecorded {
                        condition: c.id,
                        format: if c.format == Format::Open { "open" } else { "binary" },
                        class: c.class,
                        slot,
                        slot_key,
                        value,
                        strict,
                        support,
                        prompt: c.text,
                        asked,
                    })
                }),
            ));
        }
    }
    Ok(out)
}

/// One GR slot of a condition: its format, its value (if usable), whether it was strict, its class.
type Slot = (String, Option<String>, bool, String);

/// GR's 21 comparisons of one model (§GR1, §GR2) from its stored rows, with usable and strict
/// counts (§GR3).
pub fn summary(rows: &[GrRow], model: &str) -> crate::error::Result<serde_json::Value> {
    let mut by: BTreeMap<String, Vec<Slot>> = BTreeMap::new();
    for (condition, format, class, value, strict, _) in rows {
        by.entry(condition.clone()).or_default().push((format.clone(), value.clone(), *strict, class.clone()));
    }
    let slots = rows.len();
    let usable = rows.iter().filter(|r| r.3.is_some()).count();
    let strict = rows.iter().filter(|r| r.3.is_some() && r.4).count();
    let mut comparisons = Vec::new();
    let values = |id: &str| -> Vec<Option<String>> {
        by.get(id).map(|v| v.iter().map(|x| x.1.clone()).collect()).unwrap_or_default()
    };
    for (id, list) in &by {
        let (format, class) = (&list[0].0, &list[0].3);
        if class == "reference" {
            continue;
        }
        let reference = if format == "open" { "OE-REF" } else { "BI-REF" };
        let (r, c) = (values(reference), values(id));
        let complete =
            r.iter().all(Option::is_some) && c.iter().all(Option::is_some) && !r.is_empty() && r.len() == c.len();
        let result = if !complete {
            json!({"status": format!("unavailable: {} of {} reference and {} of {} check answers usable (GR3 needs every slot; `--retry-missing` asks the missing ones again)",
                r.iter().flatten().count(), r.len(), c.iter().flatten().count(), c.len())})
        } else if format == "open" {
            let amounts =
                |v: &[Option<String>]| -> Vec<u32> { v.iter().flatten().filter_map(|x| x.parse().ok()).collect() };
            match open_comparison(&amounts(&r), &amounts(&c), 10_000, 0.95, derive_seed(model, id)) {
                Ok(o) => serde_json::to_value(o)?,
                Err(e) => json!({"status": format!("unavailable: {e}")}),
            }
        } else {
            let counts = |v: &[Option<String>]| BinaryCounts {
                equal: v.iter().flatten().filter(|x| *x == "equal").count() as u64,
                self_only: v.iter().flatten().filter(|x| *x == "self-only").count() as u64,
            };
            match binary_comparison(counts(&r), counts(&c), 0.05) {
                Ok(b) => serde_json::to_value(b)?,
                Err(e) => json!({"status": format!("unavailable: {e}")}),
            }
        };
        comparisons.push(json!({"condition": id, "format": format, "class": class, "result": result}));
    }
    Ok(json!({
        "slots": slots,
        "usable": usable,
        "strict": strict,
        "strict_share": if usable > 0 { Some(strict as f64 / usable as f64) } else { None },
        "strict_denominator": usable,
        "comparisons": comparisons,
    }))
}
