//! Prompt rendering with minijinja templates from `assets/prompts/`.
//!
//! The system message holds what never changes within a run (opening, persona, rules,
//! payoffs, answer format) and is identical for every agent that sees the same pool order, so a
//! serving engine's prefix cache is hit across agents, rounds and runs; the user message holds
//! what changes (who the agent is, the history, the round, the question).
//!
//! A framing cell relabels the two actions in place: the game's framed labels stand wherever
//! the variant's labels would (rules, question, answer schema, history, summary), and the reply
//! is read against them ([`Rendered::space`]); the choice index keeps its meaning.

use agora_environments::game::{Rules, SummaryKind, Wording};
use agora_environments::{Action, ActionSpace, EnvSpec, Feedback, Frame, Observation, Role};
use minijinja::{context, Environment};

use super::client::Message;
pub use super::options::{Framing, HistoryFormat, Layout, PersonaContent, PersonaFormat, PromptOptions};

const DEFAULT_OPENING: &str = "You are taking part in a study of decision making.";
const NAMES: [&str; 48] = [
    "Alice", "Bruno", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hana", "Ivan", "Jun", "Kofi", "Lena", "Mateo",
    "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Sami", "Tara", "Uma", "Viktor", "Wei", "Yara", "Zoltan", "Amira",
    "Bao", "Carmen", "Dmitri", "Elif", "Felix", "Greta", "Hugo", "Ines", "Jonas", "Kira", "Luca", "Maya", "Nils",
    "Olga", "Pablo", "Rania", "Sven", "Tomas", "Ulla", "Vera", "Wim", "Xenia",
];

/// The label of seat `seat`: letters A–Z, then A2, B2, … (or first names in the names cell).
pub fn agent_label(seat: usize, named: bool) -> String {
    if named {
        let base = NAMES[seat % NAMES.len()];
        return if seat < NAMES.len() { base.to_string() } else { format!("{base} {}", seat / NAMES.len() + 1) };
    }
    let letter = (b'A' + (seat % 26) as u8) as char;
    if seat < 26 {
        letter.to_string()
    } else {
        format!("{letter}{}", seat / 26 + 1)
    }
}

/// Name of the paradigm and the words that show it was recognised, for the priming cell and
/// the recognition probe's grading (the game's wording).
pub fn paradigm(env: &EnvSpec) -> (&'static str, &'static [&'static str]) {
    let w = env.game().wording(agora_environments::Variant::C0);
    (w.paradigm, w.keywords)
}

/// A rendered prompt: the messages, the answer's JSON schema and its field, and the action
/// space the reply is read against.
#[derive(Clone, Debug, PartialEq)]
pub struct Rendered {
    /// The system message, then the user message.
    pub messages: Vec<Message>,
    /// JSON schema of the expected answer object.
    pub schema: serde_json::Value,
    /// The field of the answer object that holds the action.
    pub field: String,
    /// The decision's action space with the labels the prompt shows (a framing cell's labels
    /// in place of the variant's); a reply is parsed against it, and a choice's index means
    /// what it means in the observation.
    pub space: ActionSpace,
}

/// The last system message and answer schema one seat was shown, with what they were
/// rendered from (see [`PromptRenderer::render_with`]).
#[derive(Clone, Debug, Default)]
pub struct SystemMemo {
    kept: Option<KeptSystem>,
}

#[derive(Clone, Debug)]
struct KeptSystem {
    /// The observation the system message was rendered for, its round aside.
    seen: Observation,
    rules: Rules,
    space: ActionSpace,
    labels_shown: Vec<String>,
    opts: PromptOptions,
    env: EnvSpec,
    system: String,
    schema: serde_json::Value,
}

/// One decision as a prompt shows it: the observation and the wording, with a framing cell's
/// labels in place of the variant's.
struct View {
    /// The observation, its choice labels relabelled where the cell frames them.
    obs: Observation,
    /// The game's wording, its labels relabelled likewise.
    wording: Wording,
    /// The variant's labels and the framed labels (semantic order), where a cell relabels.
    relabel: Option<(Vec<String>, Vec<String>)>,
}

impl View {
    /// The decision as `opts` shows it. A framing cell in a game that declares no framing is an
    /// error: the cell does not run there, and a prompt never silently drops its factor.
    fn new(env: &EnvSpec, obs: &Observation, opts: &PromptOptions) -> Result<View, String> {
        let game = env.game();
        let mut wording = game.wording(obs.variant);
        let mut obs = obs.clone();
        let frame = match opts.framing {
            Framing::Neutral => return Ok(View { obs, wording, relabel: None }),
            Framing::Moral => Frame::Moral,
            Framing::Risk => Frame::Risk,
        };
        let framed = game.framing(obs.variant, frame).ok_or_else(|| {
            format!(
                "the {} declares no {} framing; the framing cells do not run in it",
                wording.paradigm,
                opts.framing.as_str()
            )
        })?;
        if wording.labels.len() != framed.labels.len() {
            return Err(format!(
                "the {}: a framing relabels {} actions, the game has {} labels",
                wording.paradigm,
                framed.labels.len(),
                wording.labels.len()
            ));
        }
        let from: Vec<String> = wording.labels.to_vec();
        let to: Vec<String> = framed.labels.iter().map(|l| l.to_string()).collect();
        if let ActionSpace::Choice { labels } = &obs.space {
            if obs.role == framed.role && labels.as_ref() == wording.labels.as_ref() {
                obs.space = ActionSpace::Choice { labels: to.clone().into() };
            }
        }
        wording.labels = to.clone().into();
        Ok(View { obs, wording, relabel: Some((from, to)) })
    }
}

/// Puts the framed labels in place of the variant's in a game's rule values: every string
/// value equal to one of the variant's labels (the rules templates read labels only as values).
/// Whether two observations are the same but for their round.
fn same_but_round(a: &Observation, b: &Observation) -> bool {
    // Every field named: a field added to observations must be placed here on purpose.
    let Observation { env, variant, role, round: _, rounds, space, context, payoffs, memory } = a;
    *env == b.env
        && *variant == b.variant
        && *role == b.role
        && *rounds == b.rounds
        && *space == b.space
        && *context == b.context
        && *payoffs == b.payoffs
        && *memory == b.memory
}

fn relabel(value: &mut serde_json::Value, from: &[String], to: &[String]) {
    match value {
        serde_json::Value::String(s) => {
            if let Some(i) = from.iter().position(|f| f == s) {
                *s = to[i].clone();
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(|v| relabel(v, from, to)),
        serde_json::Value::Object(map) => map.values_mut().for_each(|v| relabel(v, from, to)),
        _ => {}
    }
}

/// The template set.
pub struct PromptRenderer {
    env: Environment<'static>,
}

impl Default for PromptRenderer {
    fn default() -> Self {
        Self::new()
    }
}

impl PromptRenderer {
    /// Loads the shipped templates.
    pub fn new() -> PromptRenderer {
        let mut env = Environment::new();
        env.set_trim_blocks(true);
        let games = agora_environments::EnvKind::ALL.iter().map(|k| k.template());
        for (name, text) in TEMPLATES.iter().copied().chain(games) {
            env.add_template(name, text).expect("invariant: shipped templates compile (tested)");
        }
        PromptRenderer { env }
    }
}

/// Declares the shipped templates of `assets/prompts/`, one line each.
macro_rules! templates {
    ($($name:literal),* $(,)?) => {
        /// The shipped templates of the frame: the system message and the history/question
        /// message (each game's rules template comes with its registry line,
        /// [`EnvKind::template`]).
        pub const TEMPLATES: &[(&str, &str)] = &[$(($name, include_str!(concat!("../../../assets/prompts/", $name)))),*];
    };
}

templates!["system.j2", "user.j2"];

impl PromptRenderer {
    fn render_template(&self, name: &str, ctx: minijinja::Value) -> Result<String, String> {
        self.env.get_template(name).and_then(|t| t.render(ctx)).map_err(|e| format!("template {name}: {e:#}"))
    }

    /// The rules of the game as the agent reads them (static within a run): the game's
    /// template and values, with a framing cell's labels in place of the variant's.
    fn rules(&self, env: &EnvSpec, view: &View, opts: &PromptOptions) -> Result<String, String> {
        let rules = Self::rule_values(env, view, opts)?;
        self.render_template(rules.template, minijinja::Value::from_serialize(&rules.values))
    }

    /// The rules' template and values, before rendering.
    fn rule_values(env: &EnvSpec, view: &View, opts: &PromptOptions) -> Result<Rules, String> {
        let mut rules = env.game().rules(&view.obs, opts.reversed_actions).map_err(|e| e.to_string())?;
        if let Some((from, to)) = &view.relabel {
            relabel(&mut rules.values, from, to);
        }
        Ok(rules)
    }

    /// The answer's JSON schema and the example shown in the instructions.
    fn answer(
        &self,
        obs: &Observation,
        opts: &PromptOptions,
        labels_shown: &[String],
    ) -> (serde_json::Value, String, String) {
        let field = opts.answer_field.clone();
        let (prop, example, help) = match &obs.space {
            ActionSpace::Choice { .. } => (
                serde_json::json!({"type": "string", "enum": labels_shown}),
                format!("\"<one of: {}>\"", labels_shown.join(", ")),
                "Write the option exactly as it is written above.".to_string(),
            ),
            ActionSpace::Amount { min, max } => (
                serde_json::json!({"type": "integer", "minimum": min, "maximum": max}),
                format!("<a whole number from {min} to {max}>"),
                String::new(),
            ),
            ActionSpace::Allocation { targets, max_each } => (
                serde_json::json!({"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": max_each},
                    "minItems": targets, "maxItems": targets}),
                format!("[<{targets} whole numbers from 0 to {max_each}, one per other member in the order given>]"),
                String::new(),
            ),
        };
        let mut properties = serde_json::Map::new();
        let mut required = Vec::new();
        let mut shown = Vec::new();
        if opts.step_by_step {
            properties.insert("reasoning".into(), serde_json::json!({"type": "string"}));
            required.push("reasoning".to_string());
            shown.push("\"reasoning\": \"<your reasoning>\"".to_string());
        }
        properties.insert(field.clone(), prop);
        required.push(field.clone());
        shown.push(format!("\"{field}\": {example}"));
        properties.insert("reason".into(), serde_json::json!({"type": "string"}));
        shown.push("\"reason\": \"<one short sentence, optional>\"".into());
        let schema = serde_json::json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false});
        (schema, format!("{{{}}}", shown.join(", ")), help)
    }

    /// The persona as sentences (sentence and bullet layouts) and as attribute–value rows (the
    /// table layout). Both carry the same words, so the table cell changes the layout only.
    fn persona(opts: &PromptOptions) -> (Vec<String>, Vec<(String, String)>) {
        let (sentence, attribute, value) = match opts.persona_content {
            PersonaContent::Plain => {
                ("You are an adult taking part in this study.", "you are", "an adult taking part in this study")
            }
            PersonaContent::SelfInterested => {
                ("You care only about your own earnings.", "you care about", "only your own earnings")
            }
            PersonaContent::Prosocial => (
                "You care about the earnings of the others as much as your own.",
                "you care about",
                "the earnings of the others as much as your own",
            ),
        };
        (vec![sentence.to_string()], vec![(attribute.to_string(), value.to_string())])
    }

    /// Renders the messages for one decision.
    pub fn render(
        &self,
        env: &EnvSpec,
        obs: &Observation,
        history: &[Feedback],
        seat: usize,
        opts: &PromptOptions,
    ) -> Result<Rendered, String> {
        self.render_with(env, obs, history, seat, opts, &mut SystemMemo::default())
    }

    /// As [`PromptRenderer::render`], reusing the system message and answer schema kept in
    /// `memo` when this decision's game, prompt options, rule values, action space and labels
    /// are those they were rendered from: everything the system message is made of, so a reused
    /// one is the text a fresh rendering would give. A seat keeps one memo for its run, where
    /// only the rule values and the action space can change from decision to decision.
    pub fn render_with(
        &self,
        env: &EnvSpec,
        obs: &Observation,
        history: &[Feedback],
        seat: usize,
        opts: &PromptOptions,
        memo: &mut SystemMemo,
    ) -> Result<Rendered, String> {
        let view = View::new(env, obs, opts)?;
        // The system message is a function of the game, the options and the observation; it
        // never reads the round (it is static across rounds, tested for every game). The same
        // inputs, the round aside, give the kept message without rendering its rules again.
        let input = obs;
        let same_inputs =
            memo.kept.as_ref().is_some_and(|k| k.opts == *opts && k.env == *env && same_but_round(&k.seen, input));
        let obs = &view.obs;
        if !same_inputs {
            let rules = Self::rule_values(env, &view, opts)?;
            let labels_shown = obs.labels_shown(opts.reversed_actions);
            let kept_as_is = memo.kept.as_ref().is_some_and(|k| {
                k.rules == rules
                    && k.space == obs.space
                    && k.labels_shown == labels_shown
                    && k.opts == *opts
                    && k.env == *env
            });
            if kept_as_is {
                if let Some(k) = memo.kept.as_mut() {
                    k.seen = input.clone();
                }
            } else {
                self.fill_memo(memo, env, input, &view, opts, rules, labels_shown)?;
            }
        }
        let kept = memo.kept.as_ref().expect("invariant: the memo was filled above");
        let user = self.user(env, &view, history, seat, opts)?;
        let messages = vec![
            Message { role: "system".into(), content: kept.system.clone() },
            Message { role: "user".into(), content: apply_layout(user, opts.layout) },
        ];
        Ok(Rendered {
            messages,
            schema: kept.schema.clone(),
            field: opts.answer_field.clone(),
            space: view.obs.space.clone(),
        })
    }

    /// Renders the system message and schema for these inputs and keeps them in `memo`.
    #[expect(clippy::too_many_arguments, reason = "the inputs of one system message, each needed")]
    fn fill_memo(
        &self,
        memo: &mut SystemMemo,
        env: &EnvSpec,
        input: &Observation,
        view: &View,
        opts: &PromptOptions,
        rules: Rules,
        labels_shown: Vec<String>,
    ) -> Result<(), String> {
        let obs = &view.obs;
        let (schema, example, help) = self.answer(obs, opts, &labels_shown);
        let (persona, persona_pairs) = Self::persona(opts);
        let (name, _) = paradigm(env);
        let text = self.render_template(rules.template, minijinja::Value::from_serialize(&rules.values))?;
        let system = self.render_template(
            "system.j2",
            context! {
                task_id => opts.task_id, opening => opts.opening.clone().unwrap_or_else(|| DEFAULT_OPENING.to_string()),
                priming => opts.priming, paradigm => name,
                persona_format => opts.persona_format.as_str(),
                persona => persona, persona_pairs => persona_pairs,
                rules => text, reasoning => opts.step_by_step,
                answer_example => example, answer_help => help,
            },
        )?;
        memo.kept = Some(KeptSystem {
            seen: input.clone(),
            rules,
            space: obs.space.clone(),
            labels_shown,
            opts: opts.clone(),
            env: env.clone(),
            system: apply_layout(system, opts.layout),
            schema,
        });
        Ok(())
    }

    /// The recognition probe, asked outside the behavioural session: the same rules, and the
    /// question which experiment this is.
    pub fn render_probe(&self, env: &EnvSpec, obs: &Observation, opts: &PromptOptions) -> Result<Vec<Message>, String> {
        let plain = PromptOptions { priming: false, ..opts.clone() };
        let rules = self.rules(env, &View::new(env, obs, &plain)?, &plain)?;
        Ok(vec![
            Message { role: "system".into(), content: "You answer questions about descriptions of studies.".into() },
            Message {
                role: "user".into(),
                content: format!(
                    "Here are the instructions of a study:\n\n{rules}\nWhich experiment or game from the research literature is this? Answer with its usual name in a few words."
                ),
            },
        ])
    }

    fn user(
        &self,
        env: &EnvSpec,
        view: &View,
        history: &[Feedback],
        seat: usize,
        opts: &PromptOptions,
    ) -> Result<String, String> {
        let me = agent_label(seat, opts.named_agents);
        let game = env.game();
        let (obs, w) = (&view.obs, &view.wording);
        let partner = w.fixed_partner.then(|| agent_label(1 - seat.min(1), opts.named_agents));
        let unit = w.unit;
        let start = history.len().saturating_sub(obs.memory as usize);
        // Each history format reads its own fields: the narrative its sentences, the table its
        // cells, the summary its line. Only what the chosen format shows is built.
        let narrative_format = opts.history_format == HistoryFormat::Narrative;
        let rows: Vec<minijinja::Value> = history[start..]
            .iter()
            .map(|h| {
                if !narrative_format {
                    let cells = game.history_cells(h, w);
                    return context! { round => h.round, cells => cells, payoff => format!("{}", h.payoff) };
                }
                let own: Vec<String> = h.own.iter().map(|(_, a)| w.format_action(a)).collect();
                let others: Vec<String> = h.others.iter().map(|a| w.format_action(a)).collect();
                let narrative = format!(
                    "{} {}; the other{} {}; you earned {} points.",
                    w.narrative_verb.replace("{role}", h.own.first().map(|(r, _)| r.as_str()).unwrap_or("player")),
                    own.first().cloned().unwrap_or_default(),
                    if h.others.len() > 1 { "s" } else { "" },
                    if h.others.is_empty() {
                        "had no move".to_string()
                    } else {
                        format!("chose {}", others.join(", "))
                    },
                    h.payoff
                );
                context! { round => h.round, payoff => format!("{}", h.payoff), narrative => narrative }
            })
            .collect();
        let summary =
            if opts.history_format == HistoryFormat::Summary { summary(&history[start..], w) } else { String::new() };
        let question = game.question(obs);
        let columns = w.history_columns.clone();
        self.render_template(
            "user.j2",
            context! {
                me => me, partner => partner, history => rows, history_format => opts.history_format.as_str(),
                history_columns => columns, summary => summary, unit => unit, round => obs.round, rounds => obs.rounds,
                question => question, one_shot => obs.memory == 0,
            },
        )
    }
}

/// The history-summary cell's line: statistics the shown history already contains. Average
/// points per stage, then either how often the agent's choice equalled the other's, or the
/// agent's own decisions per role and kind of action (amounts averaged, choices counted by
/// label, allocations' totals averaged): an amount is never averaged with a choice, nor one
/// role's decisions with another's.
fn summary(shown: &[Feedback], w: &Wording) -> String {
    let unit = w.unit;
    let stages = |k: usize| if k == 1 { unit.to_string() } else { format!("{unit}s") };
    let n = shown.len().max(1) as f64;
    let mean_pay = shown.iter().map(|h| h.payoff).sum::<f64>() / n;
    let head = format!("average points per {unit}: {mean_pay:.2}");
    match w.summary {
        SummaryKind::Matches => {
            let matched = shown.iter().filter(|h| h.own.first().map(|(_, a)| a) == h.others.first()).count();
            format!("{head}; {matched} of {} {unit}s with the same choice as the other", shown.len())
        }
        SummaryKind::MeanDecision => {
            // The agent's decisions grouped by role and kind, in order of first appearance.
            let kind = |a: &Action| match a {
                Action::Choice(_) => 0u8,
                Action::Amount(_) => 1,
                Action::Allocation(_) => 2,
            };
            let mut groups: Vec<(Role, u8, Vec<&Action>)> = Vec::new();
            for (role, action) in shown.iter().flat_map(|h| h.own.iter()) {
                match groups.iter_mut().find(|g| g.0 == *role && g.1 == kind(action)) {
                    Some(g) => g.2.push(action),
                    None => groups.push((*role, kind(action), vec![action])),
                }
            }
            let mut parts = vec![head];
            for (role, _, actions) in groups {
                let (role, k) = (role.as_str(), actions.len());
                let mean = actions.iter().map(|a| a.value()).sum::<f64>() / k as f64;
                parts.push(match actions[0] {
                    Action::Amount(_) => format!("as {role}, your average amount: {mean:.2} over {k} {}", stages(k)),
                    Action::Allocation(_) => {
                        format!("as {role}, your average total assigned: {mean:.2} over {k} {}", stages(k))
                    }
                    Action::Choice(_) => {
                        let index = |a: &&Action| match a {
                            Action::Choice(i) => Some(*i),
                            _ => None,
                        };
                        let options = actions.iter().filter_map(index).max().map_or(0, |m| m as usize + 1);
                        let counts: Vec<String> = (0..options.max(w.labels.len()))
                            .map(|i| {
                                let c = actions.iter().filter(|a| index(a) == Some(i as u32)).count();
                                format!("{} in {c} of {k} {}", w.format_action(&Action::Choice(i as u32)), stages(k))
                            })
                            .collect();
                        format!("as {role}, you chose {}", counts.join(", "))
                    }
                });
            }
            parts.join("; ")
        }
    }
}

/// Applies the layout presentation check to rendered text: the one text function the
/// profile's layout checks use too (`agora_environments::layout::apply_layout`).
fn apply_layout(text: String, layout: Layout) -> String {
    use agora_environments::layout::{apply_layout, TextLayout};
    if layout == Layout::Default {
        // As written: the trailing whitespace trimmed, in place.
        let mut text = text;
        text.truncate(text.trim_end().len());
        return text;
    }
    let layout = match layout {
        Layout::Default => TextLayout::AsWritten,
        Layout::Inline => TextLayout::Inline,
        Layout::SentencePerLine => TextLayout::SentencePerLine,
    };
    apply_layout(&text, layout)
}
