//! A query's rows read into a row type by column name: the type's fields are named as the
//! columns its SELECT returns (`AS` where a column's name differs), so no reader counts
//! positions, and a column added to a SELECT cannot shift the ones after it.

use rusqlite::{Params, Row, Statement};
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer};

/// Every row `st` returns for `params`, each read into `T` by column name, in the order
/// returned. A row that does not read into `T` (a NULL where the field is not an `Option`, a
/// negative count, a text where a number belongs) is an error naming the column; a plain `f64`
/// field reads NULL as NaN unless it is marked `#[serde(deserialize_with = "not_null")]`.
pub fn by_name<T: DeserializeOwned>(st: &mut Statement<'_>, params: impl Params) -> rusqlite::Result<Vec<T>> {
    let columns = serde_rusqlite::columns_from_statement(st);
    let mut rows = st.query(params)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        out.push(one(row, &columns)?);
    }
    Ok(out)
}

/// One row read into `T` by the names of `columns` (the statement's, in order).
pub fn one<T: DeserializeOwned>(row: &Row<'_>, columns: &[String]) -> rusqlite::Result<T> {
    serde_rusqlite::from_row_with_columns(row, columns).map_err(|e| match e {
        serde_rusqlite::Error::Rusqlite(e) => e,
        serde_rusqlite::Error::Deserialization { column: Some(ref c), .. } => {
            let i = columns.iter().position(|n| n == c).unwrap_or(0);
            let kind = row.get_ref(i).map_or(rusqlite::types::Type::Null, |v| v.data_type());
            rusqlite::Error::FromSqlConversionFailure(i, kind, Box::new(e))
        }
        other => rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Null, Box::new(other)),
    })
}

/// A number column that must not be NULL, for a plain `f64` field (`#[serde(deserialize_with =
/// "crate::rows::not_null")]`): the row reader would otherwise read NULL as NaN.
pub fn not_null<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Option::<f64>::deserialize(d)?.ok_or_else(|| D::Error::custom("NULL where a number belongs"))
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Seat {
        run_id: i64,
        seat: u32,
        role: String,
        share: Option<f64>,
        matched: bool,
    }

    #[derive(Debug, Deserialize)]
    struct Share {
        #[serde(deserialize_with = "not_null")]
        share: f64,
    }

    fn store() -> Connection {
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch(
            "CREATE TABLE t (run_id INTEGER, seat INTEGER, role TEXT, share REAL, matched INTEGER);
             INSERT INTO t VALUES (1, 0, 'proposer', 0.5, 1), (1, 1, 'responder', NULL, 0);",
        )
        .unwrap();
        c
    }

    #[test]
    fn rows_are_read_by_column_name_in_any_order() {
        let c = store();
        let mut st = c.prepare("SELECT matched, share, role, seat, run_id FROM t ORDER BY seat").unwrap();
        let rows: Vec<Seat> = by_name(&mut st, []).unwrap();
        assert_eq!(
            rows,
            [
                Seat { run_id: 1, seat: 0, role: "proposer".into(), share: Some(0.5), matched: true },
                Seat { run_id: 1, seat: 1, role: "responder".into(), share: None, matched: false },
            ]
        );
    }

    #[test]
    fn a_value_that_does_not_fit_names_its_column() {
        let c = store();
        c.execute("UPDATE t SET seat = -1 WHERE role = 'responder'", []).unwrap();
        let mut st = c.prepare("SELECT run_id, seat, role, share, matched FROM t ORDER BY role").unwrap();
        let err = by_name::<Seat>(&mut st, []).unwrap_err();
        assert!(
            matches!(err, rusqlite::Error::FromSqlConversionFailure(1, rusqlite::types::Type::Integer, _)),
            "{err}"
        );
        assert!(err.to_string().contains("seat"), "{err}");
    }

    #[test]
    fn a_missing_column_is_an_error_not_a_default() {
        let c = store();
        let mut st = c.prepare("SELECT run_id, seat, role, share FROM t").unwrap();
        let err = by_name::<Seat>(&mut st, []).unwrap_err();
        assert!(err.to_string().contains("matched"), "{err}");
    }

    #[test]
    fn a_null_number_is_an_error_not_nan() {
        let c = store();
        let mut st = c.prepare("SELECT share FROM t ORDER BY seat").unwrap();
        let err = by_name::<Share>(&mut st, []).unwrap_err();
        assert!(err.to_string().contains("share") && err.to_string().contains("NULL"), "{err}");
        let mut st = c.prepare("SELECT share FROM t WHERE seat = 0").unwrap();
        assert_eq!(by_name::<Share>(&mut st, []).unwrap()[0].share, 0.5);
    }
}
