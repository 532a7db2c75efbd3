//! The report page: one self-contained HTML string, rendered with minijinja from the templates
//! in `report/templates/` (built into the binary). Rust computes every section's rows and
//! formats its numbers; the templates hold the markup. Model replies are untrusted text: every
//! value a template prints is HTML-escaped on its way out (the templates are `.html`, so
//! minijinja auto-escapes them); the only markup passed through unescaped is the figures' SVG,
//! which the report's own drawing code writes (plotters escapes the text it draws).

use std::fmt;

use agora_analysis::analyze::{Analysis, ContrastRow};
use agora_profile::score::rows::{Coverage, ProfileLine};
use minijinja::{AutoEscape, Environment, Error, Output, State, Value};
use serde::Serialize;

use super::audit::AuditTables;
use super::figures::tree::Node;
use super::figures::Figure;
use super::profile::{measure_name, signed, Joined, StoredProfile};
use super::queries::{Excerpt, Model, NamingRun, Probes, Study};

/// The templates, by name: the page's frame, the page, its sections and their shared macros.
const TEMPLATES: [(&str, &str); 17] = [
    ("base.html", include_str!("../templates/base.html")),
    ("macros.html", include_str!("../templates/macros.html")),
    ("report.html", include_str!("../templates/report.html")),
    ("verdicts.html", include_str!("../templates/verdicts.html")),
    ("deposit.html", include_str!("../templates/deposit.html")),
    ("humans.html", include_str!("../templates/humans.html")),
    ("figures.html", include_str!("../templates/figures.html")),
    ("tables.html", include_str!("../templates/tables.html")),
    ("tournaments.html", include_str!("../templates/tournaments.html")),
    ("models.html", include_str!("../templates/models.html")),
    ("profile.html", include_str!("../templates/profile.html")),
    ("self_description.html", include_str!("../templates/self_description.html")),
    ("contamination.html", include_str!("../templates/contamination.html")),
    ("audit.html", include_str!("../templates/audit.html")),
    ("naming_runs.html", include_str!("../templates/naming_runs.html")),
    ("excerpts.html", include_str!("../templates/excerpts.html")),
    ("studies.html", include_str!("../templates/studies.html")),
];

/// Text escaped for HTML element content and attribute values: `&`, `<`, `>`, `"` and `'`, as
/// the page has always written them (minijinja's own escaping also rewrites `/`, which would
/// change the text of codebooks and paths without need).
struct Escaped<'a>(&'a str);

impl fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0;
        while let Some(i) = rest.find(['&', '<', '>', '"', '\'']) {
            f.write_str(&rest[..i])?;
            f.write_str(match rest.as_bytes()[i] {
                b'&' => "&amp;",
                b'<' => "&lt;",
                b'>' => "&gt;",
                b'"' => "&quot;",
                _ => "&#39;",
            })?;
            rest = &rest[i + 1..];
        }
        f.write_str(rest)
    }
}

/// How a template prints a value: text HTML-escaped where the template auto-escapes (every
/// `.html` template), values marked safe (the figures' SVG, macros' output) as they are, and
/// everything else as minijinja prints it.
fn formatter(out: &mut Output, state: &State, value: &Value) -> Result<(), Error> {
    match value.as_str() {
        Some(s) if state.auto_escape() == AutoEscape::Html && !value.is_safe() => {
            write!(out, "{}", Escaped(s)).map_err(Error::from)
        }
        _ => minijinja::escape_formatter(out, state, value),
    }
}

/// The report's templates, ready to render.
fn environment() -> Result<Environment<'static>, Error> {
    let mut env = Environment::new();
    // Block tags take their own line in the templates; the line is not part of the page.
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    // A misspelt field is an error, not an empty cell.
    env.set_undefined_behavior(minijinja::UndefinedBehavior::SemiStrict);
    env.set_formatter(formatter);
    for (name, text) in TEMPLATES {
        env.add_template(name, text)?;
    }
    Ok(env)
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
pub fn page(analysis: &Analysis, p: &Page) -> anyhow::Result<String> {
    let tables = analysis.tables();
    let report = Report {
        verdicts: verdicts(analysis),
        deposit: deposit(&analysis.deposit),
        humans: humans(analysis, p.humans),
        runs: analysis.runs,
        figures: figures(p.figures),
        tables: tables
            .iter()
            .filter(|t| t.name != "verdicts")
            .map(|t| AnalysisTable { title: t.title, id: t.name, columns: &t.columns, rows: &t.rows })
            .collect(),
        tournaments: tournaments(p.tournaments),
        models: p.models.iter().map(model).collect(),
        profile: behavioural_profile(p),
        contamination: contamination(&analysis.contrasts, p.probes),
        audit: audit(p),
        naming_runs: p.naming_runs.iter().map(naming_run).collect(),
        excerpts: p
            .excerpts
            .iter()
            .map(|e| ExcerptRow {
                model: &e.model,
                role: &e.role,
                parse_status: &e.parse_status,
                raw_reply: &e.raw_reply,
            })
            .collect(),
        studies: p
            .studies
            .iter()
            .map(|s| StudyRow { study: &s.study, plan_hash: &s.plan_hash, master_seed: &s.master_seed, runs: s.runs })
            .collect(),
    };
    render(&report)
}

/// Renders the page from its sections.
fn render(report: &Report) -> anyhow::Result<String> {
    let env = environment()?;
    let html = env.get_template("report.html")?.render(report)?;
    Ok(html)
}

/// The page's data, one field per section (`report.html` lays them out).
#[derive(Serialize)]
struct Report<'a> {
    verdicts: Vec<VerdictRow<'a>>,
    deposit: DepositView<'a>,
    humans: Vec<HumanRow<'a>>,
    runs: usize,
    figures: Vec<FigureView<'a>>,
    tables: Vec<AnalysisTable<'a>>,
    tournaments: Vec<TournamentView<'a>>,
    models: Vec<ModelRow<'a>>,
    /// None where the store holds no behavioural profile.
    profile: Option<ProfileView<'a>>,
    contamination: ContaminationView<'a>,
    /// None where the store holds no audit table.
    audit: Option<AuditView<'a>>,
    naming_runs: Vec<NamingRunView<'a>>,
    excerpts: Vec<ExcerptRow<'a>>,
    studies: Vec<StudyRow<'a>>,
}

/// One claim's verdict: the tier the models reach and the tier the classical rosters reach
/// (graded apart), each with its first unmet condition and its evidence (one item a line).
#[derive(Serialize)]
struct VerdictRow<'a> {
    claim: &'a str,
    text: &'a str,
    tier: &'a str,
    first_unmet: &'a str,
    evidence: String,
    classical_tier: &'a str,
    classical_first_unmet: &'a str,
    classical_evidence: String,
    /// The deviations from the deposit the verdict rests on, one a line; none where it rests
    /// on none.
    deviations: Option<String>,
}

/// The verdict table: one row per claim; a verdict that rests on a deviation from the deposit
/// is marked, the deviations on hover.
fn verdicts(analysis: &Analysis) -> Vec<VerdictRow<'_>> {
    analysis
        .verdicts
        .iter()
        .map(|v| {
            let (classical_tier, classical_first_unmet, classical_evidence) = match &v.classical {
                Some(c) => (c.tier_name.as_str(), c.first_unmet.as_deref().unwrap_or("-"), c.evidence.join("\n")),
                None => ("-", "-", String::new()),
            };
            let deviations = analysis.deposit.deviations_of(&v.claim);
            VerdictRow {
                claim: &v.claim,
                text: &v.text,
                tier: &v.tier_name,
                first_unmet: v.first_unmet.as_deref().unwrap_or("-"),
                evidence: v.evidence.join("\n"),
                classical_tier,
                classical_first_unmet,
                classical_evidence,
                deviations: (!deviations.is_empty()).then(|| {
                    deviations.iter().map(|d| format!("{}: {}", d.kind.as_str(), d.what)).collect::<Vec<_>>().join("\n")
                }),
            }
        })
        .collect()
}

/// The deposit section: every deposit of the store, or the sentence saying there is none.
#[derive(Serialize)]
struct DepositView<'a> {
    deposits: Vec<DepositRow<'a>>,
    /// What the page says when the store has no deposit.
    none: &'static str,
    /// What the deposit's time is worth.
    self_attested: &'static str,
}

/// One deposit: its hash and self-attested time, the first run's time and every deviation.
#[derive(Serialize)]
struct DepositRow<'a> {
    hash: &'a str,
    study: &'a str,
    created: &'a str,
    doi: &'a str,
    first_run: &'a str,
    runs_under: usize,
    build: &'a str,
    deviations: Vec<DeviationRow<'a>>,
    fixes: &'a [String],
    leaves_open: &'a [String],
}

#[derive(Serialize)]
struct DeviationRow<'a> {
    kind: &'a str,
    what: &'a str,
    /// The claims whose verdicts rest on it, or `-`.
    claims: String,
}

fn deposit(section: &agora_analysis::deposit::DepositSection) -> DepositView<'_> {
    DepositView {
        none: agora_analysis::deposit::NO_DEPOSIT,
        self_attested: agora_analysis::deposit::SELF_ATTESTED,
        deposits: section
            .deposits
            .iter()
            .map(|d| DepositRow {
                hash: &d.hash,
                study: &d.study,
                created: &d.created,
                doi: d.doi.as_deref().unwrap_or("none recorded"),
                first_run: d.first_run.as_deref().unwrap_or("not recorded"),
                runs_under: d.runs_under,
                build: &d.build,
                deviations: d
                    .deviations
                    .iter()
                    .map(|x| DeviationRow {
                        kind: x.kind.as_str(),
                        what: &x.what,
                        claims: if x.claims.is_empty() { "-".to_string() } else { x.claims.join(", ") },
                    })
                    .collect(),
                fixes: &d.fixes,
                leaves_open: &d.leaves_open,
            })
            .collect(),
    }
}

/// One claim's outcome in the lab's human runs, beside each model's baseline mean.
#[derive(Serialize)]
struct HumanRow<'a> {
    claim: &'a str,
    metric: &'a str,
    n: usize,
    mean: String,
    interval: String,
    excluded: usize,
    /// Each model's baseline mean and runs, or `-`.
    models: String,
    study: &'a str,
    /// The study's hash, shortened.
    study_hash: &'a str,
    date: &'a str,
}

/// The lab's participants beside the models: per claim, the outcome of the human runs (n, mean
/// and 95 % interval, runs left out for a stand-in, provenance) and each model's baseline mean.
fn humans<'a>(analysis: &Analysis, humans: &'a [agora_analysis::human_anchors::HumanAnchor]) -> Vec<HumanRow<'a>> {
    humans
        .iter()
        .map(|a| {
            let models: Vec<String> = analysis
                .equivalence
                .iter()
                .filter(|r| r.claim == a.claim && r.metric == a.metric)
                .map(|r| format!("{}: {} ({})", r.model, num(r.mean), r.runs))
                .collect();
            HumanRow {
                claim: &a.claim,
                metric: &a.metric,
                n: a.n,
                mean: format!("{:.3}", a.mean),
                interval: interval(Some(a.ci_low).filter(|x| x.is_finite()), Some(a.ci_high).filter(|x| x.is_finite())),
                excluded: a.excluded,
                models: if models.is_empty() { "-".to_string() } else { models.join("; ") },
                study: &a.study,
                study_hash: &a.study_hash[..a.study_hash.len().min(12)],
                date: &a.date,
            }
        })
        .collect()
}

/// A figure inline: its caption, its files' stem and its SVG.
#[derive(Serialize)]
struct FigureView<'a> {
    caption: &'a str,
    stem: String,
    /// The SVG, marked safe: the report's own drawing code writes it.
    svg: Value,
}

fn figures<'a>(figures: &'a [(&'a str, Figure)]) -> Vec<FigureView<'a>> {
    figures
        .iter()
        .enumerate()
        .map(|(i, (caption, fig))| FigureView {
            caption,
            stem: figure_stem(i, caption),
            svg: Value::from_safe_string(fig.svg.clone()),
        })
        .collect()
}

/// An analysis table, as the analysis formats its cells.
#[derive(Serialize)]
struct AnalysisTable<'a> {
    title: &'a str,
    id: &'a str,
    columns: &'a [&'a str],
    rows: &'a [Vec<String>],
}

/// A round-robin tournament's score table: strategies ranked by mean payoff per round over
/// their matches against the others.
#[derive(Serialize)]
struct TournamentView<'a> {
    block: &'a str,
    cell: &'a str,
    study: &'a str,
    environment: &'a str,
    runs: u64,
    rows: Vec<ScoreRow<'a>>,
}

#[derive(Serialize)]
struct ScoreRow<'a> {
    rank: usize,
    strategy: &'a str,
    matches: u64,
    mean_payoff: String,
    wins: u64,
    draws: u64,
    losses: u64,
    cooperation: String,
    self_payoff: String,
}

fn tournaments(tables: &[agora_analysis::tournament::Table]) -> Vec<TournamentView<'_>> {
    let opt = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.3}"));
    tables
        .iter()
        .map(|t| TournamentView {
            block: &t.block,
            cell: &t.cell,
            study: &t.study,
            environment: &t.environment,
            runs: t.runs,
            rows: t
                .rows
                .iter()
                .map(|r| ScoreRow {
                    rank: r.rank,
                    strategy: &r.strategy,
                    matches: r.matches,
                    mean_payoff: format!("{:.3}", r.mean_payoff),
                    wins: r.wins,
                    draws: r.draws,
                    losses: r.losses,
                    cooperation: opt(r.cooperation),
                    self_payoff: opt(r.self_payoff),
                })
                .collect(),
        })
        .collect()
}

/// A model with its serving facts, as the study declared them, and the calls it made.
#[derive(Serialize)]
struct ModelRow<'a> {
    name: &'a str,
    family: &'a str,
    served_id: &'a str,
    endpoints: &'a str,
    quantisation: &'a str,
    notes: &'a str,
    structured: &'a str,
    temperature: String,
    max_tokens: i64,
    calls: i64,
}

fn model(m: &Model) -> ModelRow<'_> {
    ModelRow {
        name: &m.name,
        family: &m.family,
        served_id: &m.served_id,
        endpoints: &m.endpoints,
        quantisation: &m.quantisation,
        notes: &m.notes,
        structured: &m.structured,
        temperature: m.temperature.to_string(),
        max_tokens: m.max_tokens,
        calls: m.calls,
    }
}

fn one_decimal(x: Option<f64>) -> String {
    x.filter(|v| v.is_finite()).map_or_else(|| "–".into(), |v| format!("{v:.1}"))
}

fn range(r: Option<[f64; 2]>) -> String {
    r.map_or_else(|| "–".into(), |[a, b]| format!("[{a:.1}, {b:.1}]"))
}

/// A profile line's centre with its inner range, or its status where the centre is unavailable.
fn centre_and_inner(l: Option<&ProfileLine>, what: &str) -> String {
    match l {
        None => format!("{what} not in this profile"),
        Some(l) if l.centre.is_some() => format!("{} {}", one_decimal(l.centre), range(l.inner)),
        Some(l) => l.status.clone(),
    }
}

/// The behavioural profile (the profile methods, `agora profile`): each model's table, the
/// self-description beside behaviour, and the models joined to their own decisions in the
/// store's society runs.
#[derive(Serialize)]
struct ProfileView<'a> {
    /// The profile figure's number on the page, if drawn.
    figure: Option<usize>,
    tables: Vec<ProfileTable<'a>>,
    self_description: Option<SelfDescriptionView>,
    joined: Vec<JoinedView<'a>>,
}

/// One model's profile.
#[derive(Serialize)]
struct ProfileTable<'a> {
    model: &'a str,
    served_id: &'a str,
    lines: Vec<ProfileLineRow<'a>>,
}

#[derive(Serialize)]
struct ProfileLineRow<'a> {
    measure: &'a str,
    name: String,
    scale: &'static str,
    centre: String,
    inner: String,
    outer: String,
    checks: usize,
    coverage: Coverage,
    status: &'a str,
}

/// A profiled model beside its society decisions, or the note saying why there are none.
#[derive(Serialize)]
struct JoinedView<'a> {
    model: &'a str,
    served_id: &'a str,
    note: Option<&'a str>,
    rows: Vec<JoinedRowView<'a>>,
}

#[derive(Serialize)]
struct JoinedRowView<'a> {
    outcome: &'a str,
    society: String,
    decisions: usize,
    fallbacks: usize,
    runs: usize,
    task: &'a str,
    task_centre: String,
    measure: &'a str,
    measure_centre: String,
}

fn behavioural_profile<'a>(p: &Page<'a>) -> Option<ProfileView<'a>> {
    if p.profiles.is_empty() {
        return None;
    }
    let tables = p
        .profiles
        .iter()
        .map(|(model, served_id, lines)| ProfileTable {
            model,
            served_id,
            lines: lines
                .iter()
                .map(|l| ProfileLineRow {
                    measure: &l.measure,
                    name: measure_name(&l.measure),
                    scale: if signed(&l.measure) { "−100..100" } else { "0–100" },
                    centre: one_decimal(l.centre),
                    inner: range(l.inner),
                    outer: range(l.outer),
                    checks: l.checks,
                    coverage: l.coverage,
                    status: &l.status,
                })
                .collect(),
        })
        .collect();
    let joined = p
        .joined
        .iter()
        .map(|j| JoinedView {
            model: &j.model,
            served_id: &j.served_id,
            note: j.note.as_deref(),
            rows: j
                .rows
                .iter()
                .map(|r| JoinedRowView {
                    outcome: r.outcome,
                    society: one_decimal(r.society),
                    decisions: r.decisions,
                    fallbacks: r.fallbacks,
                    runs: r.runs,
                    task: &r.task,
                    task_centre: centre_and_inner(r.task_line, &r.task),
                    measure: r.measure,
                    measure_centre: centre_and_inner(r.measure_line, r.measure),
                })
                .collect(),
        })
        .collect();
    Some(ProfileView {
        figure: p.figures.iter().position(|(c, _)| *c == super::figures::profile::CAPTION),
        tables,
        self_description: self_description(p.profiles),
        joined,
    })
}

/// The self-description (E1–E5) of each model beside its behavioural measures (A–D): an
/// exploratory view, with Agora's one declared pairing and its rank correlation across models.
#[derive(Serialize)]
struct SelfDescriptionView {
    /// The declared pairing's self-described measure, its id in capitals and its name.
    described: String,
    described_name: String,
    /// The declared pairing's behavioural measure, its id in capitals and its name.
    behaviour: String,
    behaviour_name: String,
    /// The measures' ids in capitals, E1–E5 then A–D.
    columns: Vec<String>,
    rows: Vec<SelfRowView>,
    /// The models with both centres of the pairing.
    n: usize,
    /// Spearman's ρ across them, where there are enough.
    rho: Option<String>,
    /// Its 95 % interval, where there are enough.
    interval: Option<[String; 2]>,
}

#[derive(Serialize)]
struct SelfRowView {
    model: String,
    served_id: String,
    /// Each measure's centre [inner range], or why it is missing.
    cells: Vec<String>,
}

fn self_description(profiles: &[StoredProfile]) -> Option<SelfDescriptionView> {
    use super::profile::{self_description, BEHAVIOURAL, DECLARED_PAIRING, SELF_DESCRIBED};
    let (rows, rho) = self_description(profiles);
    if rows.is_empty() {
        return None;
    }
    let (e, b) = DECLARED_PAIRING;
    Some(SelfDescriptionView {
        described: e.to_uppercase(),
        described_name: measure_name(e),
        behaviour: b.to_uppercase(),
        behaviour_name: measure_name(b),
        columns: SELF_DESCRIBED.iter().chain(BEHAVIOURAL.iter()).map(|m| m.to_uppercase()).collect(),
        rows: rows
            .iter()
            .map(|r| SelfRowView {
                model: r.model.clone(),
                served_id: r.served_id.clone(),
                cells: r
                    .described
                    .iter()
                    .zip(SELF_DESCRIBED)
                    .chain(r.behaviour.iter().zip(BEHAVIOURAL))
                    .map(|(l, m)| centre_and_inner(*l, m))
                    .collect(),
            })
            .collect(),
        n: rho.n,
        rho: rho.rho.map(|r| format!("{r:.2}")),
        interval: rho.interval.map(|[lo, hi]| [format!("{lo:.2}"), format!("{hi:.2}")]),
    })
}

/// Contamination: priming and probe contrasts, and how often the paradigm was recognised.
#[derive(Serialize)]
struct ContaminationView<'a> {
    contrasts: Vec<ContrastView<'a>>,
    probes: Vec<ProbeView<'a>>,
}

#[derive(Serialize)]
struct ContrastView<'a> {
    model: &'a str,
    cell: &'a str,
    metric: &'a str,
    delta: String,
    cliffs_delta: String,
    p_holm: String,
    excluded: Option<&'a str>,
}

#[derive(Serialize)]
struct ProbeView<'a> {
    model: &'a str,
    recognised: i64,
    probes: i64,
}

fn contamination<'a>(contrasts: &'a [ContrastRow], probes: &'a [Probes]) -> ContaminationView<'a> {
    ContaminationView {
        contrasts: contrasts
            .iter()
            .filter(|c| c.family_of_tests == "priming" || c.family_of_tests == "contamination")
            .map(|c| ContrastView {
                model: &c.model,
                cell: &c.cell,
                metric: &c.metric,
                delta: c.delta.map_or("-".into(), |d| format!("{d:.3}")),
                cliffs_delta: c.cliffs_delta.map_or("-".into(), |d| format!("{d:.2}")),
                p_holm: c.p_holm.map_or("-".into(), |p| format!("{p:.3}")),
                excluded: c.excluded.as_deref(),
            })
            .collect(),
        probes: probes
            .iter()
            .map(|p| ProbeView { model: &p.model, recognised: p.recognised, probes: p.probes })
            .collect(),
    }
}

/// A naming-game run for the drill-down, with its first interactions.
#[derive(Serialize)]
struct NamingRunView<'a> {
    roster: &'a str,
    arm: &'a str,
    variant: &'a str,
    cell: &'a str,
    /// The committed fraction, where the run is part of a sweep.
    sweep: Option<String>,
    run_index: i64,
    steps: i64,
    meetings: Vec<MeetingRow>,
}

#[derive(Serialize)]
struct MeetingRow {
    t: u32,
    a: usize,
    b: usize,
    name_a: u32,
    name_b: u32,
    matched: bool,
}

fn naming_run(r: &NamingRun) -> NamingRunView<'_> {
    NamingRunView {
        roster: &r.roster,
        arm: &r.arm,
        variant: &r.variant,
        cell: &r.cell,
        sweep: (r.sweep >= 0.0).then(|| format!("{:.3}", r.sweep)),
        run_index: r.run_index,
        steps: r.steps,
        meetings: r
            .meetings
            .iter()
            .map(|m| MeetingRow { t: m.t, a: m.a, b: m.b, name_a: m.name_a, name_b: m.name_b, matched: m.matched })
            .collect(),
    }
}

/// A model reply (untrusted text: the template escapes it).
#[derive(Serialize)]
struct ExcerptRow<'a> {
    model: &'a str,
    role: &'a str,
    parse_status: &'a str,
    raw_reply: &'a str,
}

#[derive(Serialize)]
struct StudyRow<'a> {
    study: &'a str,
    plan_hash: &'a str,
    master_seed: &'a str,
    runs: i64,
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
/// the reasoning tree, each absent where the store lacks its table.
#[derive(Serialize)]
struct AuditView<'a> {
    /// None: no `audit_responses` table.
    occurrence: Option<Vec<OccurrenceRow<'a>>>,
    /// None: no `audit_dependency` table.
    dependency: Option<Vec<DependencyView<'a>>>,
    /// None: no `audit_agreement` table.
    agreement: Option<Vec<AgreementView<'a>>>,
    requirements: Vec<RequirementRow<'a>>,
    tree: Option<TreeView<'a>>,
}

/// The share of coded responses stating one value, or `refused` where the gate refuses.
#[derive(Serialize)]
struct OccurrenceRow<'a> {
    coder: &'a str,
    codebook: &'a str,
    model: &'a str,
    code: &'a str,
    coded: usize,
    stating: String,
    share: String,
    interval: String,
    validation: &'a str,
}

/// One dependency estimate; where it is missing, the estimate cell says why.
#[derive(Serialize)]
struct DependencyView<'a> {
    coder: &'a str,
    model: &'a str,
    environment: &'a str,
    arm: &'a str,
    cell: &'a str,
    role: &'a str,
    indicator: &'a str,
    estimator: &'a str,
    value: &'a str,
    estimate: String,
    interval: String,
    prompts: usize,
    replicates: usize,
    status: &'a str,
    validation: &'a str,
}

/// One agreement row, with its per-code recall and confusion matrix.
#[derive(Serialize)]
struct AgreementView<'a> {
    codebook: String,
    model: &'a str,
    kind: &'a str,
    reference: &'a str,
    coder: &'a str,
    n: i64,
    kappa: String,
    interval: String,
    threshold: String,
    verdict: &'a str,
    note: &'a str,
    labels: &'a [String],
    recall: Vec<RecallRow<'a>>,
    /// Rows: the reference's code, columns: the coder's.
    confusion: Vec<ConfusionRow<'a>>,
}

#[derive(Serialize)]
struct RecallRow<'a> {
    code: &'a str,
    support: u64,
    recall: String,
}

#[derive(Serialize)]
struct ConfusionRow<'a> {
    code: &'a str,
    counts: &'a [u64],
}

#[derive(Serialize)]
struct RequirementRow<'a> {
    requirement: &'a str,
    model: &'a str,
    kind: &'a str,
    estimate: String,
    interval: String,
    bound: String,
    verdict: &'a str,
    reason: &'a str,
    n: String,
    planned_n: String,
}

/// The reasoning tree's paths: each path of codes, its action, its responses and its share.
#[derive(Serialize)]
struct TreeView<'a> {
    subject: &'a str,
    /// The tree figure's number on the page, if drawn.
    figure: Option<usize>,
    validation: &'a str,
    paths: Vec<PathRow>,
}

#[derive(Serialize)]
struct PathRow {
    path: String,
    action: String,
    responses: usize,
    share: String,
}

fn audit<'a>(p: &Page<'a>) -> Option<AuditView<'a>> {
    let a = p.audit;
    if !a.any() {
        return None;
    }
    let occurrence = a.occurrence.as_ref().map(|rows| {
        rows.iter()
            .map(|o| {
                let (stating, share, interval) = match o.stating {
                    Some((k, sh, l, hi)) => (k.to_string(), format!("{sh:.3}"), interval(Some(l), Some(hi))),
                    None => ("refused".into(), "refused".into(), "refused".into()),
                };
                OccurrenceRow {
                    coder: &o.coder,
                    codebook: &o.codebook,
                    model: &o.model,
                    code: &o.code,
                    coded: o.coded,
                    stating,
                    share,
                    interval,
                    validation: &o.validation,
                }
            })
            .collect()
    });
    let dependency = a.dependency.as_ref().map(|rows| {
        rows.iter()
            .map(|stored| {
                let d = &stored.row;
                let (estimate, ci) = match d.coef {
                    Some(c) => (format!("{c:.3}"), interval(d.ci_low, d.ci_high)),
                    None if d.reason.is_empty() => (d.status.clone(), "-".into()),
                    None => (format!("{}: {}", d.status, d.reason), "-".into()),
                };
                DependencyView {
                    coder: &stored.key.coder,
                    model: &d.model,
                    environment: &d.environment,
                    arm: &d.arm,
                    cell: &d.cell,
                    role: &d.role,
                    indicator: &d.indicator,
                    estimator: &d.estimator,
                    value: &d.value,
                    estimate,
                    interval: ci,
                    prompts: d.n_prompts,
                    replicates: d.n_replicates,
                    status: &d.status,
                    validation: &d.validation,
                }
            })
            .collect()
    });
    let agreement = a.agreement.as_ref().map(|rows| {
        rows.iter()
            .map(|r| AgreementView {
                codebook: r.codebook(),
                model: &r.stored.model,
                kind: &r.stored.kind,
                reference: &r.stored.reference,
                coder: &r.stored.coder,
                n: r.stored.n,
                kappa: num(r.stored.kappa),
                interval: interval(r.stored.ci_low, r.stored.ci_high),
                threshold: num(r.stored.min_kappa),
                verdict: r.stored.verdict.as_deref().unwrap_or("-"),
                note: r.stored.note.as_deref().unwrap_or(""),
                labels: &r.labels,
                recall: r
                    .labels
                    .iter()
                    .enumerate()
                    .map(|(i, code)| RecallRow {
                        code,
                        support: r.support.get(i).copied().unwrap_or(0),
                        recall: num(r.recall.get(i).copied().flatten()),
                    })
                    .collect(),
                confusion: r
                    .labels
                    .iter()
                    .zip(&r.confusion)
                    .map(|(code, row)| ConfusionRow { code, counts: row })
                    .collect(),
            })
            .collect()
    });
    let requirements = a
        .requirements
        .iter()
        .flatten()
        .map(|r| RequirementRow {
            requirement: &r.requirement,
            model: &r.model,
            kind: &r.kind,
            estimate: num(r.estimate),
            interval: interval(r.low, r.high),
            bound: num(r.bound),
            verdict: &r.verdict,
            reason: &r.reason,
            n: r.n.map_or_else(|| "-".into(), |n| n.to_string()),
            planned_n: r.planned_n.map_or_else(|| "-".into(), |n| n.to_string()),
        })
        .collect();
    let tree = a.tree.as_ref().zip(p.tree).map(|(t, root)| {
        let n = root.n.max(1) as f64;
        TreeView {
            subject: &t.subject,
            figure: p.figures.iter().position(|(c, _)| *c == "Reasoning tree"),
            validation: &t.validation,
            paths: root
                .paths()
                .into_iter()
                .map(|(codes, action, k)| PathRow {
                    path: if codes.is_empty() { "(no coded reasoning)".to_string() } else { codes.join(" → ") },
                    action,
                    responses: k,
                    share: format!("{:.3}", k as f64 / n),
                })
                .collect(),
        }
    });
    Some(AuditView { occurrence, dependency, agreement, requirements, tree })
}

#[cfg(test)]
mod tests {
    use super::*;

    const EVIL: &str = "<script>alert('x')</script> & \"y\"";
    const ESCAPED: &str = "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;y&quot;";

    /// A page whose every section holds `EVIL` where the store's text goes.
    fn evil_report() -> Report<'static> {
        Report {
            verdicts: vec![VerdictRow {
                claim: EVIL,
                text: EVIL,
                tier: EVIL,
                first_unmet: EVIL,
                evidence: EVIL.into(),
                classical_tier: "-",
                classical_first_unmet: "-",
                classical_evidence: String::new(),
                deviations: Some(EVIL.into()),
            }],
            deposit: DepositView {
                deposits: vec![DepositRow {
                    hash: EVIL,
                    study: EVIL,
                    created: EVIL,
                    doi: EVIL,
                    first_run: EVIL,
                    runs_under: 1,
                    build: EVIL,
                    deviations: vec![DeviationRow { kind: "claim", what: EVIL, claims: EVIL.into() }],
                    fixes: &[],
                    leaves_open: &[],
                }],
                none: agora_analysis::deposit::NO_DEPOSIT,
                self_attested: agora_analysis::deposit::SELF_ATTESTED,
            },
            humans: vec![],
            runs: 3,
            figures: vec![FigureView {
                caption: "A figure",
                stem: figure_stem(0, "A figure"),
                svg: Value::from_safe_string("<svg id=\"drawn\"><text>a &amp; b</text></svg>".into()),
            }],
            tables: vec![AnalysisTable { title: "A table", id: "a-table", columns: &["column"], rows: &[] }],
            tournaments: vec![],
            models: vec![ModelRow {
                name: EVIL,
                family: EVIL,
                served_id: EVIL,
                endpoints: EVIL,
                quantisation: EVIL,
                notes: EVIL,
                structured: EVIL,
                temperature: "0.7".into(),
                max_tokens: 10,
                calls: 2,
            }],
            profile: None,
            contamination: ContaminationView {
                contrasts: vec![],
                probes: vec![ProbeView { model: EVIL, recognised: 1, probes: 2 }],
            },
            audit: Some(AuditView {
                occurrence: None,
                dependency: Some(vec![]),
                agreement: None,
                requirements: vec![RequirementRow {
                    requirement: EVIL,
                    model: EVIL,
                    kind: EVIL,
                    estimate: "0.510".into(),
                    interval: "-".into(),
                    bound: "-".into(),
                    verdict: EVIL,
                    reason: EVIL,
                    n: "-".into(),
                    planned_n: "-".into(),
                }],
                tree: None,
            }),
            naming_runs: vec![],
            excerpts: vec![ExcerptRow { model: EVIL, role: EVIL, parse_status: EVIL, raw_reply: EVIL }],
            studies: vec![StudyRow { study: EVIL, plan_hash: EVIL, master_seed: EVIL, runs: 1 }],
        }
    }

    #[test]
    fn every_template_parses_and_none_passes_text_through() {
        let env = environment().expect("the templates parse");
        for (name, text) in TEMPLATES {
            env.get_template(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            // Only the figures' SVG is raw markup, marked safe where Rust draws it.
            let raw = ["|safe", "| safe", "autoescape"];
            assert!(!raw.iter().any(|r| text.contains(r)), "{name} passes a value through unescaped");
        }
    }

    #[test]
    fn escaping_neutralises_markup() {
        let env = environment().expect("the templates parse");
        let html = env.render_str("{{ x }}", minijinja::context! { x => EVIL }).expect("renders");
        assert_eq!(html, EVIL, "a template that is not HTML is not escaped");
        let t = env.template_from_named_str("t.html", "{{ x }}").expect("parses");
        assert_eq!(t.render(minijinja::context! { x => EVIL }).expect("renders"), ESCAPED);
    }

    #[test]
    fn store_text_is_escaped_once_on_the_page_and_the_figures_are_not() {
        let html = render(&evil_report()).expect("the page renders");
        assert!(!html.contains("<script"), "no script survives");
        assert!(!html.contains("&amp;lt;") && !html.contains("&amp;#39;"), "nothing is escaped twice");
        assert!(html.contains(&format!("<pre class=\"reply\">{ESCAPED}</pre>")), "the reply, escaped");
        assert!(html.contains(&format!("<td title=\"{ESCAPED}\">{ESCAPED} <a class=\"deviation\"")), "verdict");
        assert!(html.contains(&format!("title=\"rests on a deviation from the deposit: {ESCAPED}\">†</a>")));
        assert!(html.contains(&format!("<code class=\"deposit-hash\">{ESCAPED}</code>")), "deposit");
        assert!(html.contains(&format!("<tr><td>{ESCAPED}</td><td>{ESCAPED}</td><td>{ESCAPED}</td><td>0.510</td>")));
        assert!(html.contains(&format!("<tr><td>{ESCAPED}</td><td>{ESCAPED}</td><td>{ESCAPED}</td><td>1</td></tr>")));
        assert!(html.contains(&format!("<p>{ESCAPED}: the recognition probe named the paradigm in 1 of 2 probes.</p>")));
        assert_eq!(html.matches(ESCAPED).count(), 34, "every value of the store's, escaped");
        assert!(
            html.contains("<figure id=\"figure-0\" class=\"figure\"><figcaption>A figure <a href=\"figures/01-a-figure.png\">PNG</a> <a href=\"figures/01-a-figure.svg\">SVG</a></figcaption><svg id=\"drawn\"><text>a &amp; b</text></svg></figure>"),
            "the figure's SVG, as drawn"
        );
        assert!(html.contains("<p id=\"audit-dependency-none\">No dependency estimates.</p>"));
        assert!(
            html.contains("<table id=\"a-table\"") || html.contains("<h2>A table</h2>\n<p>No data in this store.</p>")
        );
        assert!(html.starts_with("<!DOCTYPE html>") && html.ends_with("</body></html>"), "{html}");
    }
}
