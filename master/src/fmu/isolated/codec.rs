//! The protocol's byte codec: scalars, slices and strings in a frame body (see the
//! [module documentation](super) for the layout), and the response tags.

use crate::fmu::shm;

/// Largest frame accepted (a garbled length must not make either side allocate gigabytes):
/// the shared buffers' size. The model description does not cross (the master reads it from the
/// extraction), so this bounds only the values of one batch.
pub(super) const MAX_FRAME: usize = shm::CAPACITY;

pub(super) const TAG_OK: u8 = 0;
pub(super) const TAG_CALL_ERROR: u8 = 1;
pub(super) const TAG_OTHER_ERROR: u8 = 2;

/// A decoded response header.
pub(super) enum Reply {
    Ok,
    Call { time: f64, status: String, last_log: String },
    Other(String),
    Garbled(String),
}

/// Appends protocol values to a frame body.
pub(super) struct Enc<'a>(pub(super) &'a mut Vec<u8>);

impl Enc<'_> {
    pub(super) fn u8(&mut self, x: u8) -> &mut Self {
        self.0.push(x);
        self
    }
    pub(super) fn u32(&mut self, x: u32) -> &mut Self {
        self.0.extend_from_slice(&x.to_le_bytes());
        self
    }
    pub(super) fn i32(&mut self, x: i32) -> &mut Self {
        self.0.extend_from_slice(&x.to_le_bytes());
        self
    }
    pub(super) fn f64(&mut self, x: f64) -> &mut Self {
        self.0.extend_from_slice(&x.to_le_bytes());
        self
    }
    pub(super) fn len(&mut self, n: usize) -> &mut Self {
        self.u32(u32::try_from(n).unwrap_or(u32::MAX))
    }
    pub(super) fn str(&mut self, s: &str) -> &mut Self {
        self.len(s.len());
        self.0.extend_from_slice(s.as_bytes());
        self
    }
    pub(super) fn u32s(&mut self, v: &[u32]) -> &mut Self {
        self.len(v.len());
        v.iter().for_each(|x| self.0.extend_from_slice(&x.to_le_bytes()));
        self
    }
    pub(super) fn i64s(&mut self, v: &[i64]) -> &mut Self {
        self.len(v.len());
        v.iter().for_each(|x| self.0.extend_from_slice(&x.to_le_bytes()));
        self
    }
    pub(super) fn u64s(&mut self, v: &[u64]) -> &mut Self {
        self.len(v.len());
        v.iter().for_each(|x| self.0.extend_from_slice(&x.to_le_bytes()));
        self
    }
    pub(super) fn f64s(&mut self, v: &[f64]) -> &mut Self {
        self.len(v.len());
        v.iter().for_each(|x| self.0.extend_from_slice(&x.to_le_bytes()));
        self
    }
    pub(super) fn bools(&mut self, v: &[bool]) -> &mut Self {
        self.len(v.len());
        self.0.extend(v.iter().map(|b| u8::from(*b)));
        self
    }
    /// Byte strings (Binary values), each with its length.
    pub(super) fn blobs<S: AsRef<[u8]>>(&mut self, v: &[S]) -> &mut Self {
        self.len(v.len());
        for b in v {
            let b = b.as_ref();
            self.len(b.len());
            self.0.extend_from_slice(b);
        }
        self
    }
    pub(super) fn strs<S: AsRef<str>>(&mut self, v: &[S]) -> &mut Self {
        self.len(v.len());
        for s in v {
            self.str(s.as_ref());
        }
        self
    }
}

/// Reads protocol values from a frame body; every error is a protocol error message.
pub(super) struct Dec<'a>(pub(super) &'a [u8]);

pub(super) type DecResult<T> = std::result::Result<T, String>;

impl<'a> Dec<'a> {
    pub(super) fn take(&mut self, n: usize) -> DecResult<&'a [u8]> {
        if self.0.len() < n {
            return Err(format!("message truncated: {n} bytes wanted, {} left", self.0.len()));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    pub(super) fn array<const N: usize>(&mut self) -> DecResult<[u8; N]> {
        let mut a = [0; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    pub(super) fn u8(&mut self) -> DecResult<u8> {
        Ok(self.array::<1>()?[0])
    }
    pub(super) fn u32(&mut self) -> DecResult<u32> {
        self.array().map(u32::from_le_bytes)
    }
    pub(super) fn i32(&mut self) -> DecResult<i32> {
        self.array().map(i32::from_le_bytes)
    }
    pub(super) fn f64(&mut self) -> DecResult<f64> {
        self.array().map(f64::from_le_bytes)
    }
    /// A count of elements of `size` bytes each, checked against the bytes left.
    pub(super) fn count(&mut self, size: usize) -> DecResult<usize> {
        let n = self.u32()? as usize;
        if n.saturating_mul(size) > self.0.len() {
            return Err(format!("count {n} exceeds the message"));
        }
        Ok(n)
    }
    pub(super) fn str(&mut self) -> DecResult<String> {
        let n = self.count(1)?;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| "string is not UTF-8".to_owned())
    }
    pub(super) fn u32s(&mut self, out: &mut Vec<u32>) -> DecResult<()> {
        let n = self.count(4)?;
        out.clear();
        for _ in 0..n {
            out.push(self.u32()?);
        }
        Ok(())
    }
    pub(super) fn i64s(&mut self, out: &mut Vec<i64>) -> DecResult<()> {
        let n = self.count(8)?;
        out.clear();
        for _ in 0..n {
            out.push(i64::from_le_bytes(self.array()?));
        }
        Ok(())
    }
    pub(super) fn u64s(&mut self, out: &mut Vec<u64>) -> DecResult<()> {
        let n = self.count(8)?;
        out.clear();
        for _ in 0..n {
            out.push(u64::from_le_bytes(self.array()?));
        }
        Ok(())
    }
    pub(super) fn f64s(&mut self, out: &mut Vec<f64>) -> DecResult<()> {
        let n = self.count(8)?;
        out.clear();
        for _ in 0..n {
            out.push(self.f64()?);
        }
        Ok(())
    }
    pub(super) fn bools(&mut self, out: &mut Vec<bool>) -> DecResult<()> {
        let n = self.count(1)?;
        out.clear();
        for _ in 0..n {
            out.push(self.u8()? != 0);
        }
        Ok(())
    }
    pub(super) fn strs(&mut self) -> DecResult<Vec<String>> {
        let n = self.count(4)?;
        (0..n).map(|_| self.str()).collect()
    }
    /// Byte strings written by [`Enc::blobs`] into `out` (grown as needed, the buffers reused).
    pub(super) fn blobs(&mut self, out: &mut Vec<Vec<u8>>) -> DecResult<()> {
        let n = self.count(4)?;
        out.resize_with(n, Vec::new);
        self.blobs_into(out)
    }
    /// Exactly `out.len()` byte strings into `out`'s buffers.
    pub(super) fn blobs_into(&mut self, out: &mut [Vec<u8>]) -> DecResult<()> {
        for o in out {
            let m = self.count(1)?;
            o.clear();
            o.extend_from_slice(self.take(m)?);
        }
        Ok(())
    }
    /// Fills `out` exactly (a response must have as many values as asked for).
    pub(super) fn f64s_into(&mut self, out: &mut [f64]) -> DecResult<()> {
        let n = self.count(8)?;
        if n != out.len() {
            return Err(format!("{n} values returned for {} requested", out.len()));
        }
        out.iter_mut().try_for_each(|o| self.f64().map(|x| *o = x))
    }
    pub(super) fn i64s_into(&mut self, out: &mut [i64]) -> DecResult<()> {
        let n = self.count(8)?;
        if n != out.len() {
            return Err(format!("{n} values returned for {} requested", out.len()));
        }
        out.iter_mut().try_for_each(|o| self.array().map(|x| *o = i64::from_le_bytes(x)))
    }
    pub(super) fn u64s_into(&mut self, out: &mut [u64]) -> DecResult<()> {
        let n = self.count(8)?;
        if n != out.len() {
            return Err(format!("{n} values returned for {} requested", out.len()));
        }
        out.iter_mut().try_for_each(|o| self.array().map(|x| *o = u64::from_le_bytes(x)))
    }
    pub(super) fn bools_into(&mut self, out: &mut [bool]) -> DecResult<()> {
        let n = self.count(1)?;
        if n != out.len() {
            return Err(format!("{n} values returned for {} requested", out.len()));
        }
        out.iter_mut().try_for_each(|o| self.u8().map(|x| *o = x != 0))
    }
}
