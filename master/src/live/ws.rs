//! The pieces of WebSocket (RFC 6455) a dashboard server needs, written out rather than taken
//! from a crate (a crate such as `tungstenite` brings its own HTTP and TLS layers): the opening
//! handshake's `Sec-WebSocket-Accept` (SHA-1, FIPS 180-4, and base64, RFC 4648) and frames
//! (§5: masked from the client, unmasked to it; text, close, ping, pong).

use std::io::{Read, Write};

/// The GUID of RFC 6455 §1.3, appended to the client's key.
const GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// SHA-1 of `data` (FIPS 180-4 §6.1).
pub fn sha1(data: &[u8]) -> [u8; 20] {
    let mut h: [u32; 5] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0];
    let mut msg = data.to_vec();
    let bits = (data.len() as u64).wrapping_mul(8);
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&bits.to_be_bytes());
    for block in msg.chunks_exact(64) {
        let mut w = [0u32; 80];
        for (i, word) in block.chunks_exact(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..80 {
            w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = h;
        for (i, wi) in w.iter().enumerate() {
            let (f, k) = match i {
                0..=19 => ((b & c) | (!b & d), 0x5A82_7999),
                20..=39 => (b ^ c ^ d, 0x6ED9_EBA1),
                40..=59 => ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC),
                _ => (b ^ c ^ d, 0xCA62_C1D6),
            };
            let temp = a.rotate_left(5).wrapping_add(f).wrapping_add(e).wrapping_add(k).wrapping_add(*wi);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = temp;
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e]) {
            *x = x.wrapping_add(y);
        }
    }
    let mut out = [0u8; 20];
    for (i, x) in h.iter().enumerate() {
        out[4 * i..4 * i + 4].copy_from_slice(&x.to_be_bytes());
    }
    out
}

/// Base64 with padding (RFC 4648 §4).
pub fn base64(data: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `Sec-WebSocket-Accept` for a client's `Sec-WebSocket-Key` (RFC 6455 §4.2.2).
pub fn accept_key(key: &str) -> String {
    base64(&sha1(format!("{}{GUID}", key.trim()).as_bytes()))
}

/// A frame received.
#[derive(Debug, PartialEq)]
pub enum Frame {
    /// A text message (UTF-8 checked by the caller).
    Text(Vec<u8>),
    /// A binary message (refused by the dashboard protocol).
    Binary,
    /// Ping with its payload (answered with a pong).
    Ping(Vec<u8>),
    /// Pong (ignored).
    Pong,
    /// Close.
    Close,
}

/// Why a frame could not be read.
#[derive(Debug)]
pub enum FrameError {
    /// The connection failed or ended (or the read timed out: `WouldBlock`/`TimedOut`).
    Io(std::io::Error),
    /// A frame the protocol does not allow (unmasked, fragmented control frame, reserved bits,
    /// unknown opcode) — RFC 6455 close code 1002.
    Protocol(&'static str),
    /// A payload larger than allowed — close code 1009.
    TooBig(u64),
}

/// Reads one frame whose payload is at most `limit` bytes. Fragmented messages are refused
/// (a browser sends a dashboard's short messages in one frame).
pub fn read_frame(r: &mut impl Read, limit: u64) -> Result<Frame, FrameError> {
    let mut head = [0u8; 2];
    r.read_exact(&mut head).map_err(FrameError::Io)?;
    let fin = head[0] & 0x80 != 0;
    if head[0] & 0x70 != 0 {
        return Err(FrameError::Protocol("reserved bits set"));
    }
    let opcode = head[0] & 0x0F;
    if head[1] & 0x80 == 0 {
        return Err(FrameError::Protocol("a client frame must be masked"));
    }
    let len = match head[1] & 0x7F {
        126 => {
            let mut b = [0u8; 2];
            r.read_exact(&mut b).map_err(FrameError::Io)?;
            u64::from(u16::from_be_bytes(b))
        }
        127 => {
            let mut b = [0u8; 8];
            r.read_exact(&mut b).map_err(FrameError::Io)?;
            u64::from_be_bytes(b)
        }
        n => u64::from(n),
    };
    if len > limit {
        return Err(FrameError::TooBig(len));
    }
    let mut mask = [0u8; 4];
    r.read_exact(&mut mask).map_err(FrameError::Io)?;
    let mut payload = vec![0u8; len as usize];
    r.read_exact(&mut payload).map_err(FrameError::Io)?;
    for (i, b) in payload.iter_mut().enumerate() {
        *b ^= mask[i % 4];
    }
    if !fin || opcode == 0 {
        return Err(FrameError::Protocol("fragmented messages are not accepted"));
    }
    match opcode {
        1 => Ok(Frame::Text(payload)),
        2 => Ok(Frame::Binary),
        8 => Ok(Frame::Close),
        9 => Ok(Frame::Ping(payload)),
        10 => Ok(Frame::Pong),
        _ => Err(FrameError::Protocol("unknown opcode")),
    }
}

/// Writes one unmasked server frame (`opcode` 1 text, 8 close, 10 pong).
pub fn write_frame(w: &mut impl Write, opcode: u8, payload: &[u8]) -> std::io::Result<()> {
    let mut head = Vec::with_capacity(10);
    head.push(0x80 | opcode);
    match payload.len() {
        n if n < 126 => head.push(n as u8),
        n if n <= 0xFFFF => {
            head.push(126);
            head.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            head.push(127);
            head.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    head.extend_from_slice(payload);
    w.write_all(&head)
}

/// A close frame with a status code (RFC 6455 §7.4) and reason.
pub fn write_close(w: &mut impl Write, code: u16, reason: &str) -> std::io::Result<()> {
    let mut p = code.to_be_bytes().to_vec();
    p.extend_from_slice(&reason.as_bytes()[..reason.len().min(120)]);
    write_frame(w, 8, &p)
}

/// A masked client frame (for tests and tools talking to the server).
pub fn client_frame(opcode: u8, payload: &[u8], mask: [u8; 4]) -> Vec<u8> {
    let mut f = vec![0x80 | opcode];
    match payload.len() {
        n if n < 126 => f.push(0x80 | n as u8),
        n if n <= 0xFFFF => {
            f.push(0x80 | 126);
            f.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            f.push(0x80 | 127);
            f.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    f.extend_from_slice(&mask);
    f.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    f
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn sha1_matches_the_fips_180_examples() {
        assert_eq!(hex(&sha1(b"abc")), "a9993e364706816aba3e25717850c26c9cd0d89d");
        assert_eq!(
            hex(&sha1(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1"
        );
        assert_eq!(hex(&sha1(b"")), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
        assert_eq!(hex(&sha1(&vec![b'a'; 1_000_000])), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
    }

    #[test]
    fn base64_matches_rfc_4648() {
        for (i, o) in
            [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("foobar", "Zm9vYmFy")]
        {
            assert_eq!(base64(i.as_bytes()), o);
        }
    }

    #[test]
    fn the_accept_key_is_rfc_6455s_example() {
        assert_eq!(accept_key("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
    }

    #[test]
    fn frames_round_trip_and_limits_hold() {
        let f = client_frame(1, b"{\"set\":1}", [1, 2, 3, 4]);
        assert_eq!(read_frame(&mut &f[..], 100).unwrap(), Frame::Text(b"{\"set\":1}".to_vec()));
        let big = client_frame(1, &vec![b'x'; 70_000], [9, 9, 9, 9]);
        assert!(matches!(read_frame(&mut &big[..], 65_536), Err(FrameError::TooBig(70_000))));
        let mut unmasked = Vec::new();
        write_frame(&mut unmasked, 1, b"hi").unwrap();
        assert!(matches!(read_frame(&mut &unmasked[..], 100), Err(FrameError::Protocol(_))));
    }
}
