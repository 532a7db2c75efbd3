//! The report page: one self-contained HTML string. Model replies are untrusted text:
//! everything taken from the store is escaped.

use std::fmt::Write as _;

use agora_analysis::analyze::{Analysis, ContrastRow, Table};

use super::audit::AuditTables;
use super::figures::tree::Node;
use super::figures::Figure;
use super::profile::{measure_name, signed, Joined, StoredProfile};
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
    /// The audit's tables, each absent where the store lacks it.
    pub audit: &'a AuditTables,
    /// The reasoning tree drawn, if any.
    pub tree: Option<&'a Node>,
    /// The behavioural profiles in the store, one per model.
    pub profiles: &'a [StoredProfile],
    /// The profiled models joined to their society decisions.
    pub joined: &'a [Joined<'a>],
    /// Each claim's outcome in the store's human runs (`agora serve`), if any.
    pub humans: &'a [agora_analysis::human_anchors::HumanAnchor],
    /// The score tables of the store's round-robin tournaments, if any.
    pub tournaments: &'a [agora_analysis::tournament::Table],
}

/// The whole report page.
pub fn page(analysis: &Analysis, p: &Page) -> String {
    let mut h = String::new();
    h.push_str("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Agora report</title><style>");
    h.push_str("body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}table{border-collapse:collapse;margin:1em 0;font-size:13px}th,td{border:1px solid #bbb;padding:3px 6px;text-align:left}th{background:#eee}figure{margin:1.5em 0}figcaption{font-weight:bold;margin-bottom:.4em}pre{white-space:pre-wrap;background:#f6f6f6;padding:.5em}");
    h.push_str("</style></head><body><h1>Agora report</h1>");
    // What a reader came for first: which claims hold, at which tier, and what stops them.
    verdicts(&mut h, analysis);
    deposit(&mut h, &analysis.deposit);
    humans(&mut h, analysis, p.humans);
    let _ = write!(h, "<p>{} runs analysed.</p><h2>Figures</h2>", analysis.runs);
    figures(&mut h, p.figures);
    for t in analysis.tables().into_iter().filter(|t| t.name != "verdicts") {
        let _ = write!(h, "<h2>{}</h2>", escape(t.title));
        if t.rows.is_empty() {
            h.push_str("<p>No data in this store.</p>");
        } else {
            h.push_str(&table(&t, t.name));
        }
    }
    tournaments(&mut h, p.tournaments);
    models(&mut h, p.models);
    behavioural_profile(&mut h, p);
    contamination(&mut h, &analysis.contrasts, p.probes);
    audit(&mut h, p);
    naming_runs(&mut h, p.naming_runs);
    excerpts(&mut h, p.excerpts);
    h.push_str("<h2 id=\"provenance\">Provenance</h2>");
    studies(&mut h, p.studies);
    h.push_str("</body></html>");
    h
}

/// The verdict table: one row per claim, the tier the models reach and the classical rosters
/// reach (graded apart), each with the first unmet condition beside it and the evidence on
/// hover.
fn verdicts(h: &mut String, analysis: &Analysis) {
    h.push_str(
        "<h2 id=\"verdict-table\">Verdicts</h2><p>Each claim graded on the certification ladder: Tier 1 \
         exploratory (holds at baseline in one model), Tier 2 robust (the environment's canonical effect \
         survives the perturbation cells in three model families and C3), Tier 3 transferable (equivalent \
         to the anchor, and the transcript audit shows the human mechanism). Hover a tier for its evidence.</p>\
         <table id=\"verdicts\"><thead><tr><th>claim</th><th>models: tier</th><th>first unmet condition</th>\
         <th>classical rosters: tier</th><th>first unmet condition</th></tr></thead><tbody>",
    );
    for v in &analysis.verdicts {
        let (c_tier, c_unmet, c_evidence) = match &v.classical {
            Some(c) => (c.tier_name.as_str(), c.first_unmet.as_deref().unwrap_or("-"), c.evidence.join("\n")),
            None => ("-", "-", String::new()),
        };
        // A verdict that rests on a deviation from the deposit is marked, the deviations on hover.
        let deviations = analysis.deposit.deviations_of(&v.claim);
        let mark = if deviations.is_empty() {
            String::new()
        } else {
            let what: Vec<String> = deviations.iter().map(|d| format!("{}: {}", d.kind.as_str(), d.what)).collect();
            format!(
                " <a class=\"deviation\" href=\"#deposit\" title=\"rests on a deviation from the deposit: {}\">†</a>",
                escape(&what.join("\n"))
            )
        };
        let _ = write!(
            h,
            "<tr><td title=\"{}\">{}{mark}</td><td title=\"{}\">{}</td><td>{}</td><td title=\"{}\">{}</td><td>{}</td></tr>",
            escape(&v.text),
            escape(&v.claim),
            escape(&v.evidence.join("\n")),
            escape(&v.tier_name),
            escape(v.first_unmet.as_deref().unwrap_or("-")),
            escape(&c_evidence),
            escape(c_tier),
            escape(c_unmet),
        );
    }
    h.push_str("</tbody></table>");
}

/// The deposit, first under the verdicts: its hash and self-attested time, the first run's time
/// and every deviation from it; a store with none says so in one line.
fn deposit(h: &mut String, section: &agora_analysis::deposit::DepositSection) {
    h.push_str("<h2 id=\"deposit\">Deposit</h2>");
    if section.deposits.is_empty() {
        let _ = write!(h, "<p id=\"deposit-none\">{}</p>", escape(agora_analysis::deposit::NO_DEPOSIT));
        return;
    }
    for d in &section.deposits {
        let _ = write!(
            h,
            "<p>Deposit <code class=\"deposit-hash\">{}</code> of the study <code>{}</code>: created {} <em>({})</em>; registry identifier {}; first run of the study {}; {} runs made under it; build deposited: {}.</p>",
            escape(&d.hash),
            escape(&d.study),
            escape(&d.created),
            escape(agora_analysis::deposit::SELF_ATTESTED),
            escape(d.doi.as_deref().unwrap_or("none recorded")),
            escape(d.first_run.as_deref().unwrap_or("not recorded")),
            d.runs_under,
            escape(&d.build),
        );
        if d.deviations.is_empty() {
            h.push_str("<p class=\"deviations-none\">No deviation from the deposit.</p>");
        } else {
            h.push_str(
                "<table class=\"deviations\"><thead><tr><th>deviation</th><th>what changed</th>\
                 <th>verdicts resting on it</th></tr></thead><tbody>",
            );
            for x in &d.deviations {
                let _ = write!(
                    h,
                    "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                    escape(x.kind.as_str()),
                    escape(&x.what),
                    escape(&if x.claims.is_empty() { "-".to_string() } else { x.claims.join(", ") })
                );
            }
            h.push_str("</tbody></table>");
        }
        let _ = write!(
            h,
            "<details><summary>What the deposit fixes and leaves open</summary><p>Fixes:</p><ul>{}</ul><p>Leaves open:</p><ul>{}</ul></details>",
            d.fixes.iter().map(|f| format!("<li>{}</li>", escape(f))).collect::<String>(),
            d.leaves_open.iter().map(|f| format!("<li>{}</li>", escape(f))).collect::<String>(),
        );
    }
}

/// The lab's participants beside the models: per claim, the outcome of the human runs (n, mean
/// and 95 % interval, runs left out for a stand-in, provenance) and each model's baseline mean.
fn humans(h: &mut String, analysis: &Analysis, humans: &[agora_analysis::human_anchors::HumanAnchor]) {
    if humans.is_empty() {
        return;
    }
    h.push_str(
        "<h2 id=\"humans\">Your participants beside the models</h2><p>Each claim's outcome in this store's \
         human runs (every seat a person, every decision theirs; runs where a stand-in played are left out), \
         beside each model's baseline mean. <code>agora analyze --human-anchors</code> grades the models \
         against these runs.</p><table id=\"humans-table\"><thead><tr><th>claim</th><th>metric</th>\
         <th>people: runs</th><th>mean [95 % CI]</th><th>left out</th><th>models: mean (runs)</th>\
         <th>provenance</th></tr></thead><tbody>",
    );
    for a in humans {
        let models: Vec<String> = analysis
            .equivalence
            .iter()
            .filter(|r| r.claim == a.claim && r.metric == a.metric)
            .map(|r| format!("{}: {} ({})", r.model, num(r.mean), r.runs))
            .collect();
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.3} {}</td><td>{}</td><td>{}</td><td>{} ({}), {}</td></tr>",
            escape(&a.claim),
            escape(&a.metric),
            a.n,
            a.mean,
            interval(Some(a.ci_low).filter(|x| x.is_finite()), Some(a.ci_high).filter(|x| x.is_finite())),
            a.excluded,
            escape(&if models.is_empty() { "-".to_string() } else { models.join("; ") }),
            escape(&a.study),
            escape(&a.study_hash[..a.study_hash.len().min(12)]),
            escape(&a.date),
        );
    }
    h.push_str("</tbody></table>");
}

/// Each round-robin tournament's score table: strategies ranked by mean payoff per round over
/// their matches against the others.
fn tournaments(h: &mut String, tables: &[agora_analysis::tournament::Table]) {
    if tables.is_empty() {
        return;
    }
    h.push_str(
        "<h2 id=\"tournaments\">Tournaments</h2><p>Every pair of strategies plays; each strategy's mean payoff \
         per round over its matches against the others ranks it; a match is won by the larger total payoff; \
         cooperation is the share of its decisions that cooperate, as played.</p>",
    );
    let opt = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.3}"));
    for (i, t) in tables.iter().enumerate() {
        let _ = write!(
            h,
            "<h3>{} / {} ({}, {}, {} matches)</h3><table id=\"tournament-{i}\"><thead><tr><th>rank</th><th>strategy</th>\
             <th>matches</th><th>mean payoff</th><th>wins</th><th>draws</th><th>losses</th><th>cooperation</th>\
             <th>vs self</th></tr></thead><tbody>",
            escape(&t.block),
            escape(&t.cell),
            escape(&t.study),
            escape(&t.environment),
            t.runs
        );
        for r in &t.rows {
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.3}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                r.rank,
                escape(&r.strategy),
                r.matches,
                r.mean_payoff,
                r.wins,
                r.draws,
                r.losses,
                opt(r.cooperation),
                opt(r.self_payoff)
            );
        }
        h.push_str("</tbody></table>");
    }
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

fn one_decimal(x: Option<f64>) -> String {
    x.filter(|v| v.is_finite()).map_or_else(|| "–".into(), |v| format!("{v:.1}"))
}

fn range(r: Option<[f64; 2]>) -> String {
    r.map_or_else(|| "–".into(), |[a, b]| format!("[{a:.1}, {b:.1}]"))
}

/// A profile line's centre with its inner range, or its status where the centre is unavailable.
fn centre_and_inner(l: Option<&agora_profile::score::rows::ProfileLine>, what: &str) -> String {
    match l {
        None => format!("{} not in this profile", escape(what)),
        Some(l) if l.centre.is_some() => format!("{} {}", one_decimal(l.centre), range(l.inner)),
        Some(l) => escape(&l.status),
    }
}

/// The behavioural profile (the profile methods, `agora profile`): each model's table, and the models
/// joined to their own decisions in the store's society runs.
fn behavioural_profile(h: &mut String, p: &Page) {
    h.push_str("<h2 id=\"profile\">Behavioural profile</h2>");
    if p.profiles.is_empty() {
        h.push_str("<p id=\"profile-none\">This store holds no behavioural profile (<code>agora profile</code>).</p>");
        return;
    }
    let fig = p.figures.iter().position(|(c, _)| *c == super::figures::profile::CAPTION);
    let _ = write!(
        h,
        "<p>The profile methods' profile (<code>agora profile</code>): per measure, the centre M (the mean of the eleven \
         question versions' reference results), the inner range I (their minimum to maximum) and the outer range O \
         (I widened by the results recomputed under the presentation checks){}. The ranges describe variation \
         across the questions and checks; they are not confidence intervals. A1–A5 combine their tasks' lines \
         (<code>a:</code> rows) with the seed's fixed weights. A1–A5, B4, C1–C3 and D1–D3 are on a 0–100 scale, \
         B1–B3 and C4 on −100 to 100. An unavailable value is not drawn; its status says why. Coverage counts the \
         valid answers of the scheduled reference and check slots.</p>",
        fig.map(|i| format!(" (<a href=\"#figure-{i}\">figure</a>)")).unwrap_or_default()
    );
    for (i, (model, served, lines)) in p.profiles.iter().enumerate() {
        let _ = write!(
            h,
            "<h3>{} ({})</h3><table id=\"profile-{i}\" class=\"profile\"><tr><th>measure</th><th>name</th>\
             <th>scale</th><th>centre</th><th>inner</th><th>outer</th><th>checks</th><th>coverage</th>\
             <th>status</th></tr>",
            escape(model),
            escape(served)
        );
        for l in lines {
            let c = l.coverage;
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
                 <td>{}/{} ref, {}/{} checks</td><td>{}</td></tr>",
                escape(&l.measure),
                escape(&measure_name(&l.measure)),
                if signed(&l.measure) { "−100..100" } else { "0–100" },
                one_decimal(l.centre),
                range(l.inner),
                range(l.outer),
                l.checks,
                c.reference_valid,
                c.reference_slots,
                c.check_valid,
                c.check_slots,
                escape(&l.status)
            );
        }
        h.push_str("</table>");
    }

    self_description(h, p);

    h.push_str(
        "<h3 id=\"profile-society-title\">Joined to the same models' society results</h3><p>Each profiled model \
         (joined on model name and served id) beside its own decisions in this store's society runs: the baseline \
         cell with C0 payoffs, every round pooled, each decision weighing the same; decisions whose slot ended in \
         a fallback (no legal answer, a random action recorded) are left out and counted. The society figure and \
         the profile task measure the same quantity on the same 0–100 scale, but with different instruments (a \
         repeated game against other agents; isolated one-shot questions), so the two sit side by side and nothing \
         is tested.</p><table id=\"profile-society\"><tr><th>model</th><th>served id</th><th>society outcome</th>\
         <th>society (0–100)</th><th>decisions</th><th>fallbacks left out</th><th>runs</th><th>profile task</th>\
         <th>task centre [inner]</th><th>measure</th><th>measure centre [inner]</th></tr>",
    );
    for j in p.joined {
        if let Some(note) = &j.note {
            let _ = write!(
                h,
                "<tr class=\"no-society\"><td>{}</td><td>{}</td><td colspan=\"9\">{}</td></tr>",
                escape(&j.model),
                escape(&j.served_id),
                escape(note)
            );
        }
        for r in &j.rows {
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
                 <td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&j.model),
                escape(&j.served_id),
                escape(r.outcome),
                one_decimal(r.society),
                r.decisions,
                r.fallbacks,
                r.runs,
                escape(&r.task),
                centre_and_inner(r.task_line, &r.task),
                escape(r.measure),
                centre_and_inner(r.measure_line, r.measure),
            );
        }
    }
    h.push_str("</table>");
}

/// The self-description (E1–E5) of each model beside its behavioural measures (A–D): an
/// exploratory view, with Agora's one declared pairing and its rank correlation across models.
fn self_description(h: &mut String, p: &Page) {
    use super::profile::{self_description, BEHAVIOURAL, DECLARED_PAIRING, SELF_DESCRIBED};
    let (rows, rho) = self_description(p.profiles);
    if rows.is_empty() {
        return;
    }
    let (e, b) = DECLARED_PAIRING;
    let _ = write!(
        h,
        "<h3 id=\"self-description-title\">Self-description beside behaviour</h3><p>Each model's answers to \
         Agora's adaptations of the IPIP-50 statements (E1–E5: how it describes its own conversational style, \
         not the profile methods' items, so not the methods' profiles) beside its choices in the behavioural \
         tasks (A–D), each as centre [inner range]. This view is exploratory: neither the profile methods nor \
         the IPIP ties a questionnaire measure to a game measure, so no column is paired with another, except \
         the one pairing Agora declares as its own, {} ({}) with {} ({}), shown only as a rank correlation \
         across models. Unlike an audit of stated values inside one decision, the two sides come from separate \
         questions; with a handful of models the interval is wide and says little.</p>\
         <table id=\"self-description\" class=\"profile\"><tr><th>model</th><th>served id</th>",
        e.to_uppercase(),
        escape(&measure_name(e)),
        b.to_uppercase(),
        escape(&measure_name(b))
    );
    for m in SELF_DESCRIBED.iter().chain(BEHAVIOURAL.iter()) {
        let _ = write!(h, "<th>{}</th>", m.to_uppercase());
    }
    h.push_str("</tr>");
    for r in &rows {
        let _ = write!(h, "<tr><td>{}</td><td>{}</td>", escape(&r.model), escape(&r.served_id));
        for (l, m) in r.described.iter().zip(SELF_DESCRIBED).chain(r.behaviour.iter().zip(BEHAVIOURAL)) {
            let _ = write!(h, "<td>{}</td>", centre_and_inner(*l, m));
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>");
    let said = match (rho.rho, rho.interval) {
        (Some(r), Some([lo, hi])) => format!("Spearman's ρ = {r:.2} over {} models, 95 % interval [{lo:.2}, {hi:.2}] (Fisher's z, Bonett–Wright variance)", rho.n),
        (Some(r), None) => format!("Spearman's ρ = {r:.2} over {} models; no interval with fewer than four", rho.n),
        _ => format!("no rank correlation: {} model(s) with both centres (three are needed, neither side constant)", rho.n),
    };
    let _ = write!(
        h,
        "<p id=\"self-description-pairing\">Declared pairing {} with {}: {}.</p>",
        e.to_uppercase(),
        b.to_uppercase(),
        escape(&said)
    );
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

fn num(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |v| format!("{v:.3}"))
}

fn interval(low: Option<f64>, high: Option<f64>) -> String {
    match (low, high) {
        (Some(l), Some(h)) => format!("[{l:.3}, {h:.3}]"),
        _ => "-".into(),
    }
}

/// The transcript audit: occurrence, dependency, coder validation, requirement verdicts and
/// the reasoning tree; a plain sentence where the store holds no audit tables.
fn audit(h: &mut String, p: &Page) {
    let a = p.audit;
    h.push_str("<h2 id=\"audit\">Transcript audit</h2>");
    if !a.any() {
        h.push_str(
            "<p id=\"audit-none\">This store holds no audit tables: its transcripts have not been audited \
             (<code>agora audit</code>), so no stated values, dependency, coder validation, requirement verdicts \
             or reasoning tree are shown.</p>",
        );
        return;
    }
    h.push_str(
        "<p>What the models state before they act, coded sentence by sentence (the SUVA audit paper §240.6–240.8). Every number \
         computed from the codes passes the coder-validation gate at its default threshold (κ ≥ 0.8 against human \
         labels on the model's own text): where the gate refuses a model's codes the cell reads <em>refused</em> with \
         the gate's reason.</p>",
    );

    h.push_str("<h3>Stated values per model</h3>");
    match &a.occurrence {
        None => h.push_str("<p>No <code>audit_responses</code> table in this store.</p>"),
        Some(rows) if rows.is_empty() => h.push_str("<p>No audited responses.</p>"),
        Some(rows) => {
            h.push_str(
                "<p>Share of coded responses (pre-action reasoning, coder output valid) stating each value at least \
                 once, with its 95 % Wilson interval (responses treated as independent, so too narrow for the \
                 decisions of one run).</p><table id=\"audit-occurrence\"><tr><th>coder</th><th>codebook</th>\
                 <th>model</th><th>value</th><th>coded</th><th>stating</th><th>share</th><th>95 % interval</th>\
                 <th>validation</th></tr>",
            );
            for o in rows {
                let (stating, share, ci) = match o.stating {
                    Some((k, sh, l, hi)) => (k.to_string(), format!("{sh:.3}"), interval(Some(l), Some(hi))),
                    None => ("refused".into(), "refused".into(), "refused".into()),
                };
                let _ = write!(
                    h,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    escape(&o.coder),
                    escape(&o.codebook),
                    escape(&o.model),
                    escape(&o.code),
                    o.coded,
                    stating,
                    share,
                    ci,
                    escape(&o.validation)
                );
            }
            h.push_str("</table>");
        }
    }

    h.push_str("<h3>Dependency of the action on each stated value</h3>");
    match &a.dependency {
        None => h.push_str(
            "<p id=\"audit-dependency-none\">No <code>audit_dependency</code> table: the store holds no coded \
             replicates (<code>agora audit replicates</code>, then <code>agora audit</code>).</p>",
        ),
        Some(rows) if rows.is_empty() => h.push_str("<p id=\"audit-dependency-none\">No dependency estimates.</p>"),
        Some(rows) => {
            h.push_str(
                "<p>Within-prompt dependency from replicated prompts: <code>lpm-fe</code> is the linear probability \
                 model with a fixed effect per prompt (CR1 by prompt), <code>logit-ame</code> the logit's average \
                 marginal effect (compare sign and significance, not size).</p><table id=\"audit-dependency\"><tr>\
                 <th>coder</th><th>model</th><th>environment</th><th>arm</th><th>cell</th><th>role</th><th>indicator</th>\
                 <th>estimator</th>\
                 <th>value</th><th>estimate</th><th>95 % interval</th><th>prompts</th><th>replicates</th>\
                 <th>status</th><th>validation</th></tr>",
            );
            for stored in rows {
                let d = &stored.row;
                let (est, ci) = match d.coef {
                    Some(c) => (format!("{c:.3}"), interval(d.ci_low, d.ci_high)),
                    None => {
                        let why =
                            if d.reason.is_empty() { d.status.clone() } else { format!("{}: {}", d.status, d.reason) };
                        (escape(&why), "-".into())
                    }
                };
                let _ = write!(
                    h,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
                     <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    escape(&stored.key.coder),
                    escape(&d.model),
                    escape(&d.environment),
                    escape(&d.arm),
                    escape(&d.cell),
                    escape(&d.role),
                    escape(&d.indicator),
                    escape(&d.estimator),
                    escape(&d.value),
                    est,
                    ci,
                    d.n_prompts,
                    d.n_replicates,
                    escape(&d.status),
                    escape(&d.validation)
                );
            }
            h.push_str("</table>");
        }
    }

    h.push_str("<h3>Coder validation</h3>");
    match &a.agreement {
        None => h.push_str(
            "<p id=\"audit-agreement-none\">No <code>audit_agreement</code> table: no human labels have been compared \
             with the coder (<code>agora audit export</code>, <code>import</code>, <code>agreement</code>), so every \
             number computed from the codes is refused.</p>",
        ),
        Some(rows) => {
            h.push_str(
                "<p>Cohen's κ between human coders (<code>humans</code>) and of each machine coder against the human \
                 reference (<code>coder</code>), per audited model, with its 95 % interval; open a row for the per-code \
                 recall and the confusion matrix (rows: the reference's code, columns: the coder's).</p>\
                 <table id=\"audit-agreement\"><tr><th>codebook</th><th>model</th><th>kind</th><th>reference</th>\
                 <th>coder</th><th>sentences</th><th>κ</th><th>95 % interval</th><th>threshold</th><th>verdict</th>\
                 <th>note</th></tr>",
            );
            for r in rows {
                let _ = write!(
                    h,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
                     <td>{}</td><td>{}</td></tr>",
                    escape(&r.codebook()),
                    escape(&r.stored.model),
                    escape(&r.stored.kind),
                    escape(&r.stored.reference),
                    escape(&r.stored.coder),
                    r.stored.n,
                    num(r.stored.kappa),
                    interval(r.stored.ci_low, r.stored.ci_high),
                    num(r.stored.min_kappa),
                    escape(r.stored.verdict.as_deref().unwrap_or("-")),
                    escape(r.stored.note.as_deref().unwrap_or(""))
                );
            }
            h.push_str("</table>");
            for r in rows.iter().filter(|r| !r.labels.is_empty()) {
                let _ = write!(
                    h,
                    "<details class=\"confusion\"><summary>{} against {} on {} ({} sentences)</summary>\
                     <table class=\"recall\"><tr><th>code</th><th>reference uses</th><th>recall</th></tr>",
                    escape(&r.stored.coder),
                    escape(&r.stored.reference),
                    escape(&r.stored.model),
                    r.stored.n
                );
                for (i, code) in r.labels.iter().enumerate() {
                    let _ = write!(
                        h,
                        "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                        escape(code),
                        r.support.get(i).copied().unwrap_or(0),
                        num(r.recall.get(i).copied().flatten())
                    );
                }
                h.push_str("</table><table class=\"confusion-matrix\"><tr><th>reference \\ coder</th>");
                for code in &r.labels {
                    let _ = write!(h, "<th>{}</th>", escape(code));
                }
                h.push_str("</tr>");
                for (code, row) in r.labels.iter().zip(&r.confusion) {
                    let _ = write!(h, "<tr><th>{}</th>", escape(code));
                    for c in row {
                        let _ = write!(h, "<td>{c}</td>");
                    }
                    h.push_str("</tr>");
                }
                h.push_str("</table></details>");
            }
        }
    }

    h.push_str("<h3>Requirement verdicts</h3>");
    match &a.requirements {
        Some(rows) if !rows.is_empty() => {
            h.push_str(
                "<p>A directional requirement passes when the one-sided lower 95 % bound clears its bound; an \
                 invariance requirement passes by two one-sided tests within ±Δ.</p><table id=\"audit-requirements\">\
                 <tr><th>requirement</th><th>model</th><th>kind</th><th>estimate</th><th>interval</th><th>bound</th>\
                 <th>verdict</th><th>reason</th><th>n</th><th>planned n</th></tr>",
            );
            for r in rows {
                let _ = write!(
                    h,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    escape(&r.requirement),
                    escape(&r.model),
                    escape(&r.kind),
                    num(r.estimate),
                    interval(r.low, r.high),
                    num(r.bound),
                    escape(&r.verdict),
                    escape(&r.reason),
                    r.n.map_or_else(|| "-".into(), |n| n.to_string()),
                    r.planned_n.map_or_else(|| "-".into(), |n| n.to_string()),
                );
            }
            h.push_str("</table>");
        }
        _ => h.push_str(
            "<p id=\"audit-requirements-none\">No requirements were evaluated: the store holds no requirement verdicts.</p>",
        ),
    }

    h.push_str("<h3>Reasoning tree</h3>");
    match (&a.tree, p.tree) {
        (Some(t), Some(root)) => {
            let fig = p.figures.iter().position(|(c, _)| *c == "Reasoning tree");
            let _ = write!(
                h,
                "<p id=\"audit-tree\">The coded reasoning of {}: consecutive repeated codes collapsed, each node \
                 counting the responses through it, each path ending with the action taken{}. Codes: {}.</p>",
                escape(&t.subject),
                fig.map(|i| format!(" (<a href=\"#figure-{i}\">figure</a>)")).unwrap_or_default(),
                escape(&t.validation)
            );
            h.push_str(
                "<table id=\"audit-tree-paths\"><tr><th>path (codes)</th><th>action</th><th>responses</th>\
                 <th>P(path | prompt)</th></tr>",
            );
            let n = root.n.max(1) as f64;
            for (codes, action, k) in root.paths() {
                let path = if codes.is_empty() { "(no coded reasoning)".to_string() } else { codes.join(" → ") };
                let _ = write!(
                    h,
                    "<tr><td>{}</td><td>{}</td><td>{k}</td><td>{:.3}</td></tr>",
                    escape(&path),
                    escape(&action),
                    k as f64 / n
                );
            }
            h.push_str("</table>");
        }
        _ => h.push_str("<p id=\"audit-tree-none\">No coded responses to draw a reasoning tree from.</p>"),
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
