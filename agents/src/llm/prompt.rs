//! Prompt rendering with minijinja templates from `assets/prompts/`.
//!
//! The system message holds what never changes within a run (opening, persona, rules,
//! payoffs, answer format) and is identical for every agent that sees the same pool order, so a
//! serving engine's prefix cache is hit across agents, rounds and runs; the user message holds
//! what changes (who the agent is, the history, the round, the question).

use agora_environments::bargaining::BargainGame;
use agora_environments::variants::VariantTable;
use agora_environments::{Action, ActionSpace, Context, EnvSpec, Feedback, Observation, Role};
use minijinja::{context, Environment};
use serde::{Deserialize, Serialize};

use super::client::Message;

/// Persona layout (representation level).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum PersonaFormat {
    #[default]
    Sentence,
    Bullets,
    Table,
}

/// Persona content (design level).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum PersonaContent {
    #[default]
    Plain,
    SelfInterested,
    Prosocial,
}

/// History layout (representation level).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum HistoryFormat {
    /// A table without summary statistics (the baseline).
    #[default]
    Table,
    Narrative,
    /// The table plus summary statistics the history already contains.
    Summary,
}

/// Text layout (presentation check).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Layout {
    #[default]
    Default,
    Inline,
    SentencePerLine,
}

/// Evaluative framing of the two actions (design level).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Framing {
    #[default]
    Neutral,
    Moral,
    Risk,
}

/// Everything a cell can change about a prompt. The default is the canonical baseline: plain
/// persona as a sentence, neutral content and framing, history as a table without summary
/// statistics, default action order, letter agent names.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PromptOptions {
    pub persona_format: PersonaFormat,
    pub persona_content: PersonaContent,
    pub history_format: HistoryFormat,
    pub reversed_actions: bool,
    pub named_agents: bool,
    pub answer_field: String,
    pub layout: Layout,
    pub task_id: Option<String>,
    pub opening: Option<String>,
    pub framing: Framing,
    pub step_by_step: bool,
    pub temperature: Option<f64>,
    pub priming: bool,
    pub recognition_probe: bool,
}

impl Default for PromptOptions {
    fn default() -> Self {
        PromptOptions {
            persona_format: PersonaFormat::Sentence,
            persona_content: PersonaContent::Plain,
            history_format: HistoryFormat::Table,
            reversed_actions: false,
            named_agents: false,
            answer_field: "action".into(),
            layout: Layout::Default,
            task_id: None,
            opening: None,
            framing: Framing::Neutral,
            step_by_step: false,
            temperature: None,
            priming: false,
            recognition_probe: false,
        }
    }
}

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

/// Name of the paradigm, for the priming cell and the recognition probe's grading.
pub fn paradigm(env: &EnvSpec) -> (&'static str, &'static [&'static str]) {
    match env {
        EnvSpec::PrisonersDilemma(_) => ("prisoner's dilemma", &["prisoner"]),
        EnvSpec::PublicGoods(_) => ("public goods game", &["public good", "public-good"]),
        EnvSpec::Bargaining(p) => match p.game {
            BargainGame::Ultimatum => ("ultimatum game", &["ultimatum"]),
            BargainGame::Dictator => ("dictator game", &["dictator"]),
            BargainGame::Trust => ("trust game", &["trust game", "investment game"]),
        },
        EnvSpec::MoneyRequest(_) => ("11-20 money request game", &["11-20", "11–20", "11 to 20", "money request"]),
        EnvSpec::NamingGame(_) => ("naming game", &["naming game", "coordination game"]),
    }
}

/// A rendered prompt: the messages, the answer's JSON schema and its field.
#[derive(Clone, Debug, PartialEq)]
pub struct Rendered {
    pub messages: Vec<Message>,
    pub schema: serde_json::Value,
    pub field: String,
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
        let templates: [(&str, &str); 7] = [
            ("system.j2", include_str!("../../../assets/prompts/system.j2")),
            ("user.j2", include_str!("../../../assets/prompts/user.j2")),
            ("prisoners-dilemma.j2", include_str!("../../../assets/prompts/prisoners-dilemma.j2")),
            ("public-goods.j2", include_str!("../../../assets/prompts/public-goods.j2")),
            ("bargaining.j2", include_str!("../../../assets/prompts/bargaining.j2")),
            ("money-request.j2", include_str!("../../../assets/prompts/money-request.j2")),
            ("naming-game.j2", include_str!("../../../assets/prompts/naming-game.j2")),
        ];
        for (name, text) in templates {
            env.add_template(name, text).expect("invariant: shipped templates compile (tested)");
        }
        PromptRenderer { env }
    }

    fn render_template(&self, name: &str, ctx: minijinja::Value) -> Result<String, String> {
        self.env.get_template(name).and_then(|t| t.render(ctx)).map_err(|e| format!("template {name}: {e:#}"))
    }

    /// The rules of the game as the agent reads them (static within a run).
    fn rules(&self, env: &EnvSpec, obs: &Observation, opts: &PromptOptions) -> Result<String, String> {
        let t = VariantTable::shipped();
        let v = obs.variant;
        let ordered = |labels: &[String]| -> Vec<String> {
            let mut l = labels.to_vec();
            if opts.reversed_actions {
                l.reverse();
            }
            l
        };
        let mut text = match env {
            EnvSpec::PrisonersDilemma(p) => {
                let d = t.pd(v);
                self.render_template(
                    "prisoners-dilemma.j2",
                    context! { cover_story => d.cover_story, rounds => p.rounds, labels => ordered(&d.labels),
                        coop => d.labels[0], defect => d.labels[1], r => num(d.r), s => num(d.s), t => num(d.t), p => num(d.p) },
                )?
            }
            EnvSpec::PublicGoods(p) => {
                let d = t.pg(v);
                let cover = d
                    .cover_story
                    .replace("{n}", &p.group_size.to_string())
                    .replace("{endowment}", &d.endowment.to_string());
                self.render_template(
                    "public-goods.j2",
                    context! { cover_story => cover, n => p.group_size, rounds => p.rounds, endowment => d.endowment,
                    mpcr => num(d.mpcr), punishment => p.punishment, punishment_max => d.punishment_max,
                    punishment_cost => num(d.punishment_cost), punishment_impact => num(d.punishment_impact) },
                )?
            }
            EnvSpec::Bargaining(p) => {
                let d = t.bargain(v);
                let game = match p.game {
                    BargainGame::Ultimatum => "ultimatum",
                    BargainGame::Dictator => "dictator",
                    BargainGame::Trust => "trust",
                };
                let games = obs.rounds.unwrap_or(p.games);
                self.render_template(
                    "bargaining.j2",
                    context! { cover_story => d.cover_story, game => game, games => games, pie => d.pie,
                    labels => ordered(&d.labels), accept => d.labels[0], reject => d.labels[1],
                    proposer_outside => num(d.proposer_outside), responder_outside => num(d.responder_outside),
                    trust_endowment => d.trust_endowment, trust_multiplier => d.trust_multiplier },
                )?
            }
            EnvSpec::MoneyRequest(p) => {
                let d = t.mr(v);
                self.render_template(
                    "money-request.j2",
                    context! { cover_story => d.cover_story, games => p.games, min => d.min, max => d.max, bonus => d.bonus,
                        rule => format!("{:?}", d.rule) },
                )?
            }
            EnvSpec::NamingGame(p) => {
                let d = t.ng(v);
                let mut names = labels_shown(obs, opts);
                if names.is_empty() {
                    names = d.names[..p.pool].to_vec();
                }
                self.render_template(
                    "naming-game.j2",
                    context! { cover_story => d.cover_story, n => p.population, names => names,
                    match_payoff => num(d.match_payoff), mismatch_payoff => num(d.mismatch_payoff) },
                )?
            }
        };
        let two = match env {
            EnvSpec::PrisonersDilemma(_) => Some(t.pd(v).labels.clone()),
            EnvSpec::Bargaining(p) if p.game == BargainGame::Ultimatum => Some(t.bargain(v).labels.clone()),
            _ => None,
        };
        if let Some(l) = two {
            let (good, bad) = (&l[0], &l[1]);
            match (opts.framing, env) {
                (Framing::Moral, EnvSpec::PrisonersDilemma(_)) => text.push_str(&format!(
                    "Choosing {good} means acting fairly; choosing {bad} means exploiting the other participant.\n"
                )),
                (Framing::Risk, EnvSpec::PrisonersDilemma(_)) => {
                    text.push_str(&format!("{bad} is the safer option; {good} is the riskier option.\n"))
                }
                (Framing::Moral, _) => text.push_str(&format!(
                    "As responder, choosing {good} means acting fairly; choosing {bad} means punishing the proposer.\n"
                )),
                (Framing::Risk, _) => text.push_str(
                    "As proposer, a larger offer is the safer option; a smaller offer is the riskier option.\n",
                ),
                (Framing::Neutral, _) => {}
            }
        }
        Ok(text)
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

    fn persona(opts: &PromptOptions) -> (Vec<String>, Vec<(String, String)>) {
        let (sentence, priority) = match opts.persona_content {
            PersonaContent::Plain => ("You are an adult taking part in this study.", "none stated"),
            PersonaContent::SelfInterested => ("You care only about your own earnings.", "your own earnings"),
            PersonaContent::Prosocial => {
                ("You care about the earnings of the others as much as your own.", "everyone's earnings")
            }
        };
        let pairs = vec![
            ("role".to_string(), "participant in a study".to_string()),
            ("priority".to_string(), priority.to_string()),
        ];
        (vec![sentence.to_string()], pairs)
    }

    fn format_action(env: &EnvSpec, variant: agora_environments::Variant, action: &Action) -> String {
        let t = VariantTable::shipped();
        match action {
            Action::Choice(i) => {
                let labels: &[String] = match env {
                    EnvSpec::PrisonersDilemma(_) => &t.pd(variant).labels,
                    EnvSpec::Bargaining(_) => &t.bargain(variant).labels,
                    EnvSpec::NamingGame(_) => &t.ng(variant).names,
                    _ => &[],
                };
                labels.get(*i as usize).cloned().unwrap_or_else(|| i.to_string())
            }
            Action::Amount(a) => a.to_string(),
            Action::Allocation(v) => format!("{v:?}"),
        }
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
        let labels_shown = labels_shown(obs, opts);
        let (schema, example, help) = self.answer(obs, opts, &labels_shown);
        let (persona, persona_pairs) = Self::persona(opts);
        let (name, _) = paradigm(env);
        let system = self.render_template(
            "system.j2",
            context! {
                task_id => opts.task_id, opening => opts.opening.clone().unwrap_or_else(|| DEFAULT_OPENING.to_string()),
                priming => opts.priming, paradigm => name,
                persona_format => match opts.persona_format { PersonaFormat::Sentence => "sentence", PersonaFormat::Bullets => "bullets", PersonaFormat::Table => "table" },
                persona => persona, persona_pairs => persona_pairs,
                rules => self.rules(env, obs, opts)?, reasoning => opts.step_by_step,
                answer_example => example, answer_help => help,
            },
        )?;
        let user = self.user(env, obs, history, seat, opts)?;
        let messages = vec![
            Message { role: "system".into(), content: apply_layout(&system, opts.layout) },
            Message { role: "user".into(), content: apply_layout(&user, opts.layout) },
        ];
        Ok(Rendered { messages, schema, field: opts.answer_field.clone() })
    }

    /// The recognition probe, asked outside the behavioural session: the same rules, and the
    /// question which experiment this is.
    pub fn render_probe(&self, env: &EnvSpec, obs: &Observation, opts: &PromptOptions) -> Result<Vec<Message>, String> {
        let plain = PromptOptions { priming: false, ..opts.clone() };
        let rules = self.rules(env, obs, &plain)?;
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
        obs: &Observation,
        history: &[Feedback],
        seat: usize,
        opts: &PromptOptions,
    ) -> Result<String, String> {
        let me = agent_label(seat, opts.named_agents);
        let partner = match env {
            EnvSpec::PrisonersDilemma(_) => Some(agent_label(1 - seat.min(1), opts.named_agents)),
            _ => None,
        };
        let unit = match env {
            EnvSpec::Bargaining(_) | EnvSpec::MoneyRequest(_) => "game",
            _ => "round",
        };
        let v = obs.variant;
        let fmt = |a: &Action| Self::format_action(env, v, a);
        let columns: Vec<&str> = match env {
            EnvSpec::PrisonersDilemma(_) => vec!["you chose", "the other chose"],
            EnvSpec::PublicGoods(p) if p.punishment => {
                vec!["you contributed", "others contributed", "your deductions"]
            }
            EnvSpec::PublicGoods(_) => vec!["you contributed", "others contributed"],
            EnvSpec::Bargaining(_) => vec!["your role", "your decision", "the other's decision"],
            EnvSpec::MoneyRequest(_) => vec!["you requested", "the other requested"],
            EnvSpec::NamingGame(_) => vec!["you picked", "your partner picked"],
        };
        let start = history.len().saturating_sub(obs.memory as usize);
        let rows: Vec<minijinja::Value> = history[start..]
            .iter()
            .map(|h| {
                let own: Vec<String> = h.own.iter().map(|(_, a)| fmt(a)).collect();
                let others: Vec<String> = h.others.iter().map(fmt).collect();
                let mut cells: Vec<String> = match env {
                    EnvSpec::Bargaining(_) => {
                        let role = h.own.first().map(|(r, _)| r.as_str()).unwrap_or("-");
                        vec![role.to_string(), own.join(", "), others.join(", ")]
                    }
                    EnvSpec::PublicGoods(_) => vec![own.first().cloned().unwrap_or_default(), others.join(", ")],
                    _ => vec![own.join(", "), others.join(", ")],
                };
                if matches!(env, EnvSpec::PublicGoods(p) if p.punishment) {
                    cells.push(own.get(1).cloned().unwrap_or_else(|| "-".into()));
                }
                let narrative = format!(
                    "{} {}; the other{} {}; you earned {} points.",
                    match env {
                        EnvSpec::PublicGoods(_) => "you contributed",
                        EnvSpec::MoneyRequest(_) => "you requested",
                        EnvSpec::NamingGame(_) => "you picked",
                        EnvSpec::Bargaining(_) => "as the {role} you chose",
                        _ => "you chose",
                    }
                    .replace("{role}", h.own.first().map(|(r, _)| r.as_str()).unwrap_or("player")),
                    own.first().cloned().unwrap_or_default(),
                    if h.others.len() > 1 { "s" } else { "" },
                    if h.others.is_empty() {
                        "had no move".to_string()
                    } else {
                        format!("chose {}", others.join(", "))
                    },
                    h.payoff
                );
                context! { round => h.round, cells => cells, payoff => format!("{}", h.payoff), narrative => narrative }
            })
            .collect();
        let summary = {
            let shown = &history[start..];
            let n = shown.len().max(1) as f64;
            let mean_pay = shown.iter().map(|h| h.payoff).sum::<f64>() / n;
            let own_mean = shown.iter().filter_map(|h| h.own.first()).map(|(_, a)| a.value()).sum::<f64>() / n;
            match env {
                EnvSpec::PrisonersDilemma(_) | EnvSpec::NamingGame(_) => {
                    let matched = shown.iter().filter(|h| h.own.first().map(|(_, a)| a) == h.others.first()).count();
                    format!("average points per {unit}: {mean_pay:.2}; {matched} of {} {unit}s with the same choice as the other", shown.len())
                }
                _ => format!("average points per {unit}: {mean_pay:.2}; your average decision: {own_mean:.2}"),
            }
        };
        let question = match (&obs.role, &obs.context) {
            (Role::Player, _) => "Which option do you choose?".to_string(),
            (Role::Contributor, _) => match &obs.space {
                ActionSpace::Amount { max, .. } => format!("How many of your {max} points do you put into the group account?"),
                _ => "How much do you contribute?".into(),
            },
            (Role::Punisher, Context::Contributions { own, others, .. }) => format!(
                "This round you contributed {own}; the other members contributed {} (in this order). How many deduction points do you assign to each of them?",
                others.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(", ")
            ),
            (Role::Proposer, _) => "You are the proposer in this game. How many points do you offer the responder?".into(),
            (Role::Responder, Context::Offer { offer, pie }) => {
                format!("You are the responder in this game. The proposer offers you {offer} of the {pie} points. Do you accept or reject?")
            }
            (Role::Dictator, _) => "You are the allocator in this game. How many points do you give the recipient?".into(),
            (Role::Investor, _) => "You are the investor in this game. How many points do you send?".into(),
            (Role::Trustee, Context::Received { amount }) => {
                format!("You are the trustee in this game. You received {amount} points. How many do you return to the investor?")
            }
            (Role::Requester, _) => "How much do you request?".into(),
            (Role::Namer, _) => "Which name do you pick?".into(),
            (role, _) => format!("Your decision as {}?", role.as_str()),
        };
        self.render_template(
            "user.j2",
            context! {
                me => me, partner => partner, history => rows, history_format => match opts.history_format {
                    HistoryFormat::Table => "table", HistoryFormat::Narrative => "narrative", HistoryFormat::Summary => "summary" },
                history_columns => columns, summary => summary, unit => unit, round => obs.round, rounds => obs.rounds,
                question => question,
            },
        )
    }
}

/// The options of a choice as this agent sees them: in its own order of the pool (naming
/// game), reversed by the action-order cell; empty for amounts.
fn labels_shown(obs: &Observation, opts: &PromptOptions) -> Vec<String> {
    let mut shown: Vec<String> = match (&obs.space, &obs.context) {
        (ActionSpace::Choice { labels }, Context::Names { order }) => {
            order.iter().map(|i| labels[*i as usize].clone()).collect()
        }
        (ActionSpace::Choice { labels }, _) => labels.to_vec(),
        _ => Vec::new(),
    };
    if opts.reversed_actions {
        shown.reverse();
    }
    shown
}

/// A number as a person writes it (3, not 3.0).
fn num(x: f64) -> String {
    format!("{x}")
}

/// Applies the layout presentation check to rendered text.
fn apply_layout(text: &str, layout: Layout) -> String {
    match layout {
        Layout::Default => text.trim_end().to_string(),
        Layout::Inline => text.split_whitespace().collect::<Vec<_>>().join(" "),
        Layout::SentencePerLine => {
            let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
            flat.replace(". ", ".\n").replace("? ", "?\n").replace(": |", ":\n|")
        }
    }
}
