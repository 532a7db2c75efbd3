//! The profile's outputs: each model's table (measure, centre, inner, outer, coverage, status)
//! as JSON, Markdown and CSV, and the stored profiles the report draws.

use std::path::Path;

use crate::score::rows::{profile_table, ProfileLine};
use agora_agents::llm::ModelSpec;
use serde::Serialize;
use serde_json::json;

use super::{gr, store, ProfileStudy};

/// One model's profile: the table, and GR's comparisons.
#[derive(Clone, Debug, Serialize)]
pub struct ModelProfile {
    /// The model's name in the study.
    pub model: String,
    /// Its served id.
    pub served_id: String,
    /// Whether the study ran fewer responses than the seed (opted in).
    pub reduced_protocol: bool,
    /// The table.
    pub measures: Vec<ProfileLine>,
    /// General Robustness.
    pub general_robustness: Option<serde_json::Value>,
}

fn fmt_range(r: Option<[f64; 2]>) -> String {
    r.map_or("–".into(), |[a, b]| format!("[{a:.1}, {b:.1}]"))
}

impl ModelProfile {
    /// The table as Markdown.
    pub fn markdown(&self) -> String {
        let mut s = format!(
            "## Profile of {} ({}){}\n\n| measure | centre | inner | outer | coverage | status |\n|---|---|---|---|---|---|\n",
            self.model,
            self.served_id,
            if self.reduced_protocol { " — reduced protocol" } else { "" }
        );
        for l in &self.measures {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {}/{} ref, {}/{} checks | {} |\n",
                l.measure,
                l.centre.map_or("–".into(), |c| format!("{c:.1}")),
                fmt_range(l.inner),
                fmt_range(l.outer),
                l.coverage.reference_valid,
                l.coverage.reference_slots,
                l.coverage.check_valid,
                l.coverage.check_slots,
                l.status
            ));
        }
        if let Some(gr) = &self.general_robustness {
            s.push_str(&format!(
                "\nGeneral Robustness: {} of {} slots usable, {} of {} adopted answers strictly in the requested format.\n",
                gr["usable"], gr["slots"], gr["strict"], gr["usable"]
            ));
        }
        s
    }
}

/// One model's profile from the store's records of `study`.
pub fn model_profile(
    conn: &rusqlite::Connection,
    study: &ProfileStudy,
    spec: &ModelSpec,
) -> crate::error::Result<ModelProfile> {
    let rows = store::read_rows(conn, &study.name, &spec.name)?;
    let measures = profile_table(&rows);
    let gr = if study.general_robustness {
        Some(gr::summary(&store::read_gr(conn, &study.name, &spec.name)?, &spec.name)?)
    } else {
        None
    };
    Ok(ModelProfile {
        model: spec.name.clone(),
        served_id: spec.served_id.clone(),
        reduced_protocol: study.reduced_protocol,
        measures,
        general_robustness: gr,
    })
}

/// Writes profile.json, profile.md and profile.csv into `out`.
pub fn write_outputs(out: &Path, study: &ProfileStudy, models: &[ModelProfile]) -> crate::error::Result<()> {
    std::fs::create_dir_all(out).map_err(crate::Error::write(out))?;
    let json =
        json!({"study": study.name, "master_seed": study.master_seed, "responses": study.responses, "models": models});
    crate::write_named(out.join("profile.json"), serde_json::to_string_pretty(&json)?)?;
    let md: String = models.iter().map(ModelProfile::markdown).collect::<Vec<_>>().join("\n");
    crate::write_named(out.join("profile.md"), md)?;
    crate::write_named(out.join("profile.csv"), profile_csv(models))?;
    Ok(())
}

/// `profile.csv`: one line per model and measure (RFC 4180: a model name, a status or any cell
/// holding a comma, a quote or a line break is quoted, a quote in it doubled).
pub fn profile_csv(models: &[ModelProfile]) -> String {
    let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::Any(b'\n')).from_writer(Vec::new());
    let num = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v}"));
    let header = [
        "model",
        "measure",
        "centre",
        "inner_low",
        "inner_high",
        "outer_low",
        "outer_high",
        "checks",
        "reference_valid",
        "reference_slots",
        "check_valid",
        "check_slots",
        "status",
    ];
    let mut written = w.write_record(header);
    for m in models {
        for l in &m.measures {
            written = written.and_then(|()| {
                w.write_record([
                    m.model.clone(),
                    l.measure.clone(),
                    num(l.centre),
                    num(l.inner.map(|r| r[0])),
                    num(l.inner.map(|r| r[1])),
                    num(l.outer.map(|r| r[0])),
                    num(l.outer.map(|r| r[1])),
                    l.checks.to_string(),
                    l.coverage.reference_valid.to_string(),
                    l.coverage.reference_slots.to_string(),
                    l.coverage.check_valid.to_string(),
                    l.coverage.check_slots.to_string(),
                    l.status.clone(),
                ])
            });
        }
    }
    written.expect("invariant: a CSV writer into memory does not fail");
    let bytes = w.into_inner().expect("invariant: a CSV writer into memory flushes");
    String::from_utf8(bytes).expect("invariant: the cells are text")
}

/// Every model's profile table in a store (for the report): (model, served id, lines).
pub fn stored_profiles(conn: &rusqlite::Connection) -> crate::error::Result<Vec<(String, String, Vec<ProfileLine>)>> {
    let mut out = Vec::new();
    for (study, model, served) in store::profiled_models(conn)? {
        let rows = store::read_rows(conn, &study, &model)?;
        out.push((model, served, profile_table(&rows)));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::rows::{Coverage, ProfileLine};

    #[test]
    fn profile_csv_quotes_a_model_name_and_a_status_and_reads_back_field_for_field() {
        let line = ProfileLine {
            measure: "a1".into(),
            centre: Some(0.25),
            inner: Some([0.2, 0.3]),
            outer: None,
            checks: 3,
            coverage: Coverage { reference_valid: 9, reference_slots: 10, check_valid: 4, check_slots: 4 },
            status: "outer unavailable: \"K\" is 3, fewer than 4".into(),
        };
        let model = ModelProfile {
            model: "llama, 8b".into(),
            served_id: "s".into(),
            reduced_protocol: false,
            measures: vec![line],
            general_robustness: None,
        };
        let text = profile_csv(&[model]);
        let mut r = csv::Reader::from_reader(text.as_bytes());
        let rows: Vec<csv::StringRecord> = r.records().collect::<Result<_, _>>().expect("it parses");
        assert_eq!(rows.len(), 1);
        let row = &rows[0];
        assert_eq!(row.len(), 13, "{text}");
        assert_eq!(&row[0], "llama, 8b");
        assert_eq!(&row[2], "0.25");
        assert_eq!(&row[5], "", "an absent bound is an empty cell");
        assert_eq!(&row[12], "outer unavailable: \"K\" is 3, fewer than 4");
        assert!(text.starts_with("model,measure,centre,"), "{text}");
    }
}
