//! The report page: one self-contained HTML string. Model replies are untrusted text:
//! everything taken from the store is escaped.

use std::fmt::Write as _;

use agora_analysis::analyze::{Analysis, ContrastRow, Table};

use super::figures::Figure;
use super::queries::{Excerpt, Model, NamingRun, Probes, Study};

/// Escapes text for HTML element content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The file stem of the `i`-th figure (from 0) in `figures/`: its number and its caption in
/// lower-case words joined by hyphens.
pub fn figure_stem(i: usize, caption: &str) -> String {
    let slug: String = caption
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' })
        .collect::<String>()
        .split('-')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    format!("{:02}-{slug}", i + 1)
}

/// Everything on the page besides the analysis.
pub struct Page<'a> {
    pub studies: &'a [Study],
    pub figures: &'a [(&'a str, Figure)],
    pub models: &'a [Model],
    pub probes: &'a [Probes],
    pub naming_runs: &'a [NamingRun],
    pub excerpts: &'a [Excerpt],
}

/// The whole report page.
pub fn page(analysis: &Analysis, p: &Page) -> String {
    let mut h = String::new();
    h.push_str("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Agora report</title><style>");
    h.push_str("body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}table{border-collapse:collapse;margin:1em 0;font-size:13px}th,td{border:1px solid #bbb;padding:3px 6px;text-align:left}th{background:#eee}figure{margin:1.5em 0}figcaption{font-weight:bold;margin-bottom:.4em}pre{white-space:pre-wrap;background:#f6f6f6;padding:.5em}");
    h.push_str("</style></head><body><h1>Agora report</h1>");
    studies(&mut h, p.studies);
    let _ = write!(h, "<p>{} runs analysed.</p><h2>Figures</h2>", analysis.runs);
    figures(&mut h, p.figures);
    for t in analysis.tables() {
        let _ = write!(h, "<h2>{}</h2>", escape(t.title));
        if t.rows.is_empty() {
            h.push_str("<p>No data in this store.</p>");
        } else {
            h.push_str(&table(&t, t.name));
        }
    }
    models(&mut h, p.models);
    contamination(&mut h, &analysis.contrasts, p.probes);
    naming_runs(&mut h, p.naming_runs);
    excerpts(&mut h, p.excerpts);
    h.push_str("</body></html>");
    h
}

fn studies(h: &mut String, studies: &[Study]) {
    h.push_str("<h2>Studies and plans</h2><table id=\"studies\"><tr><th>study</th><th>plan hash</th><th>master seed</th><th>runs</th></tr>");
    for s in studies {
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&s.study),
            escape(&s.plan_hash),
            escape(&s.master_seed),
            s.runs
        );
    }
    h.push_str("</table>");
}

/// The figures inline as SVG, each with links to its PNG and SVG files.
fn figures(h: &mut String, figures: &[(&str, Figure)]) {
    for (i, (caption, fig)) in figures.iter().enumerate() {
        let stem = figure_stem(i, caption);
        let _ = write!(
            h,
            "<figure id=\"figure-{i}\" class=\"figure\"><figcaption>{} <a href=\"figures/{stem}.png\">PNG</a> \
             <a href=\"figures/{stem}.svg\">SVG</a></figcaption>{}</figure>",
            escape(caption),
            fig.svg
        );
    }
}

/// An analysis table.
fn table(t: &Table, id: &str) -> String {
    let mut s = format!("<table id=\"{}\"><thead><tr>", escape(id));
    for c in &t.columns {
        let _ = write!(s, "<th>{}</th>", escape(c));
    }
    s.push_str("</tr></thead><tbody>");
    for r in &t.rows {
        s.push_str("<tr>");
        for c in r {
            let _ = write!(s, "<td>{}</td>", escape(c));
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table>");
    s
}

/// Models with their serving facts, as the study declared them, and the calls each made.
fn models(h: &mut String, models: &[Model]) {
    h.push_str("<h2>Models and serving notes</h2>");
    if models.is_empty() {
        h.push_str("<p>No language model is declared in this store's studies: every roster is classical.</p>");
        return;
    }
    h.push_str(
        "<table id=\"models\"><tr><th>model</th><th>family</th><th>served id</th><th>endpoints</th>\
         <th>quantisation</th><th>serving notes</th><th>structured output</th><th>temperature</th>\
         <th>max tokens</th><th>calls recorded</th></tr>",
    );
    for m in models {
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td></tr>",
            escape(&m.name),
            escape(&m.family),
            escape(&m.served_id),
            escape(&m.endpoints),
            escape(&m.quantisation),
            escape(&m.notes),
            escape(&m.structured),
            m.temperature,
            m.max_tokens,
            m.calls,
        );
    }
    h.push_str("</table>");
}

/// Contamination: priming and probe contrasts, and how often the paradigm was recognised.
fn contamination(h: &mut String, contrasts: &[ContrastRow], probes: &[Probes]) {
    h.push_str("<h2>Contamination</h2>");
    let rows: Vec<&ContrastRow> =
        contrasts.iter().filter(|c| c.family_of_tests == "priming" || c.family_of_tests == "contamination").collect();
    if rows.is_empty() && probes.is_empty() {
        h.push_str("<p>No priming or recognition-probe cells in this store.</p>");
    }
    for c in rows {
        let _ = write!(
            h,
            "<p>{} · {} · {}: Δ = {}, Cliff's δ = {}, Holm p = {}{}</p>",
            escape(&c.model),
            escape(&c.cell),
            escape(&c.metric),
            c.delta.map_or("-".into(), |d| format!("{d:.3}")),
            c.cliffs_delta.map_or("-".into(), |d| format!("{d:.2}")),
            c.p_holm.map_or("-".into(), |p| format!("{p:.3}")),
            c.excluded.as_ref().map(|e| format!(" (excluded: {})", escape(e))).unwrap_or_default()
        );
    }
    for p in probes {
        let _ = write!(
            h,
            "<p>{}: the recognition probe named the paradigm in {} of {} probes.</p>",
            escape(&p.model),
            p.recognised,
            p.probes
        );
    }
}

/// Per-run drill-down for the naming game.
fn naming_runs(h: &mut String, runs: &[NamingRun]) {
    if runs.is_empty() {
        return;
    }
    h.push_str("<h2>Naming game: runs</h2><p>The first 40 runs; open one to read who met whom.</p>");
    for r in runs {
        let frac = if r.sweep >= 0.0 { format!(", committed fraction {:.3}", r.sweep) } else { String::new() };
        let _ = write!(
            h,
            "<details class=\"run\"><summary>{} · {} · {} · {}{} · run {}: {} interactions</summary><table><tr><th>t</th><th>agents</th><th>names</th><th>matched</th></tr>",
            escape(&r.roster),
            escape(&r.arm),
            escape(&r.variant),
            escape(&r.cell),
            frac,
            r.run_index,
            r.steps
        );
        for m in &r.meetings {
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{} – {}</td><td>{} / {}</td><td>{}</td></tr>",
                m.t,
                m.a,
                m.b,
                m.name_a,
                m.name_b,
                if m.matched { "yes" } else { "no" }
            );
        }
        h.push_str("</table></details>");
    }
}

/// Model replies, escaped.
fn excerpts(h: &mut String, excerpts: &[Excerpt]) {
    if excerpts.is_empty() {
        return;
    }
    h.push_str("<h2>Transcript excerpts (model replies, escaped)</h2>");
    for e in excerpts {
        let _ = write!(
            h,
            "<p>{} · {} · {}</p><pre class=\"reply\">{}</pre>",
            escape(&e.model),
            escape(&e.role),
            escape(&e.parse_status),
            escape(&e.raw_reply)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escaping_neutralises_markup() {
        assert_eq!(
            escape("<script>alert('x')</script> & \"y\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;y&quot;"
        );
    }
}
