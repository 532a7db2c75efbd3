//! The page's escaping and templates.
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
        tournaments: &[],
        models: Vec::leak(vec![Model {
            name: EVIL.into(),
            family: EVIL.into(),
            served_id: EVIL.into(),
            endpoints: EVIL.into(),
            quantisation: EVIL.into(),
            notes: EVIL.into(),
            structured: EVIL.into(),
            temperature: 0.7,
            max_tokens: 10,
            calls: 2,
        }]),
        profile: None,
        contamination: ContaminationView {
            contrasts: vec![],
            probes: Vec::leak(vec![Probes { model: EVIL.into(), recognised: 1, probes: 2 }]),
        },
        audit: Some(AuditView {
            occurrence: None,
            dependency: Some(&[]),
            agreement: None,
            requirements: Vec::leak(vec![crate::audit::Requirement {
                requirement: EVIL.into(),
                model: EVIL.into(),
                kind: EVIL.into(),
                estimate: Some(0.51),
                low: None,
                high: Some(0.9),
                bound: None,
                verdict: EVIL.into(),
                reason: EVIL.into(),
                n: None,
                planned_n: Some(12),
            }]),
            tree: None,
        }),
        naming_runs: &[],
        excerpts: Vec::leak(vec![Excerpt {
            model: EVIL.into(),
            role: EVIL.into(),
            parse_status: EVIL.into(),
            raw_reply: EVIL.into(),
        }]),
        studies: Vec::leak(vec![Study {
            study: EVIL.into(),
            plan_hash: EVIL.into(),
            master_seed: EVIL.into(),
            runs: 1,
        }]),
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
    // The template formats the stored numbers: three decimals, `-` where a statistic is absent.
    assert!(html.contains(&format!(
        "<tr><td>{ESCAPED}</td><td>{ESCAPED}</td><td>{ESCAPED}</td><td>0.510</td><td>-</td><td>-</td><td>{ESCAPED}</td><td>{ESCAPED}</td><td>-</td><td>12</td></tr>"
    )));
    assert!(html.contains("<td>0.7</td><td>10</td><td>2</td></tr>"), "the temperature as written");
    assert!(html.contains(&format!("<tr><td>{ESCAPED}</td><td>{ESCAPED}</td><td>{ESCAPED}</td><td>1</td></tr>")));
    assert!(html.contains(&format!("<p>{ESCAPED}: the recognition probe named the paradigm in 1 of 2 probes.</p>")));
    assert_eq!(html.matches(ESCAPED).count(), 34, "every value of the store's, escaped");
    assert!(
        html.contains("<figure id=\"figure-0\" class=\"figure\"><figcaption>A figure <a href=\"figures/01-a-figure.png\">PNG</a> <a href=\"figures/01-a-figure.svg\">SVG</a></figcaption><svg id=\"drawn\"><text>a &amp; b</text></svg></figure>"),
        "the figure's SVG, as drawn"
    );
    assert!(html.contains("<p id=\"audit-dependency-none\">No dependency estimates.</p>"));
    assert!(html.contains("<table id=\"a-table\"") || html.contains("<h2>A table</h2>\n<p>No data in this store.</p>"));
    assert!(html.starts_with("<!DOCTYPE html>") && html.ends_with("</body></html>"), "{html}");
}

#[test]
fn the_number_filters_write_what_the_page_always_wrote() {
    let env = environment().expect("the templates parse");
    let render = |t: &str, x: Value, y: Value| env.render_str(t, minijinja::context! { x, y }).expect("renders");
    assert_eq!(render("{{ x | fixed(3) }}", Value::from(0.1234), Value::UNDEFINED), "0.123");
    assert_eq!(render("{{ x | fixed(2) }}", Value::from(-1), Value::UNDEFINED), "-1.00");
    assert_eq!(render("{{ x | fixed(3) }}", Value::from(()), Value::UNDEFINED), "-");
    assert_eq!(render("{{ x | fixed(1, '–') }}", Value::from(()), Value::UNDEFINED), "–");
    assert_eq!(render("{{ x | interval(y) }}", Value::from(0.1), Value::from(0.25)), "[0.100, 0.250]");
    assert_eq!(render("{{ x | interval(y) }}", Value::from(0.1), Value::from(())), "-");
    assert_eq!(render("{{ x | shortest }}", Value::from(1.0), Value::UNDEFINED), "1");
    assert_eq!(render("{{ x | shortest }}", Value::from(0.7), Value::UNDEFINED), "0.7");
    assert!(env.render_str("{{ x | fixed(3) }}", minijinja::context! { x => "text" }).is_err(), "text is not a number");
    // A misspelt field is an error, not an absent statistic.
    assert!(env.render_str("{{ x.misspelt | fixed(3) }}", minijinja::context! { x => 1 }).is_err(), "fixed");
    assert!(env.render_str("{{ x | interval(y.misspelt) }}", minijinja::context! { x => 0.1, y => 1 }).is_err());
}
