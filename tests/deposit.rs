//! A deposit before the first run (`agora prereg`), runs that carry its hash (`agora run
//! --prereg`, `--deviate`), and an analysis that names every deviation from it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::{chromium, page_dom, text};

/// Runs `agora` in `dir`.
fn agora_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agora")).args(args).current_dir(dir).output().expect("agora runs")
}

/// A dilemma study of `runs` runs of `rounds` rounds, written to `dir/studies/pd.ron`.
fn write_study(dir: &Path, rounds: u32, runs: u32) -> &'static str {
    std::fs::create_dir_all(dir.join("studies")).expect("mkdir");
    std::fs::create_dir_all(dir.join("cells")).expect("mkdir");
    std::fs::write(
        dir.join("studies/pd.ron"),
        format!(
            "Study(version: 1, name: \"pd\", master_seed: 3, runs: {runs}, blocks: [Block(name: \"pd\", \
             environment: PrisonersDilemma(rounds: {rounds}), rosters: [Roster(name: \"tft\", members: \
             [Member(policy: TitForTat, count: 2)])])])"
        ),
    )
    .expect("write");
    "studies/pd.ron"
}

fn ok(o: &Output) {
    assert!(o.status.success(), "{}", text(o));
}

/// A deposit of the study in `dir/dep` (extra arguments to `agora prereg` after it), then its
/// runs into `dir/s.sqlite` under it.
fn deposit_and_run(dir: &Path, extra: &[&str]) {
    let study = write_study(dir, 10, 2);
    let mut args = vec!["prereg", study, "--out", "dep"];
    args.extend_from_slice(extra);
    ok(&agora_in(dir, &args));
    ok(&agora_in(dir, &["run", study, "--store", "s.sqlite", "--prereg", "dep"]));
}

/// The Deposit section of `agora analyze` (extra arguments after the store).
fn deposit_section(dir: &Path, extra: &[&str]) -> String {
    let mut args = vec!["analyze", "--store", "s.sqlite", "--out", "an"];
    args.extend_from_slice(extra);
    ok(&agora_in(dir, &args));
    let md = std::fs::read_to_string(dir.join("an/analysis.md")).expect("analysis.md");
    let start = md.find("\n## Deposit\n").expect("a Deposit section");
    let rest = &md[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |e| e + 3);
    rest[..end].to_string()
}

/// The verdict table's deviation column, per claim.
fn verdict_marks(dir: &Path) -> Vec<(String, String)> {
    let csv = std::fs::read_to_string(dir.join("an/verdicts.csv")).expect("verdicts.csv");
    let mut lines = csv.lines();
    assert!(lines.next().expect("header").ends_with(",deviations from the deposit"), "{csv}");
    lines
        .map(|l| {
            let claim = l.split(',').next().expect("claim").to_string();
            // The last field, quoted where it holds a comma.
            let mark = match l.strip_suffix('"') {
                Some(q) => q[q.rfind(",\"").expect("an opening quote") + 2..].to_string(),
                None => l.rsplit(',').next().expect("mark").to_string(),
            };
            (claim, mark)
        })
        .collect()
}

fn mark_of(dir: &Path, claim: &str) -> String {
    verdict_marks(dir).into_iter().find(|(c, _)| c == claim).map(|(_, m)| m).expect("claim in the verdicts")
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| {
            let p: PathBuf = e.expect("entry").path();
            (p.file_name().expect("name").to_string_lossy().into_owned(), std::fs::read(&p).expect("read"))
        })
        .collect();
    v.sort();
    v
}

#[test]
fn a_deposit_made_twice_from_the_same_inputs_is_byte_identical() {
    let dir = tempfile::tempdir().expect("tempdir");
    let study = write_study(dir.path(), 10, 2);
    ok(&agora_in(dir.path(), &["prereg", study, "--out", "a"]));
    ok(&agora_in(dir.path(), &["prereg", study, "--out", "b"]));
    let (a, b) = (files(&dir.path().join("a")), files(&dir.path().join("b")));
    let hashed = |v: &[(String, Vec<u8>)]| -> Vec<(String, Vec<u8>)> {
        v.iter().filter(|(n, _)| n != "ATTESTED.json").cloned().collect()
    };
    assert_eq!(hashed(&a), hashed(&b), "every file but the self-attested time is the same, archive included");
    let names: Vec<&str> = a.iter().map(|(n, _)| n.as_str()).collect();
    for f in ["MANIFEST.json", "plan.json", "claims.ron", "anchors.ron", "margins.json", "scope.json", "build.json"] {
        assert!(names.contains(&f), "{f} in {names:?}");
    }
    assert!(names.iter().any(|n| n.starts_with("deposit-") && n.ends_with(".tar")), "{names:?}");
    // The hashed content holds no clock time; the time beside it says it is self-attested.
    let attested =
        String::from_utf8(a.iter().find(|(n, _)| n == "ATTESTED.json").expect("attested").1.clone()).expect("utf8");
    assert!(attested.contains("self-attested"), "{attested}");
    let time = serde_json::from_str::<serde_json::Value>(&attested).expect("json")["created"]
        .as_str()
        .expect("created")
        .to_string();
    for (n, bytes) in hashed(&a) {
        assert!(!String::from_utf8_lossy(&bytes).contains(&time), "{n} holds the time of creation");
    }
    // The archive is a tar archive `tar` lists, with the manifest and every file.
    let tar = a.iter().find(|(n, _)| n.ends_with(".tar")).expect("tar").0.clone();
    let listed = Command::new("tar").arg("-tf").arg(dir.path().join("a").join(&tar)).output().expect("tar runs");
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(listed.contains("/MANIFEST.json") && listed.contains("/plan.json"), "{listed}");
    // The manifest's SHA-256 names the deposit.
    let o = agora_in(dir.path(), &["prereg", study, "--out", "a"]);
    ok(&o);
    use sha2::Digest;
    let manifest = std::fs::read(dir.path().join("a/MANIFEST.json")).expect("manifest");
    let hash: String = sha2::Sha256::digest(&manifest).iter().map(|b| format!("{b:02x}")).collect();
    assert!(text(&o).starts_with(&format!("deposit {hash}\n")), "{}", text(&o));
    // A directory holding another deposit is refused: a deposit is never changed.
    write_study(dir.path(), 20, 2);
    let o = agora_in(dir.path(), &["prereg", study, "--out", "a"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("a deposit is never changed"), "{}", text(&o));
}

#[test]
fn tampering_with_any_deposited_file_is_detected() {
    let dir = tempfile::tempdir().expect("tempdir");
    let study = write_study(dir.path(), 10, 2);
    ok(&agora_in(dir.path(), &["prereg", study, "--out", "dep"]));
    let dep = dir.path().join("dep");
    let hashed: Vec<String> =
        files(&dep).into_iter().map(|(n, _)| n).filter(|n| n != "ATTESTED.json" && !n.ends_with(".tar")).collect();
    assert!(hashed.len() >= 10, "{hashed:?}");
    for name in &hashed {
        let p = dep.join(name);
        let original = std::fs::read(&p).expect("read");
        let mut changed = original.clone();
        changed.extend_from_slice(b" ");
        std::fs::write(&p, &changed).expect("write");
        let o = agora_in(dir.path(), &["run", study, "--store", "s.sqlite", "--prereg", "dep"]);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", text(&o));
        assert!(text(&o).contains(&format!("dep/{name}")), "{name} named: {}", text(&o));
        std::fs::write(&p, &original).expect("restore");
    }
    // A file added beside the listed ones is refused too.
    std::fs::write(dep.join("extra.json"), "{}").expect("write");
    let o = agora_in(dir.path(), &["run", study, "--store", "s.sqlite", "--prereg", "dep"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("extra.json: not listed in the deposit's manifest"), "{}", text(&o));
    std::fs::remove_file(dep.join("extra.json")).expect("rm");
    ok(&agora_in(dir.path(), &["run", study, "--store", "s.sqlite", "--prereg", "dep"]));
}

#[test]
fn runs_carry_the_deposit_hash_and_a_clean_store_has_no_deviation() {
    let dir = tempfile::tempdir().expect("tempdir");
    deposit_and_run(dir.path(), &[]);
    let c = rusqlite::Connection::open(dir.path().join("s.sqlite")).expect("open");
    let hash: String = c.query_row("SELECT hash FROM deposits", [], |r| r.get(0)).expect("a deposit");
    let under: i64 = c
        .query_row("SELECT COUNT(*) FROM run_provenance WHERE deposit = ?1 AND deviation IS NULL", [&hash], |r| {
            r.get(0)
        })
        .expect("count");
    assert_eq!(under, 2);
    let s = deposit_section(dir.path(), &[]);
    assert!(s.contains(&format!("Deposit `{hash}` of the study `pd`")), "{s}");
    assert!(s.contains("self-attested") && s.contains("- First run of the study: 20"), "{s}");
    assert!(s.contains("- Deviations: none."), "{s}");
    assert!(verdict_marks(dir.path()).iter().all(|(_, m)| m == "-"));
}

#[test]
fn a_store_with_no_deposit_says_so_in_one_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let study = write_study(dir.path(), 10, 2);
    ok(&agora_in(dir.path(), &["run", study, "--store", "s.sqlite"]));
    let s = deposit_section(dir.path(), &[]);
    assert_eq!(s.trim_end().lines().filter(|l| !l.is_empty()).count(), 2, "{s}");
    assert!(s.contains("No deposit:"), "{s}");
    let csv = std::fs::read_to_string(dir.path().join("an/verdicts.csv")).expect("csv");
    assert!(!csv.lines().next().expect("header").contains("deposit"), "no deviation column without a deposit");
}

#[test]
fn a_plan_that_differs_is_refused_naming_the_field_and_a_deviation_is_a_new_version() {
    let dir = tempfile::tempdir().expect("tempdir");
    deposit_and_run(dir.path(), &["--doi", "10.17605/OSF.IO/EXAMPLE"]);
    let study = write_study(dir.path(), 20, 2);
    let o = agora_in(dir.path(), &["run", study, "--store", "s.sqlite", "--prereg", "dep"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("`environment.PrisonersDilemma.rounds` was 10, now 20"), "{}", text(&o));
    assert!(text(&o).contains("--deviate"), "{}", text(&o));
    let o = agora_in(
        dir.path(),
        &["run", study, "--store", "s.sqlite", "--prereg", "dep", "--deviate", "twenty rounds show the endgame"],
    );
    ok(&o);
    assert!(text(&o).contains("stored as version `pd@2`"), "{}", text(&o));
    let c = rusqlite::Connection::open(dir.path().join("s.sqlite")).expect("open");
    let studies: Vec<(String, i64)> = c
        .prepare("SELECT study, COUNT(*) FROM runs GROUP BY study ORDER BY study")
        .expect("q")
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("rows")
        .map(|r| r.expect("row"))
        .collect();
    assert_eq!(studies, vec![("pd".to_string(), 2), ("pd@2".to_string(), 2)], "never pooled");
    // The deposited study: no deviation; the deviating version: its runs outside the plan, with
    // the reason, and the dilemma's verdicts marked.
    let s = deposit_section(dir.path(), &["--study", "pd"]);
    assert!(s.contains("- Deviations: none.") && s.contains("10.17605/OSF.IO/EXAMPLE"), "{s}");
    let s = deposit_section(dir.path(), &["--study", "pd@2"]);
    assert!(
        s.contains(
            "run outside the deposited plan: 2 run(s) of `pd@2` (prisoners-dilemma) are not in the deposited plan"
        ) && s.contains("twenty rounds show the endgame"),
        "{s}"
    );
    assert_eq!(mark_of(dir.path(), "pd-corridor"), "run outside the deposited plan");
    assert_eq!(mark_of(dir.path(), "pgg-round1-human"), "-");
}

#[test]
fn runs_outside_the_deposited_plan_are_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    deposit_and_run(dir.path(), &[]);
    // One more run, without the deposit: it is not in the deposited plan.
    let study = write_study(dir.path(), 10, 3);
    ok(&agora_in(dir.path(), &["run", study, "--store", "s.sqlite"]));
    let s = deposit_section(dir.path(), &[]);
    assert!(
        s.contains("1 run(s) of `pd` (prisoners-dilemma) are not in the deposited plan: made without the deposit"),
        "{s}"
    );
    // With the deposit, a run beyond the deposited plan is refused.
    let o = agora_in(dir.path(), &["run", study, "--store", "s.sqlite", "--prereg", "dep"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("`runs` was no such run, now block `pd`, roster `tft`, cell `baseline`, run 2"),
        "{}",
        text(&o)
    );
}

#[test]
fn runs_before_the_deposit_are_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let study = write_study(dir.path(), 10, 2);
    ok(&agora_in(dir.path(), &["run", study, "--store", "s.sqlite"]));
    write_study(dir.path(), 10, 3);
    ok(&agora_in(dir.path(), &["prereg", study, "--out", "dep"]));
    ok(&agora_in(dir.path(), &["run", study, "--store", "s.sqlite", "--prereg", "dep"]));
    let s = deposit_section(dir.path(), &[]);
    assert!(
        s.contains("run before the deposit: 2 run(s) of `pd` (prisoners-dilemma) were made before the deposit"),
        "{s}"
    );
    assert!(s.contains("1 runs made under the deposit"), "{s}");
    assert_eq!(mark_of(dir.path(), "pd-decline"), "run before the deposit");
}

#[test]
fn a_claim_that_differs_from_the_deposit_is_named_and_its_verdict_marked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let claims = agora_analysis::claims::CLAIMS_RON.replacen(
        "kind: Direction(sign: -1.0, margin: 0.10, anchor: \"pd-decline\")",
        "kind: Direction(sign: -1.0, margin: 0.20, anchor: \"pd-decline\")",
        1,
    );
    assert_ne!(claims, agora_analysis::claims::CLAIMS_RON);
    std::fs::write(dir.path().join("claims.ron"), claims).expect("write");
    deposit_and_run(dir.path(), &["--claims", "claims.ron"]);
    let s = deposit_section(dir.path(), &[]);
    assert!(s.contains("claim: claim `pd-decline`: `kind.Direction.margin` was 0.2, now 0.1"), "{s}");
    assert_eq!(mark_of(dir.path(), "pd-decline"), "claim");
    assert_eq!(mark_of(dir.path(), "pd-endgame"), "-");
}

#[test]
fn a_margin_and_an_anchor_that_differ_from_the_deposit_are_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let anchors = agora_analysis::anchors::ANCHORS_RON
        .replacen("status: S, margin: Some(0.10)", "status: S, margin: Some(0.05)", 1)
        .replacen("Range(low: 0.20, high: 0.50)", "Range(low: 0.25, high: 0.50)", 1);
    std::fs::write(dir.path().join("anchors.ron"), anchors).expect("write");
    deposit_and_run(dir.path(), &["--anchors", "anchors.ron"]);
    let s = deposit_section(dir.path(), &[]);
    assert!(s.contains("margin: claim `pgg-round1-human`: margin was 0.05, now 0.1"), "{s}");
    assert!(s.contains("anchor: anchor `pd-cooperation-corridor`: `value.Range.low` was 0.25, now 0.2"), "{s}");
    assert_eq!(mark_of(dir.path(), "pd-corridor"), "anchor");
    assert_eq!(mark_of(dir.path(), "pgg-round1-human"), "anchor, margin");
}

#[test]
fn an_analysis_option_that_differs_from_the_deposit_is_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    deposit_and_run(dir.path(), &[]);
    assert!(deposit_section(dir.path(), &[]).contains("- Deviations: none."));
    let s = deposit_section(dir.path(), &["--classical-in-cross-model"]);
    assert!(s.contains("analysis option: analysis options: `classical_in_cross_model` was false, now true"), "{s}");
}

/// Gives the store an audit of codebook `sha` whose gate ran at `min_kappa`.
fn audit_rows(store: &Path, sha: &str, min_kappa: f64) {
    let c = rusqlite::Connection::open(store).expect("open");
    c.execute_batch(agora_records::families::audit::TABLES).expect("audit tables");
    c.execute_batch(agora_audit::agreement::SCHEMA).expect("agreement table");
    c.execute("INSERT OR IGNORE INTO audit_codebooks VALUES ('default', 1, ?1, '')", [sha]).expect("codebook");
    c.execute(
        "INSERT OR REPLACE INTO audit_agreement (codebook, codebook_version, model, kind, reference, coder,
            coder_codebook_sha256, n, min_kappa, excluded_disagreements, excluded_text_changed, labels_json,
            confusion_json, support_json, recall_json, precision_json)
         VALUES ('default', 1, 'm', 'machine', 'consensus', 'lexicon', ?1, 0, ?2, 0, 0, '[]', '[]', '{}', '{}', '{}')",
        rusqlite::params![sha, min_kappa],
    )
    .expect("agreement");
}

#[test]
fn a_codebook_and_a_gate_that_differ_from_the_deposit_are_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    deposit_and_run(
        dir.path(),
        &["--codebook", &format!("{}/assets/codebooks/default.ron", env!("CARGO_MANIFEST_DIR"))],
    );
    let store = dir.path().join("s.sqlite");
    let deposited = agora_analysis::deposit::sha256_hex(agora_audit::codebook::DEFAULT_CODEBOOK_RON.as_bytes());
    // The deposited codebook at the deposited gate: no deviation.
    audit_rows(&store, &deposited, 0.8);
    let s = deposit_section(dir.path(), &[]);
    assert!(!s.contains("codebook:") && !s.contains("gate:"), "{s}");
    // Another codebook, and the gate at a lower threshold.
    audit_rows(&store, &"f".repeat(64), 0.7);
    let s = deposit_section(dir.path(), &[]);
    assert!(s.contains("codebook: the audit coded with codebook `default` v1 (SHA-256 ffffffffffff…)"), "{s}");
    assert!(s.contains("gate: the coder-validation gate ran at κ ≥ 0.7; the deposit fixed κ ≥ 0.8"), "{s}");
    assert_eq!(mark_of(dir.path(), "pd-corridor"), "codebook, gate");
    assert_eq!(mark_of(dir.path(), "pd-endgame"), "-", "no stated value carries its mechanism");
}

#[test]
fn a_schema_8_store_is_upgraded_in_place_to_keep_deposits() {
    let dir = tempfile::tempdir().expect("tempdir");
    let study = write_study(dir.path(), 10, 2);
    ok(&agora_in(dir.path(), &["run", study, "--store", "s.sqlite"]));
    let store = dir.path().join("s.sqlite");
    {
        let c = rusqlite::Connection::open(&store).expect("open");
        c.execute_batch("DROP TABLE deposits; DROP TABLE run_provenance; PRAGMA user_version = 8;").expect("downgrade");
    }
    ok(&agora_in(dir.path(), &["prereg", study, "--out", "dep"]));
    ok(&agora_in(dir.path(), &["verify", "--store", "s.sqlite"]));
    let c = rusqlite::Connection::open(&store).expect("open");
    let v: i32 = c.query_row("PRAGMA user_version", [], |r| r.get(0)).expect("version");
    assert_eq!(v, agora_engine::store::SCHEMA_VERSION);
    assert_eq!(v, 9);
    let n: i64 = c.query_row("SELECT COUNT(*) FROM run_provenance", [], |r| r.get(0)).expect("table");
    assert_eq!(n, 0, "runs stored before keep no time");
    drop(c);
    // Its runs were made before the deposit, which the analysis says.
    ok(&agora_in(dir.path(), &["run", study, "--store", "s.sqlite", "--prereg", "dep"]));
    let s = deposit_section(dir.path(), &[]);
    assert!(
        s.contains("no time recorded; stored before the first run under the deposit")
            || s.contains("0 runs made under"),
        "{s}"
    );
}

#[test]
fn the_report_shows_the_deposit_first_under_the_verdicts_in_a_browser() {
    let dir = tempfile::tempdir().expect("tempdir");
    deposit_and_run(dir.path(), &[]);
    let study = write_study(dir.path(), 20, 2);
    ok(&agora_in(dir.path(), &["run", study, "--store", "s.sqlite", "--prereg", "dep", "--deviate", "longer games"]));
    ok(&agora_in(dir.path(), &["report", "--store", "s.sqlite", "--out", "rep"]));
    let html = std::fs::read_to_string(dir.path().join("rep/report.html")).expect("report");
    let verdicts = html.find("id=\"verdict-table\"").expect("verdicts");
    let deposit = html.find("<h2 id=\"deposit\">Deposit</h2>").expect("deposit section");
    assert!(deposit > verdicts, "the deposit comes after the verdicts");
    assert_eq!(html[verdicts..deposit].matches("<h2").count(), 0, "and first under them");
    let Some(chromium) = chromium() else { return };
    let dom = page_dom(chromium, &dir.path().join("profile"), &dir.path().join("rep/report.html"));
    assert!(dom.contains("<h2 id=\"deposit\">Deposit</h2>"), "the browser shows the section");
    assert!(dom.contains("class=\"deposit-hash\""), "with the deposit's hash");
    assert!(dom.contains("self-attested"), "and its time labelled self-attested");
    assert!(dom.contains("<table class=\"deviations\">") && dom.contains("longer games"), "and each deviation");
    assert!(dom.contains("class=\"deviation\" href=\"#deposit\""), "a verdict resting on one is marked");
}

/// Hashes, commits and clock times written as placeholders, so that the book's example reads
/// the same at every commit and on every day.
fn normalise(s: &str) -> String {
    let is_hex = |c: char| c.is_ascii_digit() || ('a'..='f').contains(&c);
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        // UTC times: 2026-08-15T07:02:00Z.
        let window: String = chars[i..(i + 20).min(chars.len())].iter().collect();
        let shape = "dddd-dd-ddTdd:dd:ddZ";
        if window.len() == 20
            && window.chars().zip(shape.chars()).all(|(c, k)| if k == 'd' { c.is_ascii_digit() } else { c == k })
        {
            out.push_str("<time>");
            i += 20;
            continue;
        }
        let starts_word = i == 0 || !chars[i - 1].is_ascii_alphanumeric();
        let run = chars[i..].iter().take_while(|c| is_hex(**c)).count();
        let ends_word = chars.get(i + run).is_none_or(|c| !c.is_ascii_alphanumeric());
        let name = match run {
            64 => Some("<hash>"),
            40 => Some("<commit>"),
            12 => Some("<hash12>"),
            _ => None,
        };
        match name {
            Some(n) if starts_word && ends_word && chars[i..i + run].iter().any(|c| c.is_ascii_digit()) => {
                out.push_str(n);
                i += run;
            }
            _ => {
                out.push(chars[i]);
                i += 1;
            }
        }
    }
    out
}

/// The fenced block after `<!-- NAME -->` in the book's chapter.
fn book_block(book: &str, name: &str) -> String {
    let marker = format!("<!-- {name} -->");
    let at = book.find(&marker).unwrap_or_else(|| panic!("{marker} in docs/src/deposit.md"));
    let rest = &book[at + marker.len()..];
    let open = rest.find("```").expect("a fenced block");
    let body = &rest[open..];
    let start = body.find('\n').expect("fence line") + 1;
    let end = body[start..].find("```").expect("closing fence") + start;
    body[start..end].to_string()
}

/// The book's worked example, run: each printed block of docs/src/deposit.md is what the
/// commands print (hashes, the commit and times as placeholders).
#[test]
fn the_books_worked_example_prints_what_the_book_shows() {
    let book = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/src/deposit.md")).expect("chapter");
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::create_dir_all(d.join("studies")).expect("mkdir");
    std::fs::create_dir_all(d.join("cells")).expect("mkdir");
    let study = book_block(&book, "input: study");
    std::fs::write(d.join("studies/pd.ron"), &study).expect("write");
    let mut shown = Vec::new();
    let mut check = |name: &str, printed: &str, whole: bool| {
        let want = book_block(&book, name);
        let got = normalise(printed);
        let same = if whole { got == want } else { want.lines().all(|l| got.lines().any(|g| g == l)) };
        if !same {
            shown.push(format!("<!-- {name} --> prints:\n{got}"));
        }
    };
    let o = agora_in(d, &["prereg", "studies/pd.ron", "--out", "deposit"]);
    ok(&o);
    check("output: prereg", &String::from_utf8_lossy(&o.stdout), true);
    let o = agora_in(d, &["run", "studies/pd.ron", "--store", "pd.sqlite", "--prereg", "deposit"]);
    ok(&o);
    check("output: run", &String::from_utf8_lossy(&o.stdout), false);
    std::fs::write(d.join("studies/pd.ron"), study.replace("rounds: 10", "rounds: 20")).expect("edit");
    let o = agora_in(d, &["run", "studies/pd.ron", "--store", "pd.sqlite", "--prereg", "deposit"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    check("output: refused", &String::from_utf8_lossy(&o.stderr), true);
    let reason = "twenty rounds, to see the endgame";
    let o = agora_in(d, &["run", "studies/pd.ron", "--store", "pd.sqlite", "--prereg", "deposit", "--deviate", reason]);
    ok(&o);
    check("output: deviate", &String::from_utf8_lossy(&o.stdout), false);
    ok(&agora_in(d, &["analyze", "--store", "pd.sqlite", "--study", "pd@2", "--out", "out"]));
    let md = std::fs::read_to_string(d.join("out/analysis.md")).expect("analysis.md");
    let section = &md[md.find("## Deposit").expect("section")..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |e| e + 4)];
    check("output: analyze", section, true);
    assert!(shown.is_empty(), "the book's example differs from what the commands print:\n\n{}", shown.join("\n\n"));
}
