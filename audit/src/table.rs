//! The audit's CSV tables ([`Table`]), built column by column: each column names its header and
//! how a row writes its cell, so that a header and its cell are stated once, together.

use agora_analysis::table::Table;
use agora_records::families::audit::Position;

/// One column of a table of `R`s: its header and its cell for a row.
pub(crate) type Column<R> = (&'static str, fn(&R) -> String);

/// The table `name` (its CSV file) titled `title`: one line per row of `rows`, one cell per
/// column of `columns`, in order.
pub(crate) fn of_rows<'a, R: 'a>(
    name: &'static str,
    title: &'static str,
    rows: impl IntoIterator<Item = &'a R>,
    columns: &[Column<R>],
) -> Table {
    Table {
        name,
        title,
        columns: columns.iter().map(|(header, _)| *header).collect(),
        rows: rows.into_iter().map(|r| columns.iter().map(|(_, cell)| cell(r)).collect()).collect(),
    }
}

/// A row that stands at a [`Position`]: an estimate, or a group of what it is estimated from.
pub(crate) trait Positioned {
    /// The row's position.
    fn position(&self) -> &Position;
}

/// The columns of a row's position (`model`, `environment`, `arm`, `cell`, `role`), then
/// `rest`.
pub(crate) fn positioned<R: Positioned>(rest: &[Column<R>]) -> Vec<Column<R>> {
    let at: [Column<R>; 5] = [
        ("model", |r| r.position().model.clone()),
        ("environment", |r| r.position().environment.clone()),
        ("arm", |r| r.position().arm.clone()),
        ("cell", |r| r.position().cell.clone()),
        ("role", |r| r.position().role.clone()),
    ];
    at.into_iter().chain(rest.iter().copied()).collect()
}

/// A position of the tests: model `m`, environment `prisoners-dilemma`, arm `baseline`, role
/// `player`.
#[cfg(test)]
pub(crate) fn at(cell: &str) -> Position {
    let (model, environment, arm, role) = ("m".into(), "prisoners-dilemma".into(), "baseline".into(), "player".into());
    Position { model, environment, arm, cell: cell.into(), role }
}

/// A position's cells in a Markdown table's row: `model | environment | arm | cell | role`.
pub(crate) fn position_cells(p: &Position) -> String {
    [&p.model, &p.environment, &p.arm, &p.cell, &p.role].map(String::as_str).join(" | ")
}

/// A number's cell: six decimals; empty where there is none or it is not finite.
pub(crate) fn num(x: Option<f64>) -> String {
    x.filter(|v| v.is_finite()).map_or_else(String::new, |v| format!("{v:.6}"))
}

/// A count's cell: empty where there is none.
pub(crate) fn count<T: ToString>(x: Option<T>) -> String {
    x.map_or_else(String::new, |n| n.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_states_its_header_and_its_cell() {
        let rows = [(1, Some(0.5)), (2, None), (3, Some(f64::NAN))];
        let t = of_rows("t", "T", &rows, &[("n", |r| r.0.to_string()), ("x", |r| num(r.1))]);
        assert_eq!(t.columns, ["n", "x"]);
        assert_eq!(t.rows, [["1", "0.500000"], ["2", ""], ["3", ""]]);
        assert_eq!(count(Some(4usize)), "4");
        assert_eq!(count(None::<usize>), "");
    }
}
