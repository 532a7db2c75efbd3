//! `agora reference`: the file formats' reference, generated from the types that parse the files.
//!
//! Each file type has a JSON Schema (`schemas/<file>.schema.json`), derived with `schemars` from
//! the types its loader deserializes into, and a book page (`docs/src/reference/<file>.md`)
//! rendered from the same schema: every type's fields with their type, default, bounds and
//! description, and one complete example that the file's own loader parses before the page is
//! written. `tests/reference.rs` regenerates both and fails where the committed files differ.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use schemars::JsonSchema;
use serde_json::{Map, Value};

/// One file type of the reference.
pub struct FileType {
    /// The name of its schema and page (`study` → `schemas/study.schema.json`).
    pub name: &'static str,
    /// The page's title.
    pub title: &'static str,
    /// What the file is, where it lives and how it is read, in Markdown.
    pub intro: &'static str,
    /// How RON is read for this file (which extensions its loader turns on).
    pub syntax: Syntax,
    /// The schema of the file's top-level type.
    pub schema: fn() -> schemars::Schema,
    /// One complete example, in the file's own syntax.
    pub example: &'static str,
    /// Parses the example with the file's real loader.
    pub check: fn(&str) -> Result<(), String>,
}

/// The RON extensions a file's loader turns on.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// Newtypes unwrapped and `Some` implicit (study, cell and models files).
    Study,
    /// `Some` implicit, nothing else.
    ImplicitSome,
    /// `Some` implicit and variant newtypes unwrapped.
    ImplicitSomeUnwrapVariants,
    /// Plain RON: every `Some(…)` written.
    Plain,
}

fn schema<T: JsonSchema>() -> schemars::Schema {
    schemars::generate::SchemaSettings::draft2020_12().into_generator().into_root_schema_for::<T>()
}

/// A study written for the reference: every block field used once, every default elsewhere.
const STUDY_EXAMPLE: &str = r#"// A study of two games: a dilemma played by three kinds of classical agents, and a public
// goods game whose baseline runs beside one cell that changes a single factor.
Study(
    version: 1,
    name: "my-study",
    description: "Reciprocity against unconditional play, and contributions under a smaller memory",
    master_seed: 42,
    runs: 20,
    blocks: [
        Block(
            name: "dilemma",
            environment: PrisonersDilemma(rounds: 10, memory: 5),
            variants: [C0, C1],
            rosters: [
                Roster(name: "tit-for-tat", members: [Member(policy: TitForTat)]),
                Roster(name: "mixed", members: [
                    Member(policy: AlwaysDefect, count: 1),
                    Member(policy: RothErev(phi: 0.1)),
                ]),
            ],
        ),
        Block(
            name: "public-goods",
            environment: PublicGoods(group_size: 4, punishment: false),
            rosters: [Roster(name: "conditional", members: [Member(policy: ConditionalCooperator())])],
            cells: ["baseline", "memory-3"],
            runs: 10,
            cell_runs: 5,
        ),
    ],
)
"#;

/// An excerpt of the shipped claim table (`assets/claims.ron`).
const CLAIMS_EXAMPLE: &str = r#"ClaimTable(
    version: 1,
    claims: [
        Claim(id: "pgg-round1-human", text: "First-round public-goods contributions match humans",
              environment: "public-goods", arm: "baseline", metric: "contribution_r1",
              kind: Equivalence(anchor: "pgg-round1"),
              mechanism: Values(role: "contributor", values: ["positive_reciprocity", "altruism"], sign: 1.0,
                  why: "conditional cooperation (Fischbacher, Gächter and Fehr 2001) and warm-glow giving (Andreoni 1990)")),
        Claim(id: "pgg-decline", text: "Public-goods contributions decline over the ten rounds",
              environment: "public-goods", arm: "baseline", metric: "contribution_change",
              kind: Direction(sign: -1.0, margin: 0.10, anchor: "pgg-decline")),
    ],
)
"#;

/// An excerpt of the shipped anchor table (`assets/anchors.ron`).
const ANCHORS_EXAMPLE: &str = r#"AnchorTable(
    version: 1,
    anchors: [
        Anchor(
            id: "pgg-round1", environment: PublicGoods, quantity: "contribution, round 1",
            value: Point(0.5), unit: "share of endowment",
            source: "Ledyard (1995) survey; Fischbacher, Gaechter & Fehr (2001)",
            evidence: "survey", tier: MA, status: S, margin: Some(0.10), notes: "",
        ),
        Anchor(
            id: "pgg-decline", environment: PublicGoods, quantity: "contribution dynamics",
            value: Direction(Decline), unit: "change over 10 rounds",
            source: "Ledyard (1995) survey; Fischbacher, Gaechter & Fehr (2001)",
            evidence: "survey", tier: MA, status: S, notes: "contributions decline over 10 rounds",
        ),
    ],
)
"#;

/// A codebook of two codes, from the shipped default (`assets/codebooks/default.ron`).
const CODEBOOK_EXAMPLE: &str = r#"Codebook(
    name: "my-codebook",
    version: 1,
    description: "Reciprocity against restating the task",
    residual: "understanding",
    codes: [
        Code(
            name: "positive_reciprocity",
            definition: "Rewarding a match because it acted kindly before.",
            example: "A helped me earlier, so I should return the favor.",
            statement: Some(Statement(
                general: "I want to return the favor when someone treats me well.",
                naming: [
                    Naming(when: HelpedMe, favours: MoreForOther,
                        text: "{Other} gave me more {unit} earlier, so I want to return the favor with {option}."),
                ],
            )),
        ),
        Code(
            name: "understanding",
            definition: "Restating the task or the options without stating a value.",
            example: "I have to choose between B1 and B2.",
        ),
    ],
    lexicon: [
        Rule(code: "positive_reciprocity", patterns: ["return the favor", "reciprocat*", "helped me"]),
    ],
)
"#;

/// An excerpt of the shipped requirements (`assets/requirements.ron`).
const REQUIREMENTS_EXAMPLE: &str = r#"Requirements(
    version: 1,
    name: "allocation agent",
    alpha: 0.05,
    power: 0.8,
    assumed_icc: 0.25,
    requirements: [
        Requirement(
            name: "Prefers efficient allocations",
            about: Statistic(BetaW),
            model: "*",
            test: AtLeast(0.30),
        ),
        Requirement(
            name: "Identity-blind on welfare",
            about: Statistic(GammaW),
            model: "*",
            test: Invariant(margin: 0.15, against: Zero),
        ),
    ],
)
"#;

/// The file types, in the order the book lists them.
pub fn file_types() -> Vec<FileType> {
    vec![
        FileType {
            name: "study",
            title: "Study files",
            intro: "A study (`scenarios/studies/*.ron`) is what `agora run` and `agora check` read: a \
                    master seed, run counts and blocks, each block a game with its variants, rosters and \
                    cells. `agora check FILE` says whether a study is valid and prints its plan; \
                    `agora list environments --params` and `agora list agents --params` print every game \
                    and policy as a study writes it, with every parameter at its default.\n\n\
                    A study runs where the cells it names are found: `../cells` beside the study's \
                    directory (the shipped `scenarios/cells`), or the directory `--cells` names. The \
                    pages people see when a roster has a `Human` seat are the study's `participants`.",
            syntax: Syntax::Study,
            schema: schema::<agora_scenarios::Study>,
            example: STUDY_EXAMPLE,
            check: |text| {
                let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
                let path = dir.path().join("studies").join("my-study.ron");
                std::fs::create_dir_all(path.parent().expect("invariant: a parent")).map_err(|e| e.to_string())?;
                std::fs::write(&path, text).map_err(|e| e.to_string())?;
                let cells = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/cells");
                agora_scenarios::Plan::load(&path, Some(&cells)).map(|_| ()).map_err(|e| e.to_string())
            },
        },
        FileType {
            name: "cell",
            title: "Cell files",
            intro: "A cell (`scenarios/cells/<name>.ron`) changes one factor of the canonical baseline; a \
                    study's block names it in `cells`. `agora list cells` lists the shipped ones. The file's \
                    name (without `.ron`) must be the cell's `name`.",
            syntax: Syntax::Study,
            schema: schema::<agora_scenarios::Cell>,
            example: include_str!("../scenarios/cells/memory-3.ron"),
            check: |text| {
                agora_scenarios::Cell::parse(Path::new("memory-3.ron"), text).map(|_| ()).map_err(|e| e.to_string())
            },
        },
        FileType {
            name: "models",
            title: "Models files",
            intro: "A models file (`scenarios/models/*.ron`) declares language models for \
                    `agora run --models FILE`, or for a study's `include_models`; a study may also declare \
                    the same `Model(...)` entries in its own `models`. A roster seat names a model with \
                    `Llm(model: \"NAME\")`. An API key is never written in a file: `api_key_env` names the \
                    environment variable that holds it.",
            syntax: Syntax::Study,
            schema: schema::<agora_scenarios::ModelsFile>,
            example: include_str!("../scenarios/models/example.ron"),
            check: |text| {
                let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
                let path = dir.path().join("models.ron");
                std::fs::write(&path, text).map_err(|e| e.to_string())?;
                let file = agora_scenarios::ModelsFile::load(&path).map_err(|e| e.to_string())?;
                file.models.iter().try_for_each(|m| m.validate())
            },
        },
        FileType {
            name: "claims",
            title: "Claim tables",
            intro: "The claim table (`assets/claims.ron`, compiled in) lists the claims the certification \
                    ladder grades: each names the environment, arm and run-level metric it is read from, \
                    its test against a human anchor of the anchor table, and the human mechanism Tier 3 \
                    looks for in the transcripts. Every anchor a claim names must exist in the anchor \
                    table and fit the claim's kind; ids are unique.",
            syntax: Syntax::ImplicitSome,
            schema: schema::<agora_analysis::claims::ClaimTable>,
            example: CLAIMS_EXAMPLE,
            check: |text| agora_analysis::claims::ClaimTable::parse(text).map(|_| ()),
        },
        FileType {
            name: "anchors",
            title: "Anchor tables",
            intro: "The anchor table (`assets/anchors.ron`, compiled in; `agora list anchors` prints it) \
                    holds the human values the claims are graded against, each with its source and \
                    provenance.",
            syntax: Syntax::ImplicitSomeUnwrapVariants,
            schema: schema::<agora_analysis::anchors::AnchorTable>,
            example: ANCHORS_EXAMPLE,
            check: |text| agora_analysis::anchors::AnchorTable::parse(text).map(|_| ()),
        },
        FileType {
            name: "codebook",
            title: "Codebooks",
            intro: "A codebook (`assets/codebooks/default.ron` ships; `agora audit --codebook FILE` reads \
                    another) lists the codes the transcript audit assigns to the sentences of a reasoning, \
                    and the lexicon coder's rules. A changed definition or rule needs a new `version`: \
                    the audit records the codebook's name, version and SHA-256 with every coded response.",
            syntax: Syntax::Plain,
            schema: schema::<agora_audit::Codebook>,
            example: CODEBOOK_EXAMPLE,
            check: |text| {
                agora_audit::Codebook::parse(text, Path::new("codebook.ron")).map(|_| ()).map_err(|e| e.to_string())
            },
        },
        FileType {
            name: "profile",
            title: "Profile studies",
            intro: "A profile study (`scenarios/profiles/*.ron`) is what `agora profile` reads: the models \
                    and tasks of a behavioural profile, the responses per input and the master seed. \
                    `agora profile FILE --dry-run` prints the calls per model and category without \
                    asking. The tasks, their question versions, schedules and General Robustness wording \
                    are frozen files under `assets/profile` (see \"The behavioural profile\").",
            syntax: Syntax::Plain,
            schema: schema::<agora_profile::runner::ProfileStudy>,
            example: include_str!("../scenarios/profiles/profile-slice.ron"),
            check: |text| {
                let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
                let path = dir.path().join("profile-slice.ron");
                std::fs::write(&path, text).map_err(|e| e.to_string())?;
                agora_profile::runner::ProfileStudy::load(&path).map(|_| ()).map_err(|e| e.to_string())
            },
        },
        FileType {
            name: "requirements",
            title: "Requirements files",
            intro: "A requirements file (`assets/requirements.ron` ships; `agora audit --requirements FILE` \
                    reads another) states requirements on the audit's statistics as tests, each with the \
                    models it applies to.",
            syntax: Syntax::Plain,
            schema: schema::<agora_audit::requirements::Requirements>,
            example: REQUIREMENTS_EXAMPLE,
            check: |text| {
                agora_audit::requirements::Requirements::parse(text, Path::new("requirements.ron"))
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            },
        },
    ]
}

/// Each variant of the enum `T` with a struct's value, as a study file writes it with every
/// field at its default (`PrisonersDilemma(rounds: 10, memory: 5)`), by variant name; fields
/// left out of the serialisation at their default are written too.
pub fn default_forms<T: JsonSchema>() -> Vec<(String, String)> {
    let root = schema::<T>();
    let root = root.as_value();
    let defs = root.get("$defs").and_then(Value::as_object).cloned().unwrap_or_default();
    root.get("oneOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .flat_map(|v| variant_rows(v, &defs))
        .filter(|(_, ron, _, _)| !ron.contains('…'))
        .map(|(variant, ron, _, _)| (variant, ron))
        .collect()
}

/// Every file the reference consists of, by its path relative to the repository root, with its
/// text; each example is parsed by its loader first.
pub fn generate() -> anyhow::Result<Vec<(PathBuf, String)>> {
    let types = file_types();
    let mut out = Vec::new();
    for t in &types {
        (t.check)(t.example).map_err(|e| anyhow::anyhow!("the {} example does not parse: {e}", t.name))?;
        let schema = (t.schema)();
        let mut json = serde_json::to_string_pretty(&schema)?;
        json.push('\n');
        out.push((PathBuf::from(format!("schemas/{}.schema.json", t.name)), json));
        out.push((PathBuf::from(format!("docs/src/reference/{}.md", t.name)), page(t, schema.as_value())));
    }
    out.push((PathBuf::from("docs/src/reference/README.md"), index(&types)));
    Ok(out)
}

/// Writes the reference under `root`, each file through a temporary name.
pub fn write(root: &Path) -> anyhow::Result<()> {
    for (rel, text) in generate()? {
        let path = root.join(&rel);
        let dir = path.parent().expect("invariant: a relative path with a file name");
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
        std::fs::rename(&tmp, &path).with_context(|| format!("writing {}", path.display()))?;
        println!("{}", rel.display());
    }
    Ok(())
}

/// The reference's first page: the file types, and how a schema reads as RON.
fn index(types: &[FileType]) -> String {
    let mut s = String::from(GENERATED);
    s.push_str("# File reference\n\n");
    s.push_str(
        "Every file Agora reads is RON ([Rusty Object Notation](https://github.com/ron-rs/ron)), parsed \
         into the types these pages are generated from (`agora reference` writes them). The same \
         types give a JSON Schema per file, in `schemas/` at the repository root, for editors and \
         for tools that check a file before Agora reads it.\n\n",
    );
    for t in types {
        let _ = writeln!(s, "- [{}]({}.md): `schemas/{}.schema.json`", t.title, t.name, t.name);
    }
    s.push_str("\n## Reading a schema as RON\n\n");
    s.push_str(RON_MAPPING);
    s
}

/// How the JSON Schema's shapes are written in RON.
const RON_MAPPING: &str = "\
The schemas describe values the way JSON would write them; a RON file writes the same values so:

| In the schema | In RON |
|---|---|
| an object of type `Block` (a struct) | `Block(name: \"pd\", environment: PrisonersDilemma())`: the type's name, then its fields in parentheses; the name may be left out, `(name: \"pd\", ...)` |
| an enum's unit variant `\"AlwaysDefect\"` | `AlwaysDefect`, without quotes |
| an enum's variant with fields, `{\"RothErev\": {\"phi\": 0.1}}` | `RothErev(phi: 0.1)` |
| an enum's variant with one value, `{\"Memory\": 3}` | `Memory(3)` |
| an optional value (`null` allowed) | `None`, or `Some(value)`; where the file's loader makes `Some` implicit, the bare `value` |
| a list | `[a, b, c]` |
| a map | `{\"key\": value}` |
| a string | `\"text\"`; a raw string `r#\"text with \"quotes\"\"#` |

A field marked *required* must be written; every other field may be left out and takes its \
default. A field that is not in the table is refused, with the line and column where it stands. \
Comments are written `// ...`.
";

/// The banner every generated page opens with.
const GENERATED: &str = "<!-- Generated by `agora reference` from the types that parse the files; do not edit. -->\n\n";

/// A file type's page: its introduction, its example, then every type it names.
fn page(t: &FileType, root: &Value) -> String {
    let defs = root.get("$defs").and_then(Value::as_object).cloned().unwrap_or_default();
    let root_name = root.get("title").and_then(Value::as_str).unwrap_or(t.name).to_string();
    let mut s = String::from(GENERATED);
    let _ = writeln!(s, "# {}\n\n{}\n", t.title, t.intro);
    let _ = writeln!(s, "Schema: `schemas/{}.schema.json`. {}\n", t.name, syntax_note(t.syntax));
    let _ = writeln!(s, "## Example\n\n```ron\n{}```\n", t.example);
    // Types in the order they are first named, from the file's own type down.
    let mut order = vec![root_name.clone()];
    let mut seen: BTreeSet<String> = order.iter().cloned().collect();
    let mut i = 0;
    while i < order.len() {
        let schema = if i == 0 { root } else { &defs[&order[i]] };
        for r in refs(schema) {
            if seen.insert(r.clone()) {
                order.push(r);
            }
        }
        i += 1;
    }
    // A struct carried by an enum's variant is written as that variant's fields
    // (`PrisonersDilemma(rounds: 10)`), never under its own name.
    let mut carriers: std::collections::BTreeMap<String, Vec<String>> = std::collections::BTreeMap::new();
    for name in &order {
        let schema = if name == &root_name { root } else { &defs[name] };
        for alt in schema.get("oneOf").and_then(Value::as_array).into_iter().flatten() {
            for (variant, inner) in alt.get("properties").and_then(Value::as_object).into_iter().flatten() {
                if let Some(r) = inner.get("$ref").and_then(Value::as_str) {
                    let target = r.rsplit('/').next().unwrap_or(r).to_string();
                    carriers.entry(target).or_default().push(variant.clone());
                }
            }
        }
    }
    for (i, name) in order.iter().enumerate() {
        let schema = if i == 0 { root } else { &defs[name] };
        s.push_str(&type_section(name, schema, &defs, carriers.get(name).map(Vec::as_slice).unwrap_or_default()));
    }
    s
}

fn syntax_note(syntax: Syntax) -> &'static str {
    match syntax {
        Syntax::Study => {
            "Its loader lets a one-value variant be written without its inner parentheses (`Memory(3)`, \
             `Committed(1)`) and `Some` be left out (`runs: 10` for `runs: Some(10)`)."
        }
        Syntax::ImplicitSome => "Its loader lets `Some` be left out (`margin: 0.1` for `margin: Some(0.1)`).",
        Syntax::ImplicitSomeUnwrapVariants => {
            "Its loader lets `Some` be left out and a one-value variant be written without its inner \
             parentheses."
        }
        Syntax::Plain => "Its loader reads plain RON: an optional value is written `Some(value)` or `None`.",
    }
}

/// The `$defs` names a schema refers to, in the order they appear.
fn refs(schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(r)) = m.get("$ref") {
                    if let Some(name) = r.strip_prefix("#/$defs/") {
                        out.push(name.to_string());
                    }
                }
                for (k, x) in m {
                    if k != "$defs" {
                        walk(x, out);
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    walk(schema, &mut out);
    out
}

/// The heading anchor mdBook gives a type's section.
fn anchor(name: &str) -> String {
    name.to_lowercase()
}

/// A schema's description: its title (unless it is only the type's name) and description, as
/// one line of Markdown.
fn describe(schema: &Value) -> String {
    let title = schema.get("title").and_then(Value::as_str).filter(|t| t.contains(' '));
    let parts: Vec<&str> = title.into_iter().chain(schema.get("description").and_then(Value::as_str)).collect();
    let text = parts.join(". ");
    clean(&text)
}

/// Doc-comment text as one table cell: intra-doc links as code, one line, pipes escaped.
fn clean(text: &str) -> String {
    let mut s = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("[`") {
        s.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        match after.find("`]") {
            Some(j) => {
                let name = &after[..j];
                let short = name.rsplit("::").next().unwrap_or(name);
                let _ = write!(s, "`{short}`");
                rest = &after[j + 2..];
            }
            None => {
                s.push_str("[`");
                rest = after;
            }
        }
    }
    s.push_str(rest);
    s.split_whitespace().collect::<Vec<_>>().join(" ").replace('|', "\\|")
}

/// One type's section: a table of fields for a struct, of variants for an enum. `carriers` are
/// the enum variants whose value the type is.
fn type_section(name: &str, schema: &Value, defs: &Map<String, Value>, carriers: &[String]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "## {name}\n");
    let desc = describe(schema);
    if !desc.is_empty() {
        let _ = writeln!(s, "{desc}\n");
    }
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        if carriers.is_empty() {
            let _ = writeln!(s, "Written `{name}(...)` with these fields:\n");
        } else {
            let forms: Vec<String> = carriers.iter().map(|v| format!("`{v}(...)`")).collect();
            let _ = writeln!(s, "Written as the fields of {}:\n", forms.join(", "));
        }
        s.push_str(&fields_table(schema, props));
    } else if let Some(variants) = schema.get("oneOf").or_else(|| schema.get("anyOf")).and_then(Value::as_array) {
        let _ = writeln!(s, "One of:\n\n| variant | in RON | description |\n|---|---|---|");
        let mut nested = String::new();
        for v in variants {
            for (variant, ron, d, fields) in variant_rows(v, defs) {
                let _ = writeln!(s, "| `{variant}` | `{ron}` | {d} |");
                if let Some((obj, props)) = fields {
                    let _ = writeln!(nested, "### {name}::{variant}\n\n`{ron}` with these fields:\n");
                    nested.push_str(&fields_table(&obj, &props));
                }
            }
        }
        s.push('\n');
        s.push_str(&nested);
    } else {
        let _ = writeln!(s, "A value: {}{}.\n", type_of(schema), bounds_suffix(schema));
    }
    s
}

/// Rows of an enum's variants: its name, how RON writes it, its description, and for a variant
/// with named fields those fields.
#[expect(clippy::type_complexity, reason = "a row of four cells, local to the renderer")]
fn variant_rows(
    v: &Value,
    defs: &Map<String, Value>,
) -> Vec<(String, String, String, Option<(Value, Map<String, Value>)>)> {
    let d = describe(v);
    if let Some(c) = v.get("const").and_then(Value::as_str) {
        return vec![(c.into(), c.into(), d, None)];
    }
    if let Some(e) = v.get("enum").and_then(Value::as_array) {
        return e.iter().filter_map(Value::as_str).map(|c| (c.to_string(), c.to_string(), d.clone(), None)).collect();
    }
    let Some(props) = v.get("properties").and_then(Value::as_object) else {
        return vec![("?".into(), "?".into(), d, None)];
    };
    props
        .iter()
        .map(|(variant, inner)| {
            let d = if d.is_empty() { describe(inner) } else { d.clone() };
            match inner.get("properties").and_then(Value::as_object) {
                Some(p) if inner.get("$ref").is_none() => {
                    let fields: Vec<String> = p.keys().map(|k| format!("{k}: …")).collect();
                    (variant.clone(), format!("{variant}({})", fields.join(", ")), d, Some((inner.clone(), p.clone())))
                }
                _ => {
                    let ty = type_of(inner);
                    let d = format!("{}Takes {ty}{}.", sentence(&d), bounds_suffix(inner));
                    // A struct's variant shows every field at its default.
                    let target =
                        inner.get("$ref").and_then(Value::as_str).and_then(|r| defs.get(r.rsplit('/').next()?));
                    let ron = match target.and_then(|t| t.get("properties")).and_then(Value::as_object) {
                        Some(p) => {
                            let fields: Vec<String> = p
                                .iter()
                                .map(|(k, x)| match x.get("default") {
                                    Some(d) => format!("{k}: {}", ron_value(d, names_enum(x))),
                                    None => format!("{k}: …"),
                                })
                                .collect();
                            format!("{variant}({})", fields.join(", "))
                        }
                        None => format!("{variant}(…)"),
                    };
                    (variant.clone(), ron, d, None)
                }
            }
        })
        .collect()
}

/// A struct's fields as a table.
fn fields_table(schema: &Value, props: &Map<String, Value>) -> String {
    let required: BTreeSet<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut s = String::from("| field | type | default | bounds | description |\n|---|---|---|---|---|\n");
    for (field, p) in props {
        let default = if required.contains(field.as_str()) {
            "*required*".to_string()
        } else {
            match p.get("default") {
                Some(d) => format!("`{}`", ron_value(d, names_enum(p))),
                None => "—".into(),
            }
        };
        let _ = writeln!(s, "| `{field}` | {} | {default} | {} | {} |", type_of(p), bounds(p), describe(p));
    }
    s.push('\n');
    s
}

/// Whether a field's strings are an enum's variants, written bare in RON (`C0`, not `"C0"`).
fn names_enum(p: &Value) -> bool {
    let items = p.get("items").unwrap_or(p);
    items.get("$ref").is_some() || p.get("anyOf").is_some()
}

/// A value as RON writes it (a JSON default to a RON literal); `bare`: strings are variants.
fn ron_value(v: &Value, bare: bool) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) if bare => s.clone(),
        Value::String(s) => format!("{s:?}"),
        Value::Array(a) => format!("[{}]", a.iter().map(|x| ron_value(x, bare)).collect::<Vec<_>>().join(", ")),
        Value::Object(m) => {
            let fields: Vec<String> = m.iter().map(|(k, x)| format!("{k}: {}", ron_value(x, bare))).collect();
            format!("({})", fields.join(", "))
        }
    }
}

/// The type of a schema, in words, with a link for a named type.
fn type_of(p: &Value) -> String {
    if let Some(r) = p.get("$ref").and_then(Value::as_str) {
        let name = r.rsplit('/').next().unwrap_or(r);
        return format!("[{name}](#{})", anchor(name));
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(alts) = p.get(key).and_then(Value::as_array) {
            let non_null: Vec<&Value> =
                alts.iter().filter(|a| a.get("type").and_then(Value::as_str) != Some("null")).collect();
            if non_null.len() + 1 == alts.len() && non_null.len() == 1 {
                return format!("optional {}", type_of(non_null[0]));
            }
            return alts.iter().map(type_of).collect::<Vec<_>>().join(" or ");
        }
    }
    if let Some(e) = p.get("enum").and_then(Value::as_array) {
        let names: Vec<String> = e.iter().map(|x| format!("`{x}`")).collect();
        return format!("a string, one of {}", names.join(", "));
    }
    let types: Vec<&str> = match p.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => return "any value".into(),
    };
    let optional = types.contains(&"null");
    let base = types.iter().find(|t| **t != "null").copied().unwrap_or("null");
    let word = match base {
        "integer" => "integer".into(),
        "number" => "number".into(),
        "string" => "string".into(),
        "boolean" => "`true` or `false`".into(),
        "array" => match (p.get("items"), p.get("prefixItems").and_then(Value::as_array)) {
            (_, Some(tuple)) => format!("({})", tuple.iter().map(type_of).collect::<Vec<_>>().join(", ")),
            (Some(items), None) => format!("list of {}", type_of(items)),
            (None, None) => "list".into(),
        },
        "object" => match p.get("additionalProperties") {
            Some(Value::Bool(false)) | None => "map".into(),
            Some(Value::Bool(true)) => "map of string to any value".into(),
            Some(v) => format!("map of string to {}", type_of(v)),
        },
        other => other.to_string(),
    };
    if optional {
        format!("optional {word}")
    } else {
        word
    }
}

/// A description followed by another sentence: closed with a full stop where it has none.
fn sentence(d: &str) -> String {
    match d.trim_end().chars().last() {
        None => String::new(),
        Some('.' | '!' | '?') => format!("{} ", d.trim_end()),
        Some(_) => format!("{}. ", d.trim_end()),
    }
}

/// The bounds a schema states, as one cell (`—` for none).
fn bounds(p: &Value) -> String {
    let mut parts = Vec::new();
    let num = |k: &str| p.get(k).filter(|v| v.is_number()).map(|v| v.to_string());
    match (num("minimum"), num("maximum")) {
        (Some(a), Some(b)) if a == b => parts.push(format!("= {a}")),
        (a, b) => {
            if let Some(a) = a {
                parts.push(format!("≥ {a}"));
            }
            if let Some(b) = b {
                parts.push(format!("≤ {b}"));
            }
        }
    }
    if let Some(a) = num("exclusiveMinimum") {
        parts.push(format!("> {a}"));
    }
    if let Some(b) = num("exclusiveMaximum") {
        parts.push(format!("< {b}"));
    }
    if let Some(n) = num("minItems") {
        parts.push(format!("at least {n} item{}", if n == "1" { "" } else { "s" }));
    }
    if let Some(n) = num("maxItems") {
        parts.push(format!("at most {n} items"));
    }
    if parts.is_empty() {
        "—".into()
    } else {
        parts.join(", ")
    }
}

/// The bounds as a phrase after a type (`, ≥ 1`), empty for none.
fn bounds_suffix(p: &Value) -> String {
    match bounds(p).as_str() {
        "—" => String::new(),
        b => format!(", {b}"),
    }
}
