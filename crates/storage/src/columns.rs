//! How domain values that diesel cannot read by itself come out of a column,
//! in one place. Records name these with `#[diesel(deserialize_as = …)]`:
//!
//! - ids (`tributary_domain::ids`) read as `i64` and convert with `From<i64>`;
//! - states and kinds (every `wire_enum!`) read as `String` and convert with
//!   `TryFrom<String>` (an unknown value is an error, not a default);
//! - exact decimals read through [`DecimalText`], nullable ids through
//!   [`NullableId`], nullable states through [`NullableText`].
//!
//! Binding goes the other way through `id.get()`, `state.as_str()` and
//! `decimal.to_string()`: diesel's column traits cannot be implemented here for
//! types of another crate (the orphan rule), and `domain` stays free of diesel.

use diesel::backend::Backend;
use diesel::deserialize::{FromSql, Queryable};
use diesel::sql_types::Text;
use tributary_domain::money::{Decimal, DecimalParseError, parse_decimal};

/// A decimal stored as canonical text (never REAL/NUMERIC, which diesel would
/// read through `f64`): `#[diesel(deserialize_as = DecimalText)] amount: Decimal`.
#[derive(Debug)]
pub struct DecimalText(String);

impl<DB> Queryable<Text, DB> for DecimalText
where
    DB: Backend,
    String: FromSql<Text, DB>,
{
    type Row = String;
    fn build(text: String) -> diesel::deserialize::Result<Self> {
        Ok(Self(text))
    }
}

impl TryFrom<DecimalText> for Decimal {
    type Error = DecimalParseError;
    fn try_from(text: DecimalText) -> Result<Self, DecimalParseError> {
        parse_decimal(&text.0)
    }
}

/// The nullable form: `#[diesel(deserialize_as = OptionalDecimalText)]`.
#[derive(Debug)]
pub struct OptionalDecimalText(Option<String>);

impl<DB> Queryable<diesel::sql_types::Nullable<Text>, DB> for OptionalDecimalText
where
    DB: Backend,
    Option<String>: FromSql<diesel::sql_types::Nullable<Text>, DB>,
{
    type Row = Option<String>;
    fn build(text: Option<String>) -> diesel::deserialize::Result<Self> {
        Ok(Self(text))
    }
}

impl TryFrom<OptionalDecimalText> for Option<Decimal> {
    type Error = DecimalParseError;
    fn try_from(text: OptionalDecimalText) -> Result<Self, DecimalParseError> {
        text.0.as_deref().map(parse_decimal).transpose()
    }
}

/// A nullable id column: `#[diesel(deserialize_as = NullableId)] app_id: Option<AppId>`.
#[derive(Debug)]
pub struct NullableId(Option<i64>);

impl<DB> Queryable<diesel::sql_types::Nullable<diesel::sql_types::BigInt>, DB> for NullableId
where
    DB: Backend,
    Option<i64>: FromSql<diesel::sql_types::Nullable<diesel::sql_types::BigInt>, DB>,
{
    type Row = Option<i64>;
    fn build(id: Option<i64>) -> diesel::deserialize::Result<Self> {
        Ok(Self(id))
    }
}

impl<Id: From<i64>> From<NullableId> for Option<Id> {
    fn from(id: NullableId) -> Self {
        id.0.map(Id::from)
    }
}

/// A nullable state or kind column:
/// `#[diesel(deserialize_as = NullableText)] method: Option<PkceMethod>`.
#[derive(Debug)]
pub struct NullableText(Option<String>);

impl<DB> Queryable<diesel::sql_types::Nullable<Text>, DB> for NullableText
where
    DB: Backend,
    Option<String>: FromSql<diesel::sql_types::Nullable<Text>, DB>,
{
    type Row = Option<String>;
    fn build(text: Option<String>) -> diesel::deserialize::Result<Self> {
        Ok(Self(text))
    }
}

impl<State: TryFrom<String>> TryFrom<NullableText> for Option<State> {
    type Error = State::Error;
    fn try_from(text: NullableText) -> Result<Self, State::Error> {
        text.0.map(State::try_from).transpose()
    }
}
