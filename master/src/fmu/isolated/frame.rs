//! Framing: `[u32 length][bytes]`, on a pipe (the handshake) and as entries of a batch.

use super::codec::MAX_FRAME;
use std::io::{Read, Write};

/// Writes one frame and flushes.
pub(super) fn write_frame(w: &mut impl Write, body: &[u8]) -> std::io::Result<()> {
    let n = u32::try_from(body.len()).map_err(|_| std::io::Error::other("message too large"))?;
    w.write_all(&n.to_le_bytes())?;
    w.write_all(body)?;
    w.flush()
}

/// Reads one frame into `buf`; `Ok(false)` on a clean end of stream before a frame.
pub(super) fn read_frame(r: &mut impl Read, buf: &mut Vec<u8>) -> std::io::Result<bool> {
    let mut len = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match r.read(&mut len[got..]) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let n = u32::from_le_bytes(len) as usize;
    if n > MAX_FRAME {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("a message of {n} bytes, more than the protocol's limit of {MAX_FRAME} bytes"),
        ));
    }
    buf.clear();
    buf.resize(n, 0);
    r.read_exact(buf)?;
    Ok(true)
}

/// The next `[u32 length][bytes]` entry of `buf` at `*at`: its bytes' range; advances `*at`.
pub(super) fn next_entry(buf: &[u8], at: &mut usize) -> Option<std::ops::Range<usize>> {
    let len = buf.get(*at..*at + 4)?;
    let n = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
    let range = *at + 4..*at + 4 + n;
    if range.end > buf.len() {
        return None;
    }
    *at = range.end;
    Some(range)
}

/// Appends `bytes` to `buf` as a `[u32 length][bytes]` entry.
pub(super) fn push_entry(buf: &mut Vec<u8>, bytes: &[u8]) {
    framed(buf, |b| b.extend_from_slice(bytes));
}

/// Appends a `[u32 length][bytes]` entry to `buf` whose bytes `write` appends; returns what
/// `write` returns.
pub(super) fn framed<R>(buf: &mut Vec<u8>, write: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    let at = buf.len();
    buf.extend_from_slice(&[0; 4]);
    let r = write(buf);
    let len = (buf.len() - at - 4) as u32;
    buf[at..at + 4].copy_from_slice(&len.to_le_bytes());
    r
}
