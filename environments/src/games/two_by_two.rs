//! The symmetric 2×2 games: two fixed players choose one of two options at the same time,
//! repeated over rounds. One implementation serves every such game; what makes a game is its
//! variants file (`assets/environments/<game>.ron`: what the game declares — its description,
//! paradigm, default rounds and memory, which payoffs a study's `g` replaces, its metrics, its
//! headline, its action indicator — and the payoffs, labels and cover story of C0–C3), its
//! rules template (`assets/prompts/<game>.j2`, read with the values `cover_story`, `rounds`,
//! `labels`, `a`, `b`, `aa`, `ab`, `ba`, `bb`) and its one registry line in
//! `with_two_by_two_games!` (`environments/src/lib.rs`), which registers it in `kinds!` and, as
//! `Game(TwoByTwoParams<{ EnvKind::Game as usize }>, ...)`, in `games!`.

use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::sync::{Arc, OnceLock};

use rand::RngCore;
use serde::{Deserialize, Serialize};

use crate::error::{at_least_one, finite, EnvError};
use crate::game::{
    in_order, Direction, Game, Headline, Indicator, IndicatorRule, MetricDef, NoIndicator, Rules, RunView, SummaryKind,
    Wording,
};
use crate::kind::{EnvKind, Role, Variant};
use crate::observation::{Context, Observation, PayoffBounds};
use crate::variants::{two_labels, VARIANTS_VERSION};
use crate::{check_actions, choice_index, num, outcome, Action, ActionSpace, DecisionRow, Environment, Request, Step};

/// Which payoffs a study's `g` replaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub enum GCells {
    /// B against B (the stag hunt's jointly rewarding outcome).
    Bb,
    /// Both matching outcomes, A against A and B against B (the coordination game's match).
    Diagonal,
}

/// How a metric is read from a run's choices (option B is index 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub enum Measure {
    /// The share of decisions choosing B, averaged over rounds.
    ShareB,
    /// The share choosing B in the first round.
    ShareBFirst,
    /// The share choosing B in the last round.
    ShareBLast,
    /// The share of rounds in which the two chose alike.
    Matched,
    /// The share of the last `n` rounds in which the two chose alike.
    MatchedLast(usize),
}

/// One metric a 2×2 game reports.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricSpec {
    /// Its name in the `metrics` table.
    pub name: String,
    /// Its unit, as a reader would say it.
    pub unit: String,
    /// How it is read.
    pub measure: Measure,
    /// For a primary outcome, how the human literature moves it.
    #[serde(default)]
    pub primary: Option<Direction>,
}

/// The action indicator of the game's player role: 1 when the choice has index `choice`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndicatorSpec {
    /// The indicator's name.
    pub name: String,
    /// The choice it marks.
    pub choice: u32,
    /// What it is, in words.
    pub definition: String,
}

/// What a 2×2 game declares in its variants file, beside the variants.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GameSpec {
    /// One line for `agora list environments`.
    pub description: String,
    /// The paradigm's usual name.
    pub paradigm: String,
    /// Words whose mention means the paradigm was recognised.
    pub keywords: Vec<String>,
    /// Rounds played by default.
    pub rounds: u32,
    /// Rounds of history shown by default.
    pub memory: u32,
    /// Which payoffs a study's `g` replaces; `None`: the game takes no `g`.
    #[serde(default)]
    pub g: Option<GCells>,
    /// The metrics, in the order the game reports them.
    pub metrics: Vec<MetricSpec>,
    /// The metric of the baseline arm the cross-model tables report.
    pub headline: String,
    /// The action indicator, if one option is the prosocial one.
    #[serde(default)]
    pub indicator: Option<IndicatorSpec>,
    /// Why there is no action indicator, if there is none.
    #[serde(default)]
    pub no_indicator: Option<String>,
}

/// The payoffs, labels and cover story of one variant (index 0 is A, index 1 is B).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cells {
    /// The situation as a participant reads it.
    pub cover_story: String,
    /// The two actions, A first.
    pub labels: Arc<[String]>,
    /// A against A.
    pub aa: f64,
    /// A against B.
    pub ab: f64,
    /// B against A.
    pub ba: f64,
    /// B against B.
    pub bb: f64,
}

/// A 2×2 game's variants file as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename = "TwoByTwo")]
struct File {
    version: u32,
    game: GameSpec,
    variants: BTreeMap<Variant, Cells>,
}

/// A 2×2 game, read from its variants file: the one definition every method of the game reads.
#[derive(Debug)]
pub struct TwoByTwoDef {
    /// Which game the observations name.
    pub kind: EnvKind,
    /// What the file declares.
    pub spec: GameSpec,
    variants: BTreeMap<Variant, Cells>,
    template: &'static str,
    paradigm: &'static str,
    keywords: &'static [&'static str],
    metrics: &'static [MetricDef],
    headline: &'static [Headline],
    indicators: &'static [Indicator],
    no_indicator: &'static [NoIndicator],
}

/// A text kept for the life of the program (a game's declarations are read once).
fn keep(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}

impl TwoByTwoDef {
    /// Reads the variants file `file` (its text `text`) of the 2×2 game `kind`, whose rules
    /// template is `template`. Errors name the file and what is wrong in it.
    pub fn parse(kind: EnvKind, file: &str, text: &str, template: &'static str) -> Result<TwoByTwoDef, EnvError> {
        let bad = |message: String| EnvError::VariantTable { file: file.to_string(), message };
        let f: File = ron::from_str(text).map_err(|e| bad(e.to_string()))?;
        if f.version != VARIANTS_VERSION {
            return Err(bad(format!("version: expected {VARIANTS_VERSION}, got {}", f.version)));
        }
        for v in Variant::ALL {
            let cells = f.variants.get(&v).ok_or_else(|| bad(format!("lacks variant {}", v.as_str())))?;
            two_labels(&cells.labels).map_err(|m| bad(format!("{}: {m}", v.as_str())))?;
            if [cells.aa, cells.ab, cells.ba, cells.bb].iter().any(|p| !p.is_finite()) {
                return Err(bad(format!("{}: every payoff must be a finite number", v.as_str())));
            }
        }
        let g = &f.game;
        if g.rounds == 0 || g.memory == 0 {
            return Err(bad("game: rounds and memory must be at least 1".into()));
        }
        let mut names = std::collections::BTreeSet::new();
        for m in &g.metrics {
            if !names.insert(m.name.as_str()) {
                return Err(bad(format!("game: metric `{}` is declared twice", m.name)));
            }
            if matches!(m.measure, Measure::MatchedLast(0)) {
                return Err(bad(format!("game: metric `{}`: MatchedLast counts at least one round", m.name)));
            }
        }
        if !g.metrics.iter().any(|m| m.primary.is_some()) {
            return Err(bad("game: no metric is primary".into()));
        }
        if !names.contains(g.headline.as_str()) {
            return Err(bad(format!("game: headline `{}` is not one of its metrics", g.headline)));
        }
        match (&g.indicator, &g.no_indicator) {
            (Some(i), None) if i.choice < 2 => {}
            (Some(_), None) => return Err(bad("game: indicator.choice must be 0 or 1".into())),
            (None, Some(_)) => {}
            _ => return Err(bad("game: declare either an indicator or why there is none (no_indicator)".into())),
        }
        let metrics: Vec<MetricDef> = g
            .metrics
            .iter()
            .map(|m| match m.primary {
                Some(direction) => MetricDef::primary(keep(&m.name), keep(&m.unit), direction),
                None => MetricDef::secondary(keep(&m.name), keep(&m.unit)),
            })
            .collect();
        let indicators: Vec<Indicator> = g
            .indicator
            .iter()
            .map(|i| Indicator {
                role: Role::Player.as_str(),
                name: keep(&i.name),
                definition: keep(&i.definition),
                binary: true,
                rule: IndicatorRule::Choice(i.choice),
            })
            .collect();
        let no_indicator: Vec<NoIndicator> =
            g.no_indicator.iter().map(|why| NoIndicator { role: "*", why: keep(why) }).collect();
        let keywords: Vec<&'static str> = g.keywords.iter().map(|k| keep(k)).collect();
        Ok(TwoByTwoDef {
            kind,
            template,
            paradigm: keep(&g.paradigm),
            keywords: Box::leak(keywords.into_boxed_slice()),
            metrics: Box::leak(metrics.into_boxed_slice()),
            headline: Box::leak(vec![Headline { arm: "baseline", metric: keep(&g.headline) }].into_boxed_slice()),
            indicators: Box::leak(indicators.into_boxed_slice()),
            no_indicator: Box::leak(no_indicator.into_boxed_slice()),
            spec: f.game,
            variants: f.variants,
        })
    }

    /// The cells of one variant.
    pub fn cells(&self, v: Variant) -> &Cells {
        &self.variants[&v]
    }

    /// The payoff matrix of `variant`, `[own][other]`, with `g` in the cells it replaces.
    pub fn matrix(&self, variant: Variant, g: Option<f64>) -> [[f64; 2]; 2] {
        let c = self.cells(variant);
        let (mut aa, mut bb) = (c.aa, c.bb);
        match (self.spec.g, g) {
            (Some(GCells::Bb), Some(g)) => bb = g,
            (Some(GCells::Diagonal), Some(g)) => (aa, bb) = (g, g),
            _ => {}
        }
        [[aa, c.ab], [c.ba, bb]]
    }

    /// Checks a study's parameters of this game; the error names the field.
    pub fn validate(&self, p: &Plays) -> Result<(), EnvError> {
        at_least_one("rounds", p.rounds)?;
        at_least_one("memory", p.memory)?;
        finite("g", p.g)?;
        if p.g.is_some() && self.spec.g.is_none() {
            return Err(crate::error::invalid("g", "this game takes no g"));
        }
        Ok(())
    }

    /// One run in `variant`.
    pub fn build_env(&self, p: &Plays, variant: Variant) -> Box<dyn Environment> {
        let labels = self.cells(variant).labels.clone();
        Box::new(TwoByTwo::new(self.kind, variant, self.matrix(variant, p.g), labels, *p))
    }

    /// What a participant reads of `variant`.
    pub fn wording(&self, variant: Variant) -> Wording {
        Wording {
            paradigm: self.paradigm,
            keywords: self.keywords,
            labels: self.cells(variant).labels.clone(),
            unit: "round",
            history_columns: vec!["you chose", "the other chose"],
            narrative_verb: "you chose",
            fixed_partner: true,
            summary: SummaryKind::Matches,
        }
    }

    /// The rules: the game's template and its values.
    pub fn rules(&self, p: &Plays, obs: &Observation, reversed: bool) -> Rules {
        let c = self.cells(obs.variant);
        let m = self.matrix(obs.variant, p.g);
        Rules {
            template: self.template,
            values: serde_json::json!({
                "cover_story": c.cover_story, "rounds": p.rounds, "labels": in_order(&c.labels, reversed),
                "a": c.labels[0], "b": c.labels[1],
                "aa": num(m[0][0]), "ab": num(m[0][1]), "ba": num(m[1][0]), "bb": num(m[1][1]),
            }),
        }
    }

    /// The run-level outcomes, in the order the file declares them; none for a run without
    /// decisions.
    pub fn outcomes(&self, run: &RunView<'_>) -> Vec<(String, f64)> {
        let rounds = outcome::per_round(run.decisions, Role::Player.as_str());
        let (Some(first), Some(last)) = (rounds.first(), rounds.last()) else {
            return Vec::new();
        };
        let matched = matched_rounds(run.decisions);
        let share = |m: &[(u32, bool)]| m.iter().filter(|x| x.1).count() as f64 / m.len() as f64;
        self.spec
            .metrics
            .iter()
            .map(|m| {
                let v = match m.measure {
                    Measure::ShareB => outcome::mean_over_rounds(&rounds, |r| r.value),
                    Measure::ShareBFirst => first.value,
                    Measure::ShareBLast => last.value,
                    Measure::Matched => share(&matched),
                    Measure::MatchedLast(n) => share(&matched[matched.len().saturating_sub(n)..]),
                };
                (m.name.clone(), v)
            })
            .collect()
    }
}

/// What a study sets of a 2×2 game: rounds, memory and `g`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plays {
    /// Rounds played.
    pub rounds: u32,
    /// Rounds of history shown.
    pub memory: u32,
    /// Replaces the payoffs the file names (`g` of the profile methods' conditions).
    pub g: Option<f64>,
}

/// The parameters of the 2×2 game `EnvKind::ALL[K]`, as a study writes them
/// (`StagHunt(rounds: 10, memory: 5, g: Some(9))`, omitted fields at the file's defaults).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields, default, bound = "")]
pub struct TwoByTwoParams<const K: usize> {
    /// Rounds played (1 for a one-shot decision).
    pub rounds: u32,
    /// Rounds of history shown to an agent.
    pub memory: u32,
    /// Replaces the payoffs the game's file names (the profile's conditions g).
    pub g: Option<f64>,
    #[serde(skip)]
    game: PhantomData<[(); K]>,
}

impl<const K: usize> Clone for TwoByTwoParams<K> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<const K: usize> Copy for TwoByTwoParams<K> {}

impl<const K: usize> PartialEq for TwoByTwoParams<K> {
    fn eq(&self, other: &Self) -> bool {
        self.plays() == other.plays()
    }
}

impl<const K: usize> std::fmt::Debug for TwoByTwoParams<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct(EnvKind::ALL[K].as_str())
            .field("rounds", &self.rounds)
            .field("memory", &self.memory)
            .field("g", &self.g)
            .finish()
    }
}

/// Each 2×2 game's parameters under a name of their own (`StagHuntParams`), with the defaults
/// of its shipped file: the type is one, its instantiations are different games.
impl<const K: usize> schemars::JsonSchema for TwoByTwoParams<K> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        format!("{:?}Params", EnvKind::ALL[K]).into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let d = Self::default();
        let takes_g = Self::def().spec.g.is_some();
        let mut properties = serde_json::Map::new();
        properties.insert(
            "rounds".into(),
            serde_json::json!({"description": "Rounds played (1 for a one-shot decision).", "type": "integer",
                "format": "uint32", "minimum": 1, "default": d.rounds}),
        );
        properties.insert(
            "memory".into(),
            serde_json::json!({"description": "Rounds of history shown to an agent.", "type": "integer",
                "format": "uint32", "minimum": 1, "default": d.memory}),
        );
        let g = if takes_g {
            "Replaces the payoffs the game's file names (the profile's conditions g); `None` keeps the file's."
        } else {
            "Not taken by this game: must be left out (or `None`)."
        };
        properties.insert(
            "g".into(),
            serde_json::json!({"description": g, "type": ["number", "null"], "format": "double", "default": null}),
        );
        schemars::json_schema!({
            "description": format!("The parameters of the 2×2 game `{}`: {}", EnvKind::ALL[K].as_str(), Self::description()),
            "type": "object",
            "properties": properties,
            "additionalProperties": false,
        })
    }
}

impl<const K: usize> Default for TwoByTwoParams<K> {
    fn default() -> Self {
        let d = Self::def();
        TwoByTwoParams { rounds: d.spec.rounds, memory: d.spec.memory, g: None, game: PhantomData }
    }
}

/// The shipped definitions, read once each, by the game's place in the registry.
static SHIPPED: [OnceLock<TwoByTwoDef>; EnvKind::ALL.len()] = [const { OnceLock::new() }; EnvKind::ALL.len()];

impl<const K: usize> TwoByTwoParams<K> {
    /// The game's definition, read from its shipped variants file.
    pub fn def() -> &'static TwoByTwoDef {
        let kind = EnvKind::ALL[K];
        SHIPPED[K].get_or_init(|| {
            let (file, text) = kind.variants_file();
            TwoByTwoDef::parse(kind, file, text, kind.template().0)
                .expect("invariant: the shipped variants file parses (tested by the registry tests)")
        })
    }

    /// One line for `agora list environments`.
    pub fn description() -> &'static str {
        &Self::def().spec.description
    }

    /// What the study sets.
    pub fn plays(&self) -> Plays {
        Plays { rounds: self.rounds, memory: self.memory, g: self.g }
    }

    /// The payoff matrix of `variant`, `[own][other]`, with `g` applied.
    pub fn matrix(&self, variant: Variant) -> [[f64; 2]; 2] {
        Self::def().matrix(variant, self.g)
    }
}

impl<const K: usize> Game for TwoByTwoParams<K> {
    fn validate(&self) -> Result<(), EnvError> {
        Self::def().validate(&self.plays())
    }

    fn build_env(&self, variant: Variant) -> Result<Box<dyn Environment>, EnvError> {
        Ok(Self::def().build_env(&self.plays(), variant))
    }

    crate::game::game_fields!(memory);

    fn wording(&self, variant: Variant) -> Wording {
        Self::def().wording(variant)
    }

    fn rules(&self, obs: &Observation, reversed: bool) -> Result<Rules, EnvError> {
        Ok(Self::def().rules(&self.plays(), obs, reversed))
    }

    fn metrics(&self) -> &'static [MetricDef] {
        Self::def().metrics
    }

    fn headline(&self) -> &'static [Headline] {
        Self::def().headline
    }

    fn indicators(&self) -> &'static [Indicator] {
        Self::def().indicators
    }

    fn no_indicator(&self) -> &'static [NoIndicator] {
        Self::def().no_indicator
    }

    fn outcomes(&self, run: &RunView<'_>) -> Vec<(String, f64)> {
        Self::def().outcomes(run)
    }

    fn expected_decisions(&self) -> (u64, bool) {
        (u64::from(self.rounds) * 2, false)
    }
}

/// One run of a repeated symmetric 2×2 game.
pub struct TwoByTwo {
    kind: EnvKind,
    variant: Variant,
    /// `payoff[own][other]`: what a player choosing `own` earns against `other`.
    payoff: [[f64; 2]; 2],
    labels: Arc<[String]>,
    plays: Plays,
    round: u32,
}

impl TwoByTwo {
    /// A run of the rounds `plays` sets, with the given matrix and labels.
    pub fn new(kind: EnvKind, variant: Variant, payoff: [[f64; 2]; 2], labels: Arc<[String]>, plays: Plays) -> Self {
        TwoByTwo { kind, variant, payoff, labels, plays, round: 0 }
    }

    fn space(&self) -> ActionSpace {
        ActionSpace::Choice { labels: self.labels.clone() }
    }
}

impl Environment for TwoByTwo {
    fn kind(&self) -> EnvKind {
        self.kind
    }

    fn next_stage(&mut self, _rng: &mut dyn RngCore) -> Vec<Request> {
        let all: Vec<f64> = self.payoff.iter().flatten().copied().collect();
        let bounds = PayoffBounds {
            min: all.iter().copied().fold(f64::INFINITY, f64::min),
            mean_abs: all.iter().map(|p| p.abs()).sum::<f64>() / 4.0,
        };
        let observation = Observation {
            env: self.kind,
            variant: self.variant,
            role: Role::Player,
            round: self.round + 1,
            rounds: Some(self.plays.rounds),
            space: self.space(),
            context: Context::None,
            payoffs: bounds,
            memory: self.plays.memory,
        };
        Request::each(0..2, &observation)
    }

    fn resolve(&mut self, actions: &[(usize, Action)], _rng: &mut dyn RngCore) -> Result<Step, EnvError> {
        let space = self.space();
        let c: Vec<u32> = check_actions(actions, &[(0, &space), (1, &space)])?.into_iter().map(choice_index).collect();
        self.round += 1;
        let mut step = Step { round: self.round, ..Step::default() };
        for i in 0..2 {
            let other = 1 - i;
            let pay = self.payoff[c[i] as usize][c[other] as usize];
            step.push_paired(DecisionRow::choice(i, Role::Player, c[i], None), (other, Action::Choice(c[other])), pay);
        }
        Ok(step)
    }

    fn is_done(&self) -> bool {
        self.round >= self.plays.rounds
    }
}

/// Per round, whether the two players chose alike (decisions of one run in stage order).
pub fn matched_rounds(decisions: &[crate::game::RecordedDecision]) -> Vec<(u32, bool)> {
    let mut rounds: std::collections::BTreeMap<u32, Vec<f64>> = std::collections::BTreeMap::new();
    for d in decisions {
        rounds.entry(d.round).or_default().push(d.value);
    }
    rounds.into_iter().map(|(r, v)| (r, v.len() == 2 && v[0] == v[1])).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::RecordedDecision;
    use crate::EnvSpec;
    use rand::SeedableRng;

    type StagHunt = TwoByTwoParams<{ EnvKind::StagHunt as usize }>;
    type Coordination = TwoByTwoParams<{ EnvKind::Coordination as usize }>;

    fn play(spec: EnvSpec, variant: Variant, a: u32, b: u32) -> (f64, f64) {
        let mut env = spec.build(variant).expect("builds");
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        env.pending(&mut rng);
        let s = env.resolve(&[(0, Action::Choice(a)), (1, Action::Choice(b))], &mut rng).expect("legal");
        (s.payoffs[0].1, s.payoffs[1].1)
    }

    fn view<'a>(decisions: &'a [RecordedDecision<'a>]) -> RunView<'a> {
        RunView::c0(decisions, &[])
    }

    #[test]
    fn the_stag_hunts_canonical_payoff_table_is_the_profile_methods() {
        let p = StagHunt::default();
        assert_eq!((p.rounds, p.memory, p.g), (10, 5, None));
        for ((a, b), want) in [((0, 0), (2.0, 2.0)), ((0, 1), (4.0, 0.0)), ((1, 0), (0.0, 4.0)), ((1, 1), (7.0, 7.0))] {
            assert_eq!(play(EnvSpec::StagHunt(p), Variant::C0, a, b), want);
        }
        for g in [5.0, 7.0, 9.0] {
            assert_eq!(play(EnvSpec::StagHunt(StagHunt { g: Some(g), ..p }), Variant::C0, 1, 1), (g, g));
        }
    }

    #[test]
    fn c0_to_c2_are_stag_hunts_and_c3_makes_a_dominant() {
        for v in [Variant::C0, Variant::C1, Variant::C2] {
            let m = StagHunt::default().matrix(v);
            // Two pure equilibria: B/B pays most, A is the safe action.
            assert!(m[1][1] > m[0][1] && m[0][1] > m[0][0] && m[0][0] > m[1][0], "{v:?}");
        }
        let m = StagHunt::default().matrix(Variant::C3);
        assert!(m[0][0] > m[1][0] && m[0][1] > m[1][1], "A strictly dominant under C3");
    }

    #[test]
    fn stag_hunt_outcomes_count_b_choices_and_coordination() {
        let d = |round, seat, value| RecordedDecision { round, seat, role: "player", value, scale: 1.0, context: None };
        let decisions = vec![d(1, 0, 1.0), d(1, 1, 1.0), d(2, 0, 1.0), d(2, 1, 0.0)];
        let out = StagHunt::default().outcomes(&view(&decisions));
        let want = [("stag", 0.75), ("stag_r1", 1.0), ("stag_last", 0.5), ("coordination", 0.5)];
        assert_eq!(out, want.map(|(n, v)| (n.to_string(), v)).to_vec());
        assert!(StagHunt::default().outcomes(&view(&[])).is_empty());
    }

    #[test]
    fn a_coordination_match_pays_g_and_a_mismatch_nothing() {
        for (g, variant) in [(None, Variant::C0), (Some(20.0), Variant::C0), (Some(60.0), Variant::C1)] {
            let spec = EnvSpec::Coordination(Coordination { g, ..Coordination::default() });
            let want = g.unwrap_or(40.0);
            for (a, b, pay) in [(0, 0, want), (1, 1, want), (0, 1, 0.0), (1, 0, 0.0)] {
                assert_eq!(play(spec.clone(), variant, a, b), (pay, pay));
            }
        }
    }

    #[test]
    fn coordination_plays_twelve_rounds_and_c3_rewards_differing() {
        let mut env = EnvSpec::Coordination(Coordination::default()).build(Variant::C3).expect("builds");
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let mut rounds = 0;
        while !env.is_done() {
            env.pending(&mut rng);
            let s = env.resolve(&[(0, Action::Choice(0)), (1, Action::Choice(1))], &mut rng).expect("legal");
            assert!(s.payoffs[0].1 > 0.0);
            rounds += 1;
        }
        assert_eq!(rounds, 12);
    }

    #[test]
    fn late_coordination_reads_the_last_five_rounds() {
        let mut decisions = Vec::new();
        for round in 1..=12u32 {
            // The players match in rounds 1-6 and 11-12 only.
            let b = if (7..=10).contains(&round) { 1.0 } else { 0.0 };
            for (seat, value) in [(0, 0.0), (1, b)] {
                decisions.push(RecordedDecision { round, seat, role: "player", value, scale: 1.0, context: None });
            }
        }
        let out = Coordination::default().outcomes(&view(&decisions));
        assert_eq!(out, vec![("coordination".into(), 8.0 / 12.0), ("coordination_late".into(), 2.0 / 5.0)]);
    }

    #[test]
    fn a_study_writes_a_two_by_two_game_as_before() {
        // The study-file form (and so every run key) is the parameters' fields, as before.
        let p = StagHunt { g: Some(9.0), ..StagHunt::default() };
        let json = serde_json::to_string(&EnvSpec::StagHunt(p)).expect("json");
        assert_eq!(json, r#"{"StagHunt":{"rounds":10,"memory":5,"g":9.0}}"#);
        // As a study file is read (the scenarios' RON options).
        let options = ron::Options::default().with_default_extension(
            ron::extensions::Extensions::UNWRAP_VARIANT_NEWTYPES | ron::extensions::Extensions::IMPLICIT_SOME,
        );
        let read: EnvSpec = options.from_str("StagHunt(g: 9.0)").expect("reads");
        assert_eq!(read, EnvSpec::StagHunt(p));
        assert!(options.from_str::<EnvSpec>("Coordination(bonus: 1)").is_err(), "unknown fields are refused");
        let e = EnvSpec::StagHunt(StagHunt { g: Some(f64::NAN), ..p }).validate().expect_err("refused");
        assert!(e.to_string().contains('g'), "{e}");
    }
}
