//! The value model of the FMU layer, the same for every FMI version and interface: a variable's
//! [`ValueType`] (every FMI 3.0 type; an FMI 2.0 variable is one of them: Real = Float64,
//! Integer = Int32, Enumeration, Boolean, String), its [`Shape`] (scalar, fixed-size array, or an
//! array sized by structural parameters) and one owned [`Value`].
//!
//! How the values travel through [`super::Call`] (no per-value dispatch, one typed slice per
//! call): Float64 and Float32 as `f64` (exact: every `f32` is an `f64`); Int8…Int64, UInt8…UInt32
//! and Enumeration as `i64`, UInt64 as `u64` (exact: the carrier holds the type's whole range);
//! Boolean as `bool`; String as `String`; Binary as bytes; Clock as `bool` (issue 52).

use model_description::{BaseType, Type3};
use std::fmt;

/// The type of a variable's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ValueType {
    /// FMI 3.0 `Float32`.
    Float32,
    /// FMI 3.0 `Float64`, FMI 2.0 `Real`.
    Float64,
    /// FMI 3.0 `Int8`.
    Int8,
    /// FMI 3.0 `UInt8`.
    UInt8,
    /// FMI 3.0 `Int16`.
    Int16,
    /// FMI 3.0 `UInt16`.
    UInt16,
    /// FMI 3.0 `Int32`, FMI 2.0 `Integer`.
    Int32,
    /// FMI 3.0 `UInt32`.
    UInt32,
    /// FMI 3.0 `Int64`.
    Int64,
    /// FMI 3.0 `UInt64`.
    UInt64,
    /// `Enumeration` (FMI 2.0: an `fmi2Integer`; FMI 3.0: an `fmi3Int64`).
    Enumeration,
    /// `Boolean`.
    Boolean,
    /// `String`.
    String,
    /// FMI 3.0 `Binary` (a byte string).
    Binary,
    /// FMI 3.0 `Clock` (ticking or not; issue 52 runs clocks).
    Clock,
}

/// How a value travels through [`super::Call`]: the carrier of a [`ValueType`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carrier {
    /// `f64` ([`super::Call::GetFloat64`]).
    Float,
    /// `i64` ([`super::Call::GetInt64`]).
    Int,
    /// `u64` ([`super::Call::GetUInt64`]).
    UInt,
    /// `bool`.
    Boolean,
    /// `String`.
    String,
    /// Bytes.
    Binary,
    /// A clock's tick.
    Clock,
}

impl ValueType {
    /// The FMI 3.0 type of `t`.
    pub fn of3(t: Type3) -> Self {
        match t {
            Type3::Float64 => Self::Float64,
            Type3::Float32 => Self::Float32,
            Type3::Int8 => Self::Int8,
            Type3::UInt8 => Self::UInt8,
            Type3::Int16 => Self::Int16,
            Type3::UInt16 => Self::UInt16,
            Type3::Int32 => Self::Int32,
            Type3::UInt32 => Self::UInt32,
            Type3::Int64 => Self::Int64,
            Type3::UInt64 => Self::UInt64,
            Type3::Enumeration => Self::Enumeration,
            Type3::Boolean => Self::Boolean,
            Type3::String => Self::String,
            Type3::Binary => Self::Binary,
            Type3::Clock => Self::Clock,
        }
    }

    /// The type of an FMI 2.0 variable of base type `t`.
    pub fn of2(t: BaseType) -> Self {
        match t {
            BaseType::Real => Self::Float64,
            BaseType::Integer => Self::Int32,
            BaseType::Enumeration => Self::Enumeration,
            BaseType::Boolean => Self::Boolean,
            BaseType::String => Self::String,
            BaseType::Binary => Self::Binary,
        }
    }

    /// The name (the FMI 3.0 element name; `fmi3Get<name>`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Float32 => "Float32",
            Self::Float64 => "Float64",
            Self::Int8 => "Int8",
            Self::UInt8 => "UInt8",
            Self::Int16 => "Int16",
            Self::UInt16 => "UInt16",
            Self::Int32 => "Int32",
            Self::UInt32 => "UInt32",
            Self::Int64 => "Int64",
            Self::UInt64 => "UInt64",
            Self::Enumeration => "Enumeration",
            Self::Boolean => "Boolean",
            Self::String => "String",
            Self::Binary => "Binary",
            Self::Clock => "Clock",
        }
    }

    /// `fmi3Set<Type>` of this type (named in errors).
    pub fn fmi3_setter(self) -> &'static str {
        match self {
            Self::Float32 => "fmi3SetFloat32",
            Self::Float64 => "fmi3SetFloat64",
            Self::Int8 => "fmi3SetInt8",
            Self::UInt8 => "fmi3SetUInt8",
            Self::Int16 => "fmi3SetInt16",
            Self::UInt16 => "fmi3SetUInt16",
            Self::Int32 => "fmi3SetInt32",
            Self::UInt32 => "fmi3SetUInt32",
            Self::Int64 | Self::Enumeration => "fmi3SetInt64",
            Self::UInt64 => "fmi3SetUInt64",
            Self::Boolean => "fmi3SetBoolean",
            Self::String => "fmi3SetString",
            Self::Binary => "fmi3SetBinary",
            Self::Clock => "fmi3SetClock",
        }
    }

    /// How its values travel through [`super::Call`].
    pub fn carrier(self) -> Carrier {
        match self {
            Self::Float32 | Self::Float64 => Carrier::Float,
            Self::Int8
            | Self::UInt8
            | Self::Int16
            | Self::UInt16
            | Self::Int32
            | Self::UInt32
            | Self::Int64
            | Self::Enumeration => Carrier::Int,
            Self::UInt64 => Carrier::UInt,
            Self::Boolean => Carrier::Boolean,
            Self::String => Carrier::String,
            Self::Binary => Carrier::Binary,
            Self::Clock => Carrier::Clock,
        }
    }

    /// The range of an integer type, `None` for the others (Enumeration: Int64's).
    pub fn int_range(self) -> Option<(i128, i128)> {
        Some(match self {
            Self::Int8 => (i8::MIN.into(), i8::MAX.into()),
            Self::UInt8 => (0, u8::MAX.into()),
            Self::Int16 => (i16::MIN.into(), i16::MAX.into()),
            Self::UInt16 => (0, u16::MAX.into()),
            Self::Int32 => (i32::MIN.into(), i32::MAX.into()),
            Self::UInt32 => (0, u32::MAX.into()),
            Self::Int64 | Self::Enumeration => (i64::MIN.into(), i64::MAX.into()),
            Self::UInt64 => (0, u64::MAX.into()),
            _ => return None,
        })
    }
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The shape of a variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// One value.
    Scalar,
    /// A fixed-size array (FMI 3.0 `<Dimension start>`): its dimensions. The master addresses
    /// each element as a scalar of its own (`name[i]`, see `model_description::ArrayElement`).
    Fixed(Vec<usize>),
    /// An array sized by structural parameters (`<Dimension valueReference>`): the shape their
    /// values give (`model_description::from_str3_configured`); addressed element by element as
    /// a fixed-size one.
    Structural(Vec<usize>),
}

/// One value of any type, owned.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Float64 or Float32 (a Float32 value is exact as an `f64`).
    Float(f64),
    /// Int8…Int64, UInt8…UInt32, Enumeration.
    Int(i64),
    /// UInt64.
    UInt(u64),
    /// Boolean.
    Boolean(bool),
    /// String.
    String(String),
    /// Binary.
    Binary(Vec<u8>),
    /// A clock's tick.
    Clock(bool),
}

impl Value {
    /// The zero value of carrier `c` (the buffers' initial value).
    pub fn zero(c: Carrier) -> Self {
        match c {
            Carrier::Float => Self::Float(0.0),
            Carrier::Int => Self::Int(0),
            Carrier::UInt => Self::UInt(0),
            Carrier::Boolean => Self::Boolean(false),
            Carrier::String => Self::String(String::new()),
            Carrier::Binary => Self::Binary(Vec::new()),
            Carrier::Clock => Self::Clock(false),
        }
    }

    /// The value as a number for the numeric views of a row (plots, the live dashboard, the
    /// in-memory recorders): integers rounded to the nearest `f64` (exact up to 2^53), a
    /// Boolean 0 or 1, a String or Binary value NaN. Exact values: the [`Value`] itself.
    pub fn as_f64(&self) -> f64 {
        match self {
            Self::Float(x) => *x,
            Self::Int(k) => *k as f64,
            Self::UInt(k) => *k as f64,
            Self::Boolean(b) | Self::Clock(b) => f64::from(u8::from(*b)),
            Self::String(_) | Self::Binary(_) => f64::NAN,
        }
    }

    /// Makes this value a copy of `other`, reusing this one's String or Binary buffer (no
    /// allocation once it has grown to the value's size; a derived `clone_from` of an enum
    /// allocates every time).
    pub fn assign(&mut self, other: &Value) {
        match (&mut *self, other) {
            (Self::Binary(a), Self::Binary(b)) => {
                a.clear();
                a.extend_from_slice(b);
            }
            (Self::String(a), Self::String(b)) => {
                a.clear();
                a.push_str(b);
            }
            (a, b) => *a = b.clone(),
        }
    }

    /// Reads this value of variable `vr` from `instance` in place (a String or Binary buffer is
    /// reused: no allocation once it has grown to the value's size).
    pub fn read(&mut self, instance: &mut dyn super::FmuInstance, vr: u32) -> crate::Result<()> {
        match self {
            Self::Float(x) => instance.get_real(&[vr], std::slice::from_mut(x)),
            Self::Int(k) => instance.get_int64(&[vr], std::slice::from_mut(k)),
            Self::UInt(k) => instance.get_uint64(&[vr], std::slice::from_mut(k)),
            Self::Boolean(b) => instance.get_boolean(&[vr], std::slice::from_mut(b)),
            Self::String(s) => {
                let mut v = instance.get_string(&[vr])?;
                *s = v.pop().unwrap_or_default();
                Ok(())
            }
            Self::Binary(b) => instance.get_binary(&[vr], std::slice::from_mut(b)),
            Self::Clock(b) => instance.execute(super::Call::GetClock { vr: &[vr], out: std::slice::from_mut(b) }),
        }
    }

    /// Sets this value on variable `vr` of `instance`.
    pub fn write(&self, instance: &mut dyn super::FmuInstance, vr: u32) -> crate::Result<()> {
        match self {
            Self::Float(x) => instance.set_real(&[vr], &[*x]),
            Self::Int(k) => instance.set_int64(&[vr], &[*k]),
            Self::UInt(k) => instance.set_uint64(&[vr], &[*k]),
            Self::Boolean(b) => instance.set_boolean(&[vr], &[*b]),
            Self::String(s) => instance.set_string(&[vr], &[s.as_str()]),
            Self::Binary(b) => instance.set_binary(&[vr], &[b.as_slice()]),
            Self::Clock(b) => instance.execute(super::Call::SetClock { vr: &[vr], values: &[*b] }),
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Float(x) => write!(f, "{x}"),
            Self::Int(k) => write!(f, "{k}"),
            Self::UInt(k) => write!(f, "{k}"),
            Self::Boolean(b) | Self::Clock(b) => write!(f, "{b}"),
            Self::String(s) => write!(f, "{s:?}"),
            Self::Binary(b) => {
                let mut s = Vec::with_capacity(2 * b.len());
                model_description::push_hex(&mut s, b);
                f.write_str(&String::from_utf8_lossy(&s))
            }
        }
    }
}

/// The integer `x` as a value of integer type `ty`, or why not (`x` outside its range; `ty` not
/// an integer type).
pub fn integer(ty: ValueType, x: i128) -> Result<Value, String> {
    let Some((lo, hi)) = ty.int_range() else { return Err(format!("{ty} is not an integer type")) };
    if x < lo || x > hi {
        return Err(format!("{x} is outside the range of {ty} ({lo} to {hi})"));
    }
    Ok(match ty {
        ValueType::UInt64 => Value::UInt(x as u64),
        _ => Value::Int(x as i64),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn integers_are_exact_in_their_carrier_and_checked_against_their_type() {
        assert_eq!(integer(ValueType::Int64, 5_000_000_000).unwrap(), Value::Int(5_000_000_000));
        assert_eq!(integer(ValueType::UInt64, (1 << 63) + 1).unwrap(), Value::UInt((1 << 63) + 1));
        assert_eq!(integer(ValueType::Int8, 128).unwrap_err(), "128 is outside the range of Int8 (-128 to 127)");
        assert!(integer(ValueType::UInt32, -1).is_err());
        assert!(integer(ValueType::Float64, 1).is_err());
    }

    #[test]
    fn every_fmi3_type_has_a_carrier() {
        assert_eq!(ValueType::of3(Type3::Float32).carrier(), Carrier::Float);
        assert_eq!(ValueType::of3(Type3::UInt32).carrier(), Carrier::Int);
        assert_eq!(ValueType::of3(Type3::UInt64).carrier(), Carrier::UInt);
        assert_eq!(ValueType::of3(Type3::Clock).carrier(), Carrier::Clock);
        assert_eq!(ValueType::of2(BaseType::Integer), ValueType::Int32);
    }
}
