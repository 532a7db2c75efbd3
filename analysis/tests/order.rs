//! The analysis of a store does not depend on the order its runs were committed in: threads
//! commit runs in any order, and the same study must give the same numbers, down to the seeded
//! bootstrap's intervals. Regression: runs were read in commit order, so two stores of the same
//! study could report different Wasserstein intervals (0.1307 against 0.1290 on the guard's
//! classical study).

use std::path::{Path, PathBuf};

use rusqlite::{params, Connection};

/// A store with the tables the analysis reads, the given runs written in the given order.
fn store(path: &Path, runs: &[(String, String, Vec<(String, f64)>)]) {
    let _ = std::fs::remove_file(path);
    let c = Connection::open(path).expect("open");
    c.execute_batch(
        "CREATE TABLE runs (run_id INTEGER PRIMARY KEY, run_key TEXT, study TEXT, block TEXT, environment TEXT,
            arm TEXT, variant TEXT, cell TEXT, level TEXT, roster TEXT, family TEXT, sweep_name TEXT, sweep_value REAL,
            committed INTEGER, population INTEGER);
         CREATE TABLE metrics (run_id INTEGER, name TEXT, value REAL);
         CREATE TABLE declarations (environment TEXT PRIMARY KEY, declaration_json TEXT NOT NULL);",
    )
    .expect("schema");
    let declarations: Vec<serde_json::Value> =
        serde_json::from_str(include_str!("fixtures/declarations.json")).expect("the declarations fixture");
    for d in &declarations {
        c.execute(
            "INSERT INTO declarations VALUES (?1, ?2)",
            params![d["environment"].as_str().expect("environment"), d.to_string()],
        )
        .expect("declaration");
    }
    for (key, env, metrics) in runs {
        c.execute(
            "INSERT INTO runs (run_key, study, block, environment, arm, variant, cell, level, roster, family,
                sweep_value, committed, population)
             VALUES (?1, 's', 'b', ?2, 'baseline', 'C0', 'baseline', 'baseline', 'm', 'classical', NULL, 0, 2)",
            params![key, env],
        )
        .expect("run");
        let id = c.last_insert_rowid();
        for (name, value) in metrics {
            c.execute("INSERT INTO metrics VALUES (?1, ?2, ?3)", params![id, name, value]).expect("metric");
        }
    }
}

fn runs() -> Vec<(String, String, Vec<(String, f64)>)> {
    (0..40u32)
        .map(|i| {
            // Uneven request distributions per run, so that resampled runs matter.
            let metrics: Vec<(String, f64)> = (11..=20)
                .map(|k| {
                    let w = f64::from((i * 7 + k * 3) % 11 + u32::from(k == 17) * 6);
                    (format!("choice_{k:02}"), w)
                })
                .collect();
            let total: f64 = metrics.iter().map(|m| m.1).sum();
            let metrics = metrics.into_iter().map(|(n, w)| (n, w / total)).collect();
            (format!("{:016x}", u64::from(i).wrapping_mul(0x9e37_79b9_7f4a_7c15)), "money-request".to_string(), metrics)
        })
        .collect()
}

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("agora-order-{}-{name}", std::process::id()))
}

#[test]
fn commit_order_does_not_change_the_analysis() {
    let forward = runs();
    let mut backward = forward.clone();
    backward.reverse();
    let (a, b) = (temp("a.sqlite"), temp("b.sqlite"));
    store(&a, &forward);
    store(&b, &backward);
    let x = agora_analysis::analyze::analyze(&a, None).expect("analyses");
    let y = agora_analysis::analyze::analyze(&b, None).expect("analyses");
    assert!(!x.wasserstein.is_empty(), "the bootstrap ran");
    assert_eq!(serde_json::to_string(&x).expect("json"), serde_json::to_string(&y).expect("json"));
    let _ = (std::fs::remove_file(a), std::fs::remove_file(b));
}
