//! The deposit: a study's plan, claims with their margins and tests, anchors with provenance,
//! the codebook and gate where the study is audited, the analysis options and the build, frozen
//! in one bundle before the first run and named by the SHA-256 of its manifest; and the check
//! of a store against its deposits, which names every deviation.
//!
//! The instrument paper's deposit held the design and analysis plan, the human anchor values
//! and the analysis code, with the equivalence margins, the primary outcomes and the
//! contamination thresholds; the ladder was a design choice outside it, and it was a timestamped
//! public deposit, not a frozen registration. An Agora deposit holds the claims too, and fixes
//! the ladder's rules by reference: they are the code of the build it names. It says what it
//! fixes and what it leaves open in its own `scope.json` and `README.md`.
//!
//! The hashed content holds no clock time: the time of creation is written beside it
//! (`ATTESTED.json`), labelled self-attested, since only an outside registry or a signed tag can
//! attest a time. The same inputs give the same bytes, the same hash and the same archive.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use agora_records::reads::runs::ProvenancedRun as StoredRun;
use rusqlite::Connection;
use serde::Serialize;
use serde_json::Value;

use crate::anchors::AnchorTable;
use crate::claims::{Claim, ClaimKind, ClaimTable, Mechanism};
use crate::common::Options;
use crate::error::AnalysisError;
use crate::human_anchors::HumanAnchors;

/// The manifest: every deposited file with its size and SHA-256. Its own SHA-256 names the deposit.
pub const MANIFEST: &str = "MANIFEST.json";
/// Beside the hashed content: the self-attested time of creation and the registry's identifier.
pub const ATTESTED: &str = "ATTESTED.json";
/// The format of a deposit's manifest.
pub const FORMAT_VERSION: u32 = 1;

/// What the time beside a deposit is.
pub const SELF_ATTESTED: &str = "self-attested: the clock of the machine that made the deposit; only an outside \
     registry's timestamp or a signed tag attests a time";

/// Hex SHA-256 of bytes (the store's one digest helper).
pub use agora_records::seed::hex_digest as sha256_hex;

/// A JSON value with every object's keys in sorted order, so that its text is stable.
pub fn sorted(v: &Value) -> Value {
    match v {
        Value::Object(o) => {
            let keys: BTreeSet<&String> = o.keys().collect();
            Value::Object(keys.into_iter().map(|k| (k.clone(), sorted(&o[k]))).collect())
        }
        Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// Pretty JSON with sorted keys and a final newline: the form of every deposited JSON file.
pub fn stable_json(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(&sorted(v)).expect("invariant: JSON values serialise");
    s.push('\n');
    s
}

/// The first path at which two JSON values differ, with both sides (`-` for a side that lacks
/// it): how a refusal names the first differing field.
pub fn first_difference(a: &Value, b: &Value, path: &str) -> Option<(String, String, String)> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().find_map(|k| {
                let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                match (x.get(k), y.get(k)) {
                    (Some(u), Some(v)) => first_difference(u, v, &p),
                    (u, v) => Some((p, u.map_or("-".into(), Value::to_string), v.map_or("-".into(), Value::to_string))),
                }
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            x.iter().zip(y).enumerate().find_map(|(i, (u, v))| first_difference(u, v, &format!("{path}[{i}]")))
        }
        _ if a == b => None,
        _ => Some((path.to_string(), a.to_string(), b.to_string())),
    }
}

/// What a deposit is made from.
pub struct Contents<'a> {
    /// The study's name.
    pub study: &'a str,
    /// The study file, as written.
    pub study_file: &'a str,
    /// Every resolved run specification of the plan: its run key and its canonical JSON.
    pub runs: Vec<(String, Value)>,
    /// The model declarations' settings (never a key).
    pub models: Value,
    /// The claims file, as written.
    pub claims: &'a str,
    /// The anchors file, as written.
    pub anchors: &'a str,
    /// The codebook and gate, where the study is audited.
    pub audit: Option<Audited<'a>>,
    /// The analysis options.
    pub options: Options,
    /// The Agora version.
    pub version: &'a str,
    /// The build's commit (`unknown` where the build had none).
    pub commit: &'a str,
}

/// The audit's fixed parts.
pub struct Audited<'a> {
    /// The codebook file, as written.
    pub codebook: &'a str,
    /// The coder-validation gate's settings.
    pub gate: Value,
    /// The gate's rule in words.
    pub gate_rule: String,
}

/// A deposit: its files by path (each the text deposited).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deposit {
    /// The deposited files (the manifest is made from them).
    pub files: BTreeMap<String, String>,
}

/// A deposit that cannot be read or does not match its manifest: the file and what is wrong.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {message}")]
pub struct DepositError {
    /// The file at fault (or the deposit's directory).
    pub file: String,
    /// What is wrong with it.
    pub message: String,
}

fn bad(file: impl Into<String>, message: impl Into<String>) -> DepositError {
    DepositError { file: file.into(), message: message.into() }
}

/// The test a claim's kind names (`Equivalence`, `Direction`, …).
fn test_name(kind: &ClaimKind) -> String {
    match serde_json::to_value(kind) {
        Ok(Value::Object(o)) => o.keys().next().cloned().unwrap_or_default(),
        Ok(Value::String(s)) => s,
        _ => String::new(),
    }
}

/// What a deposit fixes and what it leaves open, in words.
fn scope(audited: bool) -> (Vec<String>, Vec<String>) {
    let mut fixes = vec![
        "the plan: every resolved run specification with its run key (plan.json), the study file (study.ron) and \
         the model settings (models.json)"
            .to_string(),
        "the claims with their tests (claims.ron) and each claim's test, anchor and equivalence margin (margins.json)"
            .into(),
        "the human anchors with their provenance: value, unit, source, evidence, tier, status, margin (anchors.ron)"
            .into(),
        "the analysis options (analysis.json)".into(),
        "the build: the Agora version and the commit whose analysis code grades the claims (build.json)".into(),
    ];
    let mut open = vec![
        "the ladder's rules as text: they are fixed by reference only, as the code of the commit in build.json \
         (the instrument paper's deposit did not hold the ladder at all)"
            .to_string(),
        "how the model servers are reached: endpoints, concurrency, timeouts, retries and the name of the \
         variable holding a key (models.json keeps what a model is, not where it runs)"
            .into(),
        "the time of the deposit: recorded beside the hashed content (ATTESTED.json) and self-attested; only an \
         outside registry or a signed tag attests it"
            .into(),
        "the registry's identifier (a DOI), recorded beside the hashed content when known; shown, not checked".into(),
        "the data: the deposit holds no run".into(),
    ];
    if audited {
        fixes.push(
            "the transcript audit's codebook (codebook.ron) and the coder-validation gate's rule (gate.json)".into(),
        );
    } else {
        open.push("the transcript audit's codebook and gate: the plan has no model seats to audit".into());
    }
    (fixes, open)
}

impl Deposit {
    /// Makes a deposit from its contents; claims and anchors that do not parse are refused,
    /// naming the file.
    pub fn build(c: &Contents<'_>) -> Result<Deposit, DepositError> {
        let anchors = AnchorTable::parse(c.anchors).map_err(|e| bad("anchors", e))?;
        let claims = ClaimTable::parse(c.claims).map_err(|e| bad("claims", e))?;
        let mut files = BTreeMap::new();
        let runs: Vec<Value> =
            c.runs.iter().map(|(key, spec)| serde_json::json!({ "key": key, "spec": spec })).collect();
        files.insert("plan.json".into(), stable_json(&serde_json::json!({ "study": c.study, "runs": runs })));
        files.insert("study.ron".into(), c.study_file.to_string());
        files.insert("models.json".into(), stable_json(&c.models));
        files.insert("claims.ron".into(), c.claims.to_string());
        files.insert("anchors.ron".into(), c.anchors.to_string());
        let margins: Vec<Value> = claims
            .claims
            .iter()
            .map(|cl| {
                serde_json::json!({
                    "claim": cl.id, "test": test_name(&cl.kind), "anchor": cl.kind.anchor(),
                    "margin": cl.margin(&anchors),
                })
            })
            .collect();
        files.insert("margins.json".into(), stable_json(&Value::Array(margins)));
        files.insert(
            "analysis.json".into(),
            stable_json(&serde_json::to_value(c.options).expect("invariant: options serialise")),
        );
        files.insert("build.json".into(), stable_json(&serde_json::json!({ "agora": c.version, "commit": c.commit })));
        if let Some(a) = &c.audit {
            files.insert("codebook.ron".into(), a.codebook.to_string());
            files.insert(
                "gate.json".into(),
                stable_json(&serde_json::json!({ "settings": a.gate, "rule": a.gate_rule })),
            );
        }
        let (fixes, open) = scope(c.audit.is_some());
        files.insert("scope.json".into(), stable_json(&serde_json::json!({ "fixes": fixes, "leaves_open": open })));
        let mut readme = format!(
            "# Deposit of the study `{}`\n\nA deposit made with `agora prereg` before the study's first run. Its name \
             is the SHA-256 of {MANIFEST}, which lists every file below with its own SHA-256; `agora run --prereg` \
             checks each file against it and records the name with every run.\n\n## What it fixes\n\n",
            c.study
        );
        for f in &fixes {
            readme.push_str(&format!("- {f}\n"));
        }
        readme.push_str("\n## What it leaves open\n\n");
        for o in &open {
            readme.push_str(&format!("- {o}\n"));
        }
        files.insert("README.md".into(), readme);
        Ok(Deposit { files })
    }

    /// The manifest's text: format, and each file's path, size and SHA-256, in path order.
    pub fn manifest(&self) -> String {
        let files: Vec<Value> = self
            .files
            .iter()
            .map(|(p, t)| serde_json::json!({ "path": p, "bytes": t.len(), "sha256": sha256_hex(t.as_bytes()) }))
            .collect();
        stable_json(&serde_json::json!({ "format": "agora-deposit", "version": FORMAT_VERSION, "files": files }))
    }

    /// The deposit's name: the SHA-256 of its manifest.
    pub fn hash(&self) -> String {
        sha256_hex(self.manifest().as_bytes())
    }

    /// The file name of the archive: `deposit-` and the first twelve digits of the hash.
    pub fn archive_name(&self) -> String {
        format!("deposit-{}.tar", &self.hash()[..12])
    }

    /// One POSIX tar archive of the manifest and the files, under a directory named as the
    /// archive, with every time, owner and mode fixed: the same deposit gives the same bytes.
    pub fn archive(&self) -> Vec<u8> {
        let dir = self.archive_name().trim_end_matches(".tar").to_string();
        let mut out = Vec::new();
        let manifest = self.manifest();
        let entries = std::iter::once((MANIFEST, manifest.as_str()))
            .chain(self.files.iter().map(|(p, t)| (p.as_str(), t.as_str())));
        for (path, text) in entries {
            let name = format!("{dir}/{path}");
            let mut h = [0u8; 512];
            h[..name.len().min(100)].copy_from_slice(&name.as_bytes()[..name.len().min(100)]);
            h[100..108].copy_from_slice(b"0000644\0");
            h[108..116].copy_from_slice(b"0000000\0");
            h[116..124].copy_from_slice(b"0000000\0");
            h[124..136].copy_from_slice(format!("{:011o}\0", text.len()).as_bytes());
            h[136..148].copy_from_slice(b"00000000000\0");
            h[148..156].copy_from_slice(b"        ");
            h[156] = b'0';
            h[257..263].copy_from_slice(b"ustar\0");
            h[263..265].copy_from_slice(b"00");
            let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
            h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
            out.extend_from_slice(&h);
            out.extend_from_slice(text.as_bytes());
            out.resize(out.len().div_ceil(512) * 512, 0);
        }
        out.resize(out.len() + 1024, 0);
        out
    }

    /// The files as one JSON object (path to text), as the store keeps them.
    pub fn to_json(&self) -> String {
        serde_json::to_string(&self.files).expect("invariant: strings serialise")
    }

    /// The deposit as the store keeps it.
    pub fn from_json(json: &str) -> Result<Deposit, DepositError> {
        serde_json::from_str(json).map(|files| Deposit { files }).map_err(|e| bad("deposits.files", e.to_string()))
    }

    /// Reads a deposit's directory and checks every file the manifest lists against its size
    /// and SHA-256; a missing, altered or unlisted file is refused, naming it.
    pub fn read_dir(dir: &Path) -> Result<Deposit, DepositError> {
        let manifest_path = dir.join(MANIFEST);
        let manifest = std::fs::read_to_string(&manifest_path).map_err(|e| {
            bad(manifest_path.display().to_string(), format!("cannot be read ({e}); is this a deposit?"))
        })?;
        let m: Value =
            serde_json::from_str(&manifest).map_err(|e| bad(manifest_path.display().to_string(), e.to_string()))?;
        let listed =
            m["files"].as_array().ok_or_else(|| bad(manifest_path.display().to_string(), "no `files` list"))?;
        let mut files = BTreeMap::new();
        for f in listed {
            let (Some(path), Some(sha)) = (f["path"].as_str(), f["sha256"].as_str()) else {
                return Err(bad(manifest_path.display().to_string(), format!("entry {f} lacks `path` or `sha256`")));
            };
            let p = dir.join(path);
            if path.contains('/') || path.contains('\\') || path.starts_with('.') {
                return Err(bad(manifest_path.display().to_string(), format!("`{path}` is not a file of the deposit")));
            }
            let text = std::fs::read_to_string(&p).map_err(|e| bad(p.display().to_string(), e.to_string()))?;
            let got = sha256_hex(text.as_bytes());
            if got != sha {
                return Err(bad(
                    p.display().to_string(),
                    format!("SHA-256 {got}, the manifest lists {sha}: the file was changed after the deposit was made"),
                ));
            }
            files.insert(path.to_string(), text);
        }
        let d = Deposit { files };
        if d.manifest() != manifest {
            return Err(bad(
                manifest_path.display().to_string(),
                "not the manifest of the files it lists (it was edited by hand)",
            ));
        }
        for entry in std::fs::read_dir(dir).map_err(|e| bad(dir.display().to_string(), e.to_string()))? {
            let name = entry.map_err(|e| bad(dir.display().to_string(), e.to_string()))?.file_name();
            let name = name.to_string_lossy();
            let beside = name == MANIFEST || name == ATTESTED || name == d.archive_name();
            if !beside && !d.files.contains_key(name.as_ref()) {
                return Err(bad(dir.join(name.as_ref()).display().to_string(), "not listed in the deposit's manifest"));
            }
        }
        Ok(d)
    }

    /// The study the deposit fixes.
    pub fn study(&self) -> Option<String> {
        self.json("plan.json").and_then(|p| p["study"].as_str().map(str::to_string))
    }

    /// The deposited plan's runs: run key and specification.
    pub fn runs(&self) -> Vec<(String, Value)> {
        let Some(plan) = self.json("plan.json") else { return Vec::new() };
        plan["runs"]
            .as_array()
            .map(|rs| {
                rs.iter().map(|r| (r["key"].as_str().unwrap_or_default().to_string(), r["spec"].clone())).collect()
            })
            .unwrap_or_default()
    }

    /// A deposited JSON file, parsed.
    pub fn json(&self, path: &str) -> Option<Value> {
        self.files.get(path).and_then(|t| serde_json::from_str(t).ok())
    }

    /// What the deposit fixes and what it leaves open.
    pub fn scope(&self) -> (Vec<String>, Vec<String>) {
        let s = self.json("scope.json").unwrap_or(Value::Null);
        let list = |k: &str| -> Vec<String> {
            s[k].as_array()
                .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
                .unwrap_or_default()
        };
        (list("fixes"), list("leaves_open"))
    }
}

/// The kinds of deviation from a deposit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum DeviationKind {
    /// A claim graded differs from the deposited one, or is not in the deposit.
    Claim,
    /// A claim's equivalence margin differs from the deposited one.
    Margin,
    /// An anchor a claim is graded against differs from the deposited one.
    Anchor,
    /// The audit coded with a codebook other than the deposited one.
    Codebook,
    /// The coder-validation gate ran at other settings than the deposited ones.
    Gate,
    /// An analysis option differs from the deposited one.
    AnalysisOption,
    /// Runs of the study outside the deposited plan.
    RunOutsidePlan,
    /// Runs of the study made before the deposit.
    RunBeforeDeposit,
}

impl DeviationKind {
    /// The kind in words, as the tables write it.
    pub fn as_str(self) -> &'static str {
        match self {
            DeviationKind::Claim => "claim",
            DeviationKind::Margin => "margin",
            DeviationKind::Anchor => "anchor",
            DeviationKind::Codebook => "codebook",
            DeviationKind::Gate => "gate",
            DeviationKind::AnalysisOption => "analysis option",
            DeviationKind::RunOutsidePlan => "run outside the deposited plan",
            DeviationKind::RunBeforeDeposit => "run before the deposit",
        }
    }
}

/// One deviation from a deposit: its kind, what changed, and the claims whose verdicts rest on it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Deviation {
    /// The kind.
    pub kind: DeviationKind,
    /// What changed, in words.
    pub what: String,
    /// The claims whose verdicts rest on it.
    pub claims: Vec<String>,
}

/// A store's runs checked against one deposit.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DepositCheck {
    /// The deposit's hash.
    pub hash: String,
    /// The study it fixes.
    pub study: String,
    /// Its time of creation, self-attested.
    pub created: String,
    /// The registry's identifier, where recorded (shown, not checked).
    pub doi: Option<String>,
    /// When the study's first run was made (the start of the command that made it), where the
    /// store recorded it.
    pub first_run: Option<String>,
    /// Runs of the study made under this deposit.
    pub runs_under: usize,
    /// The deposit's build (`agora` version and commit).
    pub build: String,
    /// What the deposit fixes.
    pub fixes: Vec<String>,
    /// What it leaves open.
    pub leaves_open: Vec<String>,
    /// Every deviation from it.
    pub deviations: Vec<Deviation>,
}

/// The deposits of the store's studies, each checked.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DepositSection {
    /// One per deposit of an analysed study.
    pub deposits: Vec<DepositCheck>,
}

impl DepositSection {
    /// The deviations a claim's verdict rests on.
    pub fn deviations_of(&self, claim: &str) -> Vec<&Deviation> {
        self.deposits.iter().flat_map(|d| &d.deviations).filter(|d| d.claims.iter().any(|c| c == claim)).collect()
    }

    /// The section as Markdown (a heading and its lines).
    pub fn to_markdown(&self) -> String {
        let mut s = String::from("\n## Deposit\n\n");
        if self.deposits.is_empty() {
            s.push_str(NO_DEPOSIT);
            s.push('\n');
            return s;
        }
        for d in &self.deposits {
            for line in d.lines() {
                s.push_str(&line);
                s.push('\n');
            }
        }
        s
    }
}

/// The one line of a store with no deposit.
pub const NO_DEPOSIT: &str =
    "No deposit: no plan of this store was frozen before its runs (`agora prereg`, then `agora run --prereg`).";

impl DepositCheck {
    /// The check in lines of Markdown: the deposit, its times, then each deviation.
    pub fn lines(&self) -> Vec<String> {
        let mut v = vec![
            format!("Deposit `{}` of the study `{}`.", self.hash, self.study),
            format!("- Created {} ({SELF_ATTESTED}).", self.created),
            format!("- Registry identifier: {}.", self.doi.as_deref().unwrap_or("none recorded")),
            format!(
                "- First run of the study: {}; {} runs made under the deposit.",
                self.first_run.as_deref().unwrap_or("no time recorded"),
                self.runs_under
            ),
            format!("- Build deposited: {}.", self.build),
        ];
        if self.deviations.is_empty() {
            v.push("- Deviations: none.".into());
        } else {
            v.push(format!("- Deviations: {}.", self.deviations.len()));
            for d in &self.deviations {
                let claims =
                    if d.claims.is_empty() { String::new() } else { format!(" (verdicts: {})", d.claims.join(", ")) };
                v.push(format!("  - {}: {}{claims}", d.kind.as_str(), d.what));
            }
        }
        v
    }
}

/// What the analysis grades with: the claims, anchors, options and human anchors.
pub struct Graded<'a> {
    /// The claims graded.
    pub claims: &'a ClaimTable,
    /// The anchors they are graded against.
    pub anchors: &'a AnchorTable,
    /// The analysis options.
    pub options: &'a Options,
    /// The lab's own human anchors, where given.
    pub human: Option<&'a HumanAnchors>,
}

/// Whether `study` is the deposit's study or one of its versions (`NAME@2`, …).
fn of_study(deposited: &str, study: &str) -> bool {
    study == deposited || study.strip_prefix(deposited).is_some_and(|r| r.starts_with('@'))
}

/// Checks the store at `path` against each deposit of the analysed studies (`study`, or all).
pub fn check(path: &Path, study: Option<&str>, graded: &Graded<'_>) -> Result<DepositSection, AnalysisError> {
    let conn = crate::outcomes::open(path)?;
    check_conn(&conn, study, graded).map_err(|source| AnalysisError::Store { path: path.to_path_buf(), source })
}

/// As [`check`], on an open connection.
pub fn check_conn(conn: &Connection, study: Option<&str>, graded: &Graded<'_>) -> rusqlite::Result<DepositSection> {
    let Some(rows) = agora_records::reads::deposits::deposits(conn)? else {
        return Ok(DepositSection::default());
    };
    let mut out = DepositSection::default();
    for (hash, dep_study, created, doi, files) in rows {
        if study.is_some_and(|s| !of_study(&dep_study, s)) {
            continue;
        }
        let deposit = Deposit::from_json(&files).unwrap_or(Deposit { files: BTreeMap::new() });
        // The analysed study's runs only: a version apart from it is analysed apart.
        let runs: Vec<StoredRun> =
            stored_runs(conn, &dep_study)?.into_iter().filter(|r| study.is_none_or(|s| r.study == s)).collect();
        let mut deviations = Vec::new();
        deviations.extend(claim_deviations(&deposit, graded));
        deviations.extend(audit_deviations(conn, &deposit, graded)?);
        deviations.extend(option_deviations(&deposit, graded));
        deviations.extend(run_deviations(&deposit, &hash, &created, &runs, graded));
        let build = deposit
            .json("build.json")
            .map(|b| {
                format!("agora {}, commit {}", b["agora"].as_str().unwrap_or("?"), b["commit"].as_str().unwrap_or("?"))
            })
            .unwrap_or_else(|| "not recorded".into());
        let (fixes, leaves_open) = deposit.scope();
        out.deposits.push(DepositCheck {
            first_run: runs.iter().filter_map(|r| r.started.clone()).min(),
            runs_under: runs.iter().filter(|r| r.deposit.as_deref() == Some(hash.as_str())).count(),
            hash,
            study: dep_study,
            created,
            doi,
            build,
            fixes,
            leaves_open,
            deviations,
        });
    }
    Ok(out)
}

fn stored_runs(conn: &Connection, study: &str) -> rusqlite::Result<Vec<StoredRun>> {
    let rows = agora_records::reads::runs::provenanced_runs(conn, study)?;
    Ok(rows.into_iter().filter(|r| of_study(study, &r.study)).collect())
}

fn claims_of_deposit(d: &Deposit) -> Option<ClaimTable> {
    let opts = ron::Options::default().with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME);
    d.files.get("claims.ron").and_then(|t| opts.from_str(t).ok())
}

fn anchors_of_deposit(d: &Deposit) -> Option<AnchorTable> {
    d.files.get("anchors.ron").and_then(|t| AnchorTable::parse(t).ok())
}

fn json_of<T: Serialize>(t: &T) -> Value {
    serde_json::to_value(t).unwrap_or(Value::Null)
}

fn change(what: &str, (field, was, now): (String, String, String)) -> String {
    if field.is_empty() {
        format!("{what}: was {was}, now {now}")
    } else {
        format!("{what}: `{field}` was {was}, now {now}")
    }
}

/// Claims, margins and anchors graded against those deposited.
fn claim_deviations(d: &Deposit, g: &Graded<'_>) -> Vec<Deviation> {
    let mut v = Vec::new();
    let (Some(dep_claims), Some(dep_anchors)) = (claims_of_deposit(d), anchors_of_deposit(d)) else {
        v.push(Deviation {
            kind: DeviationKind::Claim,
            what: "the deposit holds no readable claims or anchors".into(),
            claims: g.claims.claims.iter().map(|c| c.id.clone()).collect(),
        });
        return v;
    };
    let deposited = |id: &str| -> Option<&Claim> { dep_claims.claims.iter().find(|c| c.id == id) };
    for c in &g.claims.claims {
        match deposited(&c.id) {
            None => v.push(Deviation {
                kind: DeviationKind::Claim,
                what: format!("claim `{}` is graded but not in the deposit", c.id),
                claims: vec![c.id.clone()],
            }),
            Some(dc) => {
                if let Some(diff) = first_difference(&json_of(dc), &json_of(c), "") {
                    v.push(Deviation {
                        kind: DeviationKind::Claim,
                        what: change(&format!("claim `{}`", c.id), diff),
                        claims: vec![c.id.clone()],
                    });
                }
                let (was, now) = (dc.margin(&dep_anchors), c.margin(g.anchors));
                if was != now {
                    let f = |m: Option<f64>| m.map_or("none".to_string(), |m| m.to_string());
                    v.push(Deviation {
                        kind: DeviationKind::Margin,
                        what: format!("claim `{}`: margin was {}, now {}", c.id, f(was), f(now)),
                        claims: vec![c.id.clone()],
                    });
                }
            }
        }
    }
    for dc in &dep_claims.claims {
        if !g.claims.claims.iter().any(|c| c.id == dc.id) {
            v.push(Deviation {
                kind: DeviationKind::Claim,
                what: format!("claim `{}` is in the deposit but not graded", dc.id),
                claims: Vec::new(),
            });
        }
    }
    // Each anchor a graded claim reads, once, with every claim that reads it.
    let mut by_anchor: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for c in &g.claims.claims {
        by_anchor.entry(c.kind.anchor()).or_default().push(c.id.clone());
    }
    for (id, claims) in by_anchor {
        let diff = first_difference(&json_of(&dep_anchors.get(id)), &json_of(&g.anchors.get(id)), "");
        if let Some(diff) = diff {
            v.push(Deviation { kind: DeviationKind::Anchor, what: change(&format!("anchor `{id}`"), diff), claims });
        }
    }
    if let Some(h) = g.human {
        for c in &g.claims.claims {
            if !h.of(&c.id).is_empty() {
                v.push(Deviation {
                    kind: DeviationKind::Anchor,
                    what: format!(
                        "claim `{}` is graded against the lab's own human runs (--human-anchors), not the deposited \
                         anchor `{}`",
                        c.id,
                        c.kind.anchor()
                    ),
                    claims: vec![c.id.clone()],
                });
            }
        }
    }
    v
}

/// The claims whose Tier 3 reads the audit's codes.
fn audited_claims(g: &Graded<'_>) -> Vec<String> {
    g.claims
        .claims
        .iter()
        .filter(|c| matches!(c.mechanism, Some(Mechanism::Values { .. })))
        .map(|c| c.id.clone())
        .collect()
}

/// The codebook and gate the store's audit used against those deposited.
fn audit_deviations(conn: &Connection, d: &Deposit, g: &Graded<'_>) -> rusqlite::Result<Vec<Deviation>> {
    let mut v = Vec::new();
    if let Some(used) = agora_records::reads::deposits::codebooks_used(conn)? {
        let deposited = d.files.get("codebook.ron").map(|t| sha256_hex(t.as_bytes()));
        for (name, version, sha) in used {
            let what = match &deposited {
                Some(dep) if *dep == sha => continue,
                Some(dep) => format!(
                    "the audit coded with codebook `{name}` v{version} (SHA-256 {}…), not the deposited one ({}…)",
                    &sha[..12.min(sha.len())],
                    &dep[..12]
                ),
                None => format!("the audit coded with codebook `{name}` v{version}; the deposit fixed no codebook"),
            };
            v.push(Deviation { kind: DeviationKind::Codebook, what, claims: audited_claims(g) });
        }
    }
    if let Some(used) = agora_records::reads::deposits::gate_min_kappas(conn)? {
        let deposited = d.json("gate.json").and_then(|g| g["settings"]["min_kappa"].as_f64());
        for k in used {
            let what = match deposited {
                Some(dep) if dep == k => continue,
                Some(dep) => format!("the coder-validation gate ran at κ ≥ {k}; the deposit fixed κ ≥ {dep}"),
                None => format!("the coder-validation gate ran at κ ≥ {k}; the deposit fixed no gate"),
            };
            v.push(Deviation { kind: DeviationKind::Gate, what, claims: audited_claims(g) });
        }
    }
    Ok(v)
}

/// The analysis options against those deposited.
fn option_deviations(d: &Deposit, g: &Graded<'_>) -> Vec<Deviation> {
    let deposited = d.json("analysis.json").unwrap_or(Value::Null);
    match first_difference(&deposited, &json_of(g.options), "") {
        Some(diff) => vec![Deviation {
            kind: DeviationKind::AnalysisOption,
            what: change("analysis options", diff),
            claims: Vec::new(),
        }],
        None => Vec::new(),
    }
}

/// Runs outside the deposited plan and runs made before the deposit, counted per study version
/// and game.
fn run_deviations(d: &Deposit, hash: &str, created: &str, runs: &[StoredRun], g: &Graded<'_>) -> Vec<Deviation> {
    let planned: BTreeSet<String> = d.runs().into_iter().map(|(k, _)| k).collect();
    let first_under = runs.iter().filter(|r| r.deposit.as_deref() == Some(hash)).map(|r| r.run_id).min();
    let claims_of = |env: &str| -> Vec<String> {
        g.claims.claims.iter().filter(|c| c.environment == env).map(|c| c.id.clone()).collect()
    };
    let mut outside: BTreeMap<(String, String, String), usize> = BTreeMap::new();
    let mut before: BTreeMap<(String, String, String), usize> = BTreeMap::new();
    for r in runs {
        if !planned.contains(&r.key) {
            let why = match (&r.deposit, &r.deviation) {
                (Some(_), Some(reason)) => format!("deviation recorded: \"{reason}\""),
                (Some(h), None) if h != hash => "made under another deposit".into(),
                _ => "made without the deposit".into(),
            };
            *outside.entry((r.study.clone(), r.environment.clone(), why)).or_default() += 1;
        }
        let timed_before = r.started.as_deref().is_some_and(|s| s < created);
        let stored_before = r.deposit.as_deref() != Some(hash) && first_under.is_none_or(|f| r.run_id < f);
        if timed_before || stored_before {
            let why = match &r.started {
                Some(s) if timed_before => format!("started {s}, before the deposit's {created}"),
                Some(s) => format!("started {s}, stored before the first run under the deposit"),
                None => "no time recorded; stored before the first run under the deposit".into(),
            };
            *before.entry((r.study.clone(), r.environment.clone(), why)).or_default() += 1;
        }
    }
    let mut v = Vec::new();
    for ((study, env, why), n) in outside {
        v.push(Deviation {
            kind: DeviationKind::RunOutsidePlan,
            what: format!("{n} run(s) of `{study}` ({env}) are not in the deposited plan: {why}"),
            claims: claims_of(&env),
        });
    }
    for ((study, env, why), n) in before {
        v.push(Deviation {
            kind: DeviationKind::RunBeforeDeposit,
            what: format!("{n} run(s) of `{study}` ({env}) were made before the deposit ({why})"),
            claims: claims_of(&env),
        });
    }
    v
}
