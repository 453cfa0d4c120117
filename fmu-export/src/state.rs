//! FMU state (de)serialization: one visitor walks the model's fields, so saving and restoring
//! can never disagree about the layout.

use crate::input::InputSignal;

/// Walks every field that makes up a model's state (parameters included). The same method
/// both writes (serialize) and reads (deserialize): see [`crate::CoSimModel::visit_state`].
pub trait StateVisitor {
    /// A real field.
    fn real(&mut self, x: &mut f64);
    /// An integer field.
    fn integer(&mut self, x: &mut i64);
    /// A boolean field.
    fn boolean(&mut self, x: &mut bool);
    /// A string field.
    fn string(&mut self, x: &mut String);

    /// A slice of reals (fixed length, e.g. a state vector).
    fn reals(&mut self, xs: &mut [f64]) {
        for x in xs {
            self.real(x);
        }
    }
    /// An input with its derivatives.
    fn input(&mut self, u: &mut InputSignal) {
        self.real(&mut u.value);
        self.reals(&mut u.derivatives);
    }
    /// A `u32` (counters, enumeration choices).
    fn count(&mut self, x: &mut u32) {
        let mut v = i64::from(*x);
        self.integer(&mut v);
        *x = u32::try_from(v).unwrap_or(u32::MAX);
    }
}

/// Appends fields to a byte buffer (little endian, strings length-prefixed).
#[derive(Debug, Default)]
pub struct Writer {
    /// The bytes written so far.
    pub bytes: Vec<u8>,
}

impl StateVisitor for Writer {
    fn real(&mut self, x: &mut f64) {
        self.bytes.extend_from_slice(&x.to_le_bytes());
    }
    fn integer(&mut self, x: &mut i64) {
        self.bytes.extend_from_slice(&x.to_le_bytes());
    }
    fn boolean(&mut self, x: &mut bool) {
        self.bytes.push(u8::from(*x));
    }
    fn string(&mut self, x: &mut String) {
        let mut n = i64::try_from(x.len()).unwrap_or(i64::MAX);
        self.integer(&mut n);
        self.bytes.extend_from_slice(x.as_bytes());
    }
}

/// Reads fields back; the first problem (truncated data, bad UTF-8) is remembered and every
/// later read leaves its field untouched.
#[derive(Debug)]
pub struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// First problem met, if any.
    pub error: Option<String>,
}

impl<'a> Reader<'a> {
    /// A reader over `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, pos: 0, error: None }
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.bytes.len().saturating_sub(self.pos)
    }

    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        if self.error.is_some() {
            return None;
        }
        let end = self.pos.checked_add(N)?;
        match self.bytes.get(self.pos..end).and_then(|s| <[u8; N]>::try_from(s).ok()) {
            Some(b) => {
                self.pos = end;
                Some(b)
            }
            None => {
                self.error = Some(format!(
                    "serialized state is truncated: needed {N} more bytes at offset {} of {}",
                    self.pos,
                    self.bytes.len()
                ));
                None
            }
        }
    }
}

impl StateVisitor for Reader<'_> {
    fn real(&mut self, x: &mut f64) {
        if let Some(b) = self.take::<8>() {
            *x = f64::from_le_bytes(b);
        }
    }
    fn integer(&mut self, x: &mut i64) {
        if let Some(b) = self.take::<8>() {
            *x = i64::from_le_bytes(b);
        }
    }
    fn boolean(&mut self, x: &mut bool) {
        if let Some([b]) = self.take::<1>() {
            *x = b != 0;
        }
    }
    fn string(&mut self, x: &mut String) {
        let mut n = 0i64;
        self.integer(&mut n);
        if self.error.is_some() {
            return;
        }
        let Some(end) = usize::try_from(n).ok().and_then(|n| self.pos.checked_add(n)) else {
            self.error = Some(format!("serialized state has a bad string length {n}"));
            return;
        };
        match self.bytes.get(self.pos..end).map(std::str::from_utf8) {
            Some(Ok(s)) => {
                *x = s.to_owned();
                self.pos = end;
            }
            Some(Err(_)) => self.error = Some("serialized state holds a string that is not UTF-8".into()),
            None => self.error = Some(format!("serialized state is truncated inside a string of {n} bytes")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn visit(v: &mut dyn StateVisitor, a: &mut f64, b: &mut i64, c: &mut bool, d: &mut String, u: &mut InputSignal) {
        v.real(a);
        v.integer(b);
        v.boolean(c);
        v.string(d);
        v.input(u);
    }

    #[test]
    fn round_trip_is_bit_exact() {
        let (mut a, mut b, mut c, mut d) = (0.1 + 0.2, -7i64, true, String::from("κ₀"));
        let mut u = InputSignal { value: f64::MIN_POSITIVE, derivatives: [1e-300, -0.0, 3.0, f64::NAN] };
        let mut w = Writer::default();
        visit(&mut w, &mut a, &mut b, &mut c, &mut d, &mut u);
        let (mut a2, mut b2, mut c2, mut d2, mut u2) = (0.0, 0, false, String::new(), InputSignal::default());
        let mut r = Reader::new(&w.bytes);
        visit(&mut r, &mut a2, &mut b2, &mut c2, &mut d2, &mut u2);
        assert!(r.error.is_none());
        assert_eq!(r.remaining(), 0);
        assert_eq!(a.to_bits(), a2.to_bits());
        assert_eq!((b, c, &d), (b2, c2, &d2));
        for (x, y) in u.derivatives.iter().zip(u2.derivatives) {
            assert_eq!(x.to_bits(), y.to_bits());
        }
    }

    #[test]
    fn truncated_data_is_reported_not_panicking() {
        let mut w = Writer::default();
        w.string(&mut String::from("hello"));
        let cut = &w.bytes[..w.bytes.len() - 2];
        let mut r = Reader::new(cut);
        let mut s = String::new();
        r.string(&mut s);
        assert!(r.error.as_deref().unwrap_or("").contains("truncated"));
        let mut x = 1.5;
        r.real(&mut x);
        assert_eq!(x, 1.5);
    }
}
