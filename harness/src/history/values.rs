//! A value as both databases take and give it: `Value` to bind (the rows' `values()` list them in the
//! order of `statements`' placeholders), and `Columns` to read, which each store implements for its own
//! row type. The stores differ in how they bind and read a value, not in which.

/// One value to bind. Counts are `i64`, the type both databases store an integer in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    Text(&'a str),
    MaybeText(Option<&'a str>),
    Int(i64),
    MaybeInt(Option<i64>),
    Bool(bool),
    MaybeBool(Option<bool>),
    Real(f64),
    MaybeReal(Option<f64>),
}

/// The columns of a result row, read by index in a store's own types.
pub trait Columns {
    type Error;
    fn text(&self, i: usize) -> Result<String, Self::Error>;
    fn maybe_text(&self, i: usize) -> Result<Option<String>, Self::Error>;
    fn int(&self, i: usize) -> Result<i64, Self::Error>;
    fn maybe_int(&self, i: usize) -> Result<Option<i64>, Self::Error>;
    fn boolean(&self, i: usize) -> Result<bool, Self::Error>;
    fn maybe_boolean(&self, i: usize) -> Result<Option<bool>, Self::Error>;
    fn real(&self, i: usize) -> Result<f64, Self::Error>;
    fn maybe_real(&self, i: usize) -> Result<Option<f64>, Self::Error>;
}
