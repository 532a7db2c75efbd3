//! Reading the audit's tables back, as the ladder reads them.
use super::*;

/// The audit's own schemas, a response, a gate without labels and a dependency row: the
/// queries read them back (the columns are the audit's).
#[test]
fn reads_the_audit_tables_and_none_without_them() {
    let conn = Connection::open_in_memory().expect("db");
    assert_eq!(read_conn(&conn, None).expect("read"), None);
    conn.execute_batch(agora_records::families::audit::TABLES).expect("schema");
    conn.execute_batch(agora_records::families::audit::DEPENDENCY).expect("schema");
    conn.execute_batch(
        "CREATE TABLE decisions (run_id INTEGER, step INTEGER, round INTEGER, seat INTEGER, role TEXT,
             action TEXT, value REAL, scale REAL, context REAL);
         INSERT INTO decisions VALUES (1, 0, 0, 0, 'proposer', 'a4', 4, 10, NULL);
         INSERT INTO decisions VALUES (1, 1, 1, 0, 'responder', 'c0', 0, 1, NULL);
         INSERT INTO audit_responses (run_id, seat, slot, attempt, coder, codebook, codebook_version,
             codebook_sha256, model, study, environment, arm, cell, parse_status, action, answer_field,
             reply_form, reasoning_present, reasoning_sources, post_hoc_present, n_sentences, n_residual,
             n_post_hoc_sentences, values_json)
         VALUES (1, 0, 0, 1, 'lexicon', 'default', 1, 'abc', 'm1', 's', 'bargaining', 'ultimatum', 'baseline',
             'parsed', 'a4', 'offer', 'json', 1, 'field:reasoning', 0, 2, 1, 0,
             '{\"fairness\": 1, \"altruism\": 0}');
         INSERT INTO audit_responses (run_id, seat, slot, attempt, coder, codebook, codebook_version,
             codebook_sha256, model, study, environment, arm, cell, parse_status, action, answer_field,
             reply_form, reasoning_present, reasoning_sources, post_hoc_present, n_sentences, n_residual,
             n_post_hoc_sentences, values_json)
         VALUES (1, 0, 1, 1, 'lexicon', 'default', 1, 'abc', 'm1', 's', 'bargaining', 'ultimatum', 'baseline',
             'parsed', 'c0', 'action', 'json', 1, 'field:reasoning', 0, 1, 1, 0, '{\"fairness\": 0}');
         INSERT INTO audit_dependency VALUES ('', 'lexicon', 'default', 1, 'abc', 'm1', 'bargaining', 'ultimatum',
             'baseline', 'proposer',
             'offer_share', 'lpm-fe', 'fairness', 'estimated', '', 0.3, 0.1, 3.0, 0.01, 0.1, 0.5, 12, 120, 6,
             'validated: …');",
    )
    .expect("rows");
    let ev = read_conn(&conn, Some("s")).expect("read").expect("an audit");
    // Regression: a seat that changes role between games (the ultimatum battery) has each
    // response attributed to its own decision's role (the slot-th), not to the seat's first.
    assert_eq!(ev.responses.len(), 2);
    let mut roles: Vec<Option<&str>> = ev.responses.iter().map(|r| r.role.as_deref()).collect();
    roles.sort();
    assert_eq!(roles, [Some("proposer"), Some("responder")]);
    let ev = AuditEvidence {
        responses: ev.responses.into_iter().filter(|r| r.role.as_deref() == Some("proposer")).collect(),
        ..ev
    };
    assert_eq!(
        (ev.responses[0].role.as_deref(), ev.responses[0].stated.as_slice()),
        (Some("proposer"), &["fairness".to_string()][..])
    );
    assert_eq!(ev.dependency.len(), 1);
    assert_eq!((ev.dependency[0].coef, ev.dependency[0].n_prompts), (Some(0.3), 12));
    assert_eq!(
        (ev.dependency[0].arm.as_deref(), ev.dependency[0].cell.as_deref(), ev.dependency[0].p),
        (Some("ultimatum"), Some("baseline"), Some(0.01))
    );
    assert!(ev.intervention.is_empty(), "no audit_faithfulness table: no intervention");
    conn.execute_batch(agora_records::families::audit::FAITHFULNESS).expect("schema");
    conn.execute_batch(
        "INSERT INTO audit_faithfulness VALUES ('5', 'lexicon', 'default', 1, 'abc', 'm1', 'bargaining', 'ultimatum',
             'baseline', 'proposer', 'source', 'offer_share', 'fairness', 'estimated', '', 24, 12, 12, 0.2, 0.05, 0.1, 0.3, 0.5, 0.2, 0.8, '', 'validated', 20);",
    )
    .expect("faithfulness row");
    let read = read_conn(&conn, Some("s")).expect("read").expect("an audit");
    assert_eq!(read.intervention.len(), 1);
    let t = &read.intervention[0];
    assert_eq!((t.value.as_str(), t.tau, t.ci_low, t.ci_high), ("fairness", Some(0.2), Some(0.1), Some(0.3)));
    assert_eq!(
        (t.arm.as_deref(), t.cell.as_deref(), t.design.as_deref(), t.n_states, t.se),
        (Some("ultimatum"), Some("baseline"), Some("source"), 20, Some(0.05))
    );
    // No audit_gate table: no decision is read, and the ladder says so.
    assert_eq!(ev.gates[&ev.responses[0].key], Vec::<Validation>::new());
    conn.execute_batch(agora_records::families::audit::GATE).expect("schema");
    conn.execute_batch(
        "INSERT INTO audit_gate VALUES ('lexicon', 'default', 1, 'abc', 'm1', 'validated', 0.85, 240, 120, 0.8,
             '[[\"fairness\", 40, 0.9]]', 1, 120, 'κ = 0.850 ≥ 0.8 (240 sentences, 120 responses)',
             2, 0.9, 240, 0, 0.7, 0.2);
         INSERT INTO audit_gate VALUES ('lexicon', 'default', 1, 'other', 'm1', 'refused', NULL, 0, 0, 0.8,
             '[]', 0, 0, 'no human labels', 0, NULL, 0, 0, 0.7, 0.2);",
    )
    .expect("gate rows");
    let read = read_conn(&conn, Some("s")).expect("read").expect("an audit");
    let gate = &read.gates[&read.responses[0].key];
    assert_eq!(gate.len(), 1, "only the decision of the coded codebook's SHA-256: {gate:?}");
    assert_eq!(
        (gate[0].status, gate[0].kappa, gate[0].n, gate[0].coder_errors),
        (Status::Validated, Some(0.85), 240, (1, 120))
    );
    assert_eq!((gate[0].support("fairness"), gate[0].recall_of("fairness")), (40, Some(0.9)));
    conn.execute("UPDATE audit_gate SET status = 'maybe'", []).expect("corrupt");
    let e = read_conn(&conn, Some("s")).expect_err("a status the gate never writes");
    assert!(e.to_string().contains("audit_gate.status"), "{e}");
}
