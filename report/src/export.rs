//! `agora export`: the store's tables as Parquet or CSV files, one per table, with the
//! types the tables declare (a view's computed column takes its table's type), read by
//! SQLite's own affinity rules: a declared type containing `INT` is an integer column (`INT`,
//! `INTEGER`, `BIGINT` alike), one containing `REAL`, `FLOA` or `DOUB` a real column, anything
//! else text. Each file is written to a temporary name beside it and renamed once complete, so
//! a full disk or a kill never leaves a truncated file under the table's name.

use std::path::{Path, PathBuf};

use agora_engine::store::{TABLES, VIEW_COLUMN_TYPES};
use anyhow::Context as _;
use polars::prelude::*;
use rusqlite::types::ValueRef;

/// Output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Apache Parquet, one file per table.
    Parquet,
    /// CSV with a header row, one file per table.
    Csv,
}

/// A column being read: integers, reals or text, by the table's declared type.
enum Col {
    Int(Vec<Option<i64>>),
    Real(Vec<Option<f64>>),
    Text(Vec<Option<String>>),
}

/// Writes every table to `out/<table>.<ext>`; returns (table, file, rows).
pub fn export(store: &Path, format: Format, out: &Path) -> anyhow::Result<Vec<(String, PathBuf, usize)>> {
    export_with(store, format, out, &mut |_, _| {})
}

/// [`export`], telling `on_table` each table's name and index before it is written.
pub fn export_with(
    store: &Path,
    format: Format,
    out: &Path,
    on_table: &mut dyn FnMut(&str, usize),
) -> anyhow::Result<Vec<(String, PathBuf, usize)>> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let conn = rusqlite::Connection::open_with_flags(store, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let mut written = Vec::new();
    for (index, &table) in TABLES.iter().enumerate() {
        on_table(table, index);
        let decl: Vec<(String, String)> = agora_records::reads::export::declared_columns(&conn, table)?;
        // A view's computed column has no declared type: take the one its table declared.
        let decl: Vec<(String, String)> = decl
            .into_iter()
            .map(|(name, t)| {
                let t = if t.is_empty() {
                    VIEW_COLUMN_TYPES
                        .iter()
                        .find(|(v, c, _)| *v == table && *c == name)
                        .map_or("TEXT".to_string(), |(_, _, t)| t.to_string())
                } else {
                    t
                };
                (name, t)
            })
            .collect();
        let mut cols: Vec<Col> = decl.iter().map(|(_, t)| column_for(t)).collect();
        let n = agora_records::reads::export::for_each_row(&conn, table, cols.len(), |row| {
            for (col, &v) in cols.iter_mut().zip(row) {
                match col {
                    Col::Int(c) => c.push(match v {
                        ValueRef::Integer(x) => Some(x),
                        _ => None,
                    }),
                    Col::Real(c) => c.push(match v {
                        ValueRef::Real(x) => Some(x),
                        ValueRef::Integer(x) => Some(x as f64),
                        _ => None,
                    }),
                    Col::Text(c) => c.push(match v {
                        ValueRef::Text(t) => Some(String::from_utf8_lossy(t).into_owned()),
                        ValueRef::Integer(x) => Some(x.to_string()),
                        ValueRef::Real(x) => Some(x.to_string()),
                        _ => None,
                    }),
                }
            }
        })?;
        let columns: Vec<Column> = decl
            .iter()
            .zip(cols)
            .map(|((name, _), col)| match col {
                Col::Int(v) => Column::new(name.as_str().into(), v),
                Col::Real(v) => Column::new(name.as_str().into(), v),
                Col::Text(v) => Column::new(name.as_str().into(), v),
            })
            .collect();
        let mut df = DataFrame::new(columns)?;
        let path = write_frame(&mut df, out, table, format)?;
        written.push((table.to_string(), path, n));
    }
    // Tournaments' score tables, computed from the runs (one row per study, block, cell and
    // strategy).
    let tournaments = agora_analysis::tournament::tables(store, None)?;
    if !tournaments.is_empty() {
        on_table("tournament_scores", TABLES.len());
        let rows: Vec<(&agora_analysis::tournament::Table, &agora_analysis::tournament::Score)> =
            tournaments.iter().flat_map(|t| t.rows.iter().map(move |r| (t, r))).collect();
        let text = |f: &dyn Fn(&agora_analysis::tournament::Table) -> &str| -> Vec<String> {
            rows.iter().map(|(t, _)| f(t).to_string()).collect()
        };
        let int = |f: &dyn Fn(&agora_analysis::tournament::Score) -> u64| -> Vec<i64> {
            rows.iter().map(|(_, r)| f(r) as i64).collect()
        };
        let mut df = DataFrame::new(vec![
            Column::new("study".into(), text(&|t| &t.study)),
            Column::new("block".into(), text(&|t| &t.block)),
            Column::new("cell".into(), text(&|t| &t.cell)),
            Column::new("environment".into(), text(&|t| &t.environment)),
            Column::new("rank".into(), int(&|r| r.rank as u64)),
            Column::new("strategy".into(), rows.iter().map(|(_, r)| r.strategy.clone()).collect::<Vec<_>>()),
            Column::new("matches".into(), int(&|r| r.matches)),
            Column::new("mean_payoff".into(), rows.iter().map(|(_, r)| r.mean_payoff).collect::<Vec<_>>()),
            Column::new("wins".into(), int(&|r| r.wins)),
            Column::new("draws".into(), int(&|r| r.draws)),
            Column::new("losses".into(), int(&|r| r.losses)),
            Column::new("cooperation".into(), rows.iter().map(|(_, r)| r.cooperation).collect::<Vec<_>>()),
            Column::new("self_payoff".into(), rows.iter().map(|(_, r)| r.self_payoff).collect::<Vec<_>>()),
        ])?;
        let path = write_frame(&mut df, out, "tournament_scores", format)?;
        written.push(("tournament_scores".to_string(), path, rows.len()));
    }
    Ok(written)
}

/// Writes `df` as `out/{name}.parquet` or `.csv`, under a temporary name renamed once complete.
fn write_frame(df: &mut DataFrame, out: &Path, name: &str, format: Format) -> anyhow::Result<PathBuf> {
    let path = out.join(format!(
        "{name}.{}",
        match format {
            Format::Parquet => "parquet",
            Format::Csv => "csv",
        }
    ));
    let partial = out.join(format!(".{}.partial", path.file_name().and_then(|f| f.to_str()).unwrap_or(name)));
    let result = (|| -> anyhow::Result<()> {
        let mut file = std::fs::File::create(&partial).with_context(|| format!("creating {}", partial.display()))?;
        match format {
            Format::Parquet => {
                ParquetWriter::new(&mut file).finish(df).with_context(|| format!("writing {}", path.display()))?;
            }
            Format::Csv => {
                CsvWriter::new(&mut file).finish(df).with_context(|| format!("writing {}", path.display()))?
            }
        }
        file.sync_all().with_context(|| format!("writing {}", path.display()))?;
        std::fs::rename(&partial, &path).with_context(|| format!("writing {}", path.display()))?;
        Ok(())
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&partial);
        return Err(e);
    }
    Ok(path)
}

/// The column a declared type reads into, by SQLite's affinity rules (§3.1 of its datatype
/// page): `INT` anywhere makes an integer; `CHAR`, `CLOB` or `TEXT` text; `REAL`, `FLOA` or
/// `DOUB` a real; anything else (a view column's missing type is resolved before) text.
fn column_for(declared: &str) -> Col {
    let t = declared.to_ascii_uppercase();
    if t.contains("INT") {
        Col::Int(Vec::new())
    } else if t.contains("CHAR") || t.contains("CLOB") || t.contains("TEXT") {
        Col::Text(Vec::new())
    } else if t.contains("REAL") || t.contains("FLOA") || t.contains("DOUB") {
        Col::Real(Vec::new())
    } else {
        Col::Text(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_types_read_by_sqlites_affinity_rules() {
        for t in ["INT", "INTEGER", "int", "BIGINT", "UNSIGNED BIG INT"] {
            assert!(matches!(column_for(t), Col::Int(_)), "{t}");
        }
        for t in ["REAL", "DOUBLE", "FLOAT"] {
            assert!(matches!(column_for(t), Col::Real(_)), "{t}");
        }
        for t in ["TEXT", "VARCHAR(10)", "CLOB", "BLOB", ""] {
            assert!(matches!(column_for(t), Col::Text(_)), "{t}");
        }
    }
}
