//! The profile's tables (`agora profile`): one row per scheduled slot with its adopted answer or
//! its missing status, every attempt with its raw reply and cache key, each distinct question
//! text once under its SHA-256, the version files' hashes a study ran with, the models'
//! settings, each pass over the slots, and General Robustness's slots.
//!
//! Versions: 1, the tables as first written; 2, `profile_gr.support` (the wording GR's review
//! read the adopted answer from), NULL on the rows of an earlier build.

use rusqlite::Connection;

use super::{add_column, Family, Step};

/// The tables of version 2.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS profile_studies (
    study TEXT PRIMARY KEY, master_seed INTEGER NOT NULL, responses INTEGER NOT NULL, gr_responses INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS profile_versions (
    study TEXT NOT NULL, task TEXT NOT NULL, sha256 TEXT NOT NULL, PRIMARY KEY (study, task)
);
CREATE TABLE IF NOT EXISTS profile_prompts (sha256 TEXT PRIMARY KEY, text TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS profile_responses (
    study TEXT NOT NULL, model TEXT NOT NULL, served_id TEXT NOT NULL, task TEXT NOT NULL,
    version TEXT NOT NULL, presentation TEXT NOT NULL, level TEXT NOT NULL, point TEXT NOT NULL,
    branch TEXT NOT NULL, direction TEXT NOT NULL, round INTEGER NOT NULL, slot INTEGER NOT NULL,
    scored INTEGER NOT NULL, status TEXT NOT NULL, attempts INTEGER NOT NULL, value TEXT, score REAL,
    prompt_sha256 TEXT NOT NULL, slot_key TEXT NOT NULL,
    PRIMARY KEY (study, model, task, version, presentation, level, point, branch, direction, round, slot)
);
CREATE TABLE IF NOT EXISTS profile_attempts (
    study TEXT NOT NULL, model TEXT NOT NULL, slot_key TEXT NOT NULL, attempt INTEGER NOT NULL,
    status TEXT NOT NULL, reply TEXT NOT NULL, cache_key TEXT NOT NULL, PRIMARY KEY (study, model, slot_key, attempt)
);
CREATE TABLE IF NOT EXISTS profile_settings (
    study TEXT NOT NULL, model TEXT NOT NULL, settings_json TEXT NOT NULL, PRIMARY KEY (study, model)
);
CREATE TABLE IF NOT EXISTS profile_passes (
    study TEXT NOT NULL, model TEXT NOT NULL, pass INTEGER NOT NULL, kind TEXT NOT NULL,
    settings_json TEXT NOT NULL, changed_json TEXT NOT NULL, slots INTEGER NOT NULL, outcome TEXT NOT NULL,
    PRIMARY KEY (study, model, pass)
);
CREATE TABLE IF NOT EXISTS profile_gr (
    study TEXT NOT NULL, model TEXT NOT NULL, served_id TEXT NOT NULL, condition TEXT NOT NULL,
    format TEXT NOT NULL, class TEXT NOT NULL, slot INTEGER NOT NULL, status TEXT NOT NULL,
    attempts INTEGER NOT NULL, value TEXT, strict INTEGER NOT NULL, prompt_sha256 TEXT NOT NULL,
    slot_key TEXT NOT NULL, support TEXT, PRIMARY KEY (study, model, condition, slot)
);
";

fn gr_support(conn: &Connection) -> rusqlite::Result<()> {
    add_column(conn, "profile_gr", "support", "TEXT")
}

/// The profile's family.
pub const PROFILE: Family = Family {
    name: "profile",
    version: 2,
    tables: &[
        "profile_studies",
        "profile_versions",
        "profile_prompts",
        "profile_responses",
        "profile_attempts",
        "profile_settings",
        "profile_passes",
        "profile_gr",
    ],
    schema: SCHEMA,
    steps: &[Step { to: 2, what: "profile_gr gains support, the wording an answer was read from", apply: gr_support }],
};
