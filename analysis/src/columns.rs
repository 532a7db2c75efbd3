//! Table columns generated from a row type: the row is serialised (serde) into its fields, in
//! declaration order, each a [`Cell`].
//!
//! A small serde serializer rather than `serde_json::Value`, for two reasons: a JSON object
//! does not keep field order unless serde_json's `preserve_order` feature is on, and JSON has
//! no NaN (a NaN becomes `null`, indistinguishable from an absent value, while the tables write
//! `NaN` and `-` respectively).

use serde::ser::{self, Impossible, Serialize, SerializeStruct};

use crate::common::fmt;

/// One serialised field.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Cell {
    Text(String),
    Int(i64),
    UInt(u64),
    Float(f64),
    Bool(bool),
    /// `None` or a unit.
    Absent,
    /// A struct's fields.
    Record(Vec<(&'static str, Cell)>),
    /// A sequence, tuple or map: written only by a custom cell.
    Compound,
}

impl Cell {
    /// The text the tables write for a scalar: strings as they are, integers in full, numbers as
    /// [`fmt`] writes them (`NaN` for NaN), absent values `-`, booleans `yes`/`no`. `None` for a
    /// record or a compound, which need a custom cell.
    pub(crate) fn text(&self) -> Option<String> {
        match self {
            Cell::Text(s) => Some(s.clone()),
            Cell::Int(i) => Some(i.to_string()),
            Cell::UInt(u) => Some(u.to_string()),
            Cell::Float(x) => Some(fmt(Some(*x))),
            Cell::Bool(b) => Some(if *b { "yes" } else { "no" }.to_string()),
            Cell::Absent => Some(fmt(None)),
            Cell::Record(_) | Cell::Compound => None,
        }
    }
}

/// The fields of a struct, in declaration order (with `#[serde]` renames and skips applied).
/// Empty for a value that does not serialise as a struct.
pub(crate) fn fields<R: Serialize>(row: &R) -> Vec<(&'static str, Cell)> {
    match row.serialize(CellSerializer) {
        Ok(Cell::Record(f)) => f,
        _ => Vec::new(),
    }
}

/// Why a value was not serialised into a [`Cell`]: it is a compound (or bytes).
#[derive(Debug)]
pub(crate) struct Unsupported;

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("not a scalar or a struct")
    }
}

impl std::error::Error for Unsupported {}

impl ser::Error for Unsupported {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        Unsupported
    }
}

struct CellSerializer;

/// Collects a struct's fields; a field that is not a scalar or a struct becomes
/// [`Cell::Compound`].
struct RecordSerializer(Vec<(&'static str, Cell)>);

impl SerializeStruct for RecordSerializer {
    type Ok = Cell;
    type Error = Unsupported;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> Result<(), Unsupported> {
        self.0.push((key, value.serialize(CellSerializer).unwrap_or(Cell::Compound)));
        Ok(())
    }
    fn skip_field(&mut self, _: &'static str) -> Result<(), Unsupported> {
        Ok(())
    }
    fn end(self) -> Result<Cell, Unsupported> {
        Ok(Cell::Record(self.0))
    }
}

type Result<T, E = Unsupported> = std::result::Result<T, E>;

/// Each scalar method makes its cell of the value (widened to the cell's type).
macro_rules! scalars {
    ($($method:ident: $t:ty => $cell:expr;)*) => {
        $(fn $method(self, v: $t) -> Result<Cell> {
            Ok($cell(v))
        })*
    };
}

impl ser::Serializer for CellSerializer {
    type Ok = Cell;
    type Error = Unsupported;
    type SerializeSeq = Impossible<Cell, Unsupported>;
    type SerializeTuple = Impossible<Cell, Unsupported>;
    type SerializeTupleStruct = Impossible<Cell, Unsupported>;
    type SerializeTupleVariant = Impossible<Cell, Unsupported>;
    type SerializeMap = Impossible<Cell, Unsupported>;
    type SerializeStruct = RecordSerializer;
    type SerializeStructVariant = Impossible<Cell, Unsupported>;

    scalars! {
        serialize_bool: bool => Cell::Bool;
        serialize_i8: i8 => |v: i8| Cell::Int(v.into());
        serialize_i16: i16 => |v: i16| Cell::Int(v.into());
        serialize_i32: i32 => |v: i32| Cell::Int(v.into());
        serialize_i64: i64 => Cell::Int;
        serialize_u8: u8 => |v: u8| Cell::UInt(v.into());
        serialize_u16: u16 => |v: u16| Cell::UInt(v.into());
        serialize_u32: u32 => |v: u32| Cell::UInt(v.into());
        serialize_u64: u64 => Cell::UInt;
        serialize_f32: f32 => |v: f32| Cell::Float(v.into());
        serialize_f64: f64 => Cell::Float;
        serialize_char: char => |v: char| Cell::Text(v.to_string());
        serialize_str: &str => |v: &str| Cell::Text(v.to_string());
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<Cell> {
        Err(Unsupported)
    }
    fn serialize_none(self) -> Result<Cell> {
        Ok(Cell::Absent)
    }
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<Cell> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Cell> {
        Ok(Cell::Absent)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<Cell> {
        Ok(Cell::Absent)
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<Cell> {
        Ok(Cell::Text(variant.to_string()))
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _: &'static str, value: &T) -> Result<Cell> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<Cell> {
        Err(Unsupported)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq> {
        Err(Unsupported)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple> {
        Err(Unsupported)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct> {
        Err(Unsupported)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant> {
        Err(Unsupported)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap> {
        Err(Unsupported)
    }
    fn serialize_struct(self, _: &'static str, len: usize) -> Result<RecordSerializer> {
        Ok(RecordSerializer(Vec::with_capacity(len)))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant> {
        Err(Unsupported)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;

    #[derive(Serialize)]
    struct Row {
        name: String,
        runs: usize,
        delta: i32,
        x: f64,
        missing: Option<f64>,
        present: Option<f64>,
        ok: bool,
        pairs: Vec<(f64, f64)>,
        inner: Inner,
        #[serde(skip)]
        _hidden: u8,
    }

    #[derive(Serialize)]
    struct Inner {
        low: f64,
    }

    #[test]
    fn fields_come_in_declaration_order_with_nan_and_absence_kept_apart() {
        let row = Row {
            name: "a|b".into(),
            runs: 7,
            delta: -2,
            x: f64::NAN,
            missing: None,
            present: Some(0.00042),
            ok: true,
            pairs: vec![(1.0, 2.0)],
            inner: Inner { low: 0.25 },
            _hidden: 1,
        };
        let f = fields(&row);
        let names: Vec<&str> = f.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["name", "runs", "delta", "x", "missing", "present", "ok", "pairs", "inner"]);
        let text: Vec<Option<String>> = f.iter().map(|(_, c)| c.text()).collect();
        assert_eq!(
            text,
            [
                Some("a|b".to_string()),
                Some("7".into()),
                Some("-2".into()),
                Some("NaN".into()),
                Some("-".into()),
                Some("4.20e-4".into()),
                Some("yes".into()),
                None,
                None
            ]
        );
        assert_eq!(f[7].1, Cell::Compound);
        assert_eq!(f[8].1, Cell::Record(vec![("low", Cell::Float(0.25))]));
    }

    #[test]
    fn a_value_that_is_not_a_struct_has_no_fields() {
        assert!(fields(&("m".to_string(), 0.1, 0.0, 0.2)).is_empty());
        assert!(fields(&0.5).is_empty());
    }
}
