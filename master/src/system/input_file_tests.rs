//! The input file reader on good and hostile files: line ends, BOM, quoted names, bad numbers,
//! NaN, decreasing times, missing columns, binary garbage, 10⁷ columns, a 2 GB line (generated,
//! never held), a field over the limit.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;

fn all(_: &str) -> bool {
    true
}

fn parse(text: &[u8]) -> std::result::Result<InputTable, CsvError> {
    read(text, None, all)
}

#[test]
fn a_plain_file_gives_its_columns() {
    let t = parse(b"time,u,k\n0,1,2\n0.5,1.5,3\n0.5,2,3\n1,-2.5e-1,true\n").unwrap();
    assert_eq!(t.time_name, "time");
    assert_eq!(t.times, [0.0, 0.5, 0.5, 1.0]);
    assert_eq!(t.names, ["u", "k"]);
    assert_eq!(t.column("u").unwrap(), [1.0, 1.5, 2.0, -0.25]);
    assert_eq!(t.column("k").unwrap(), [2.0, 3.0, 3.0, 1.0]);
}

#[test]
fn windows_line_ends_a_bom_blank_lines_and_quoted_names_are_read() {
    let text = b"\xEF\xBB\xBF\"time\",\"a,b\",\"say \"\"hi\"\"\"\r\n\r\n0,1,2\r\n1,3,4\r\n\r\n";
    let t = parse(text).unwrap();
    assert_eq!(t.time_name, "time");
    assert_eq!(t.names, ["a,b", "say \"hi\""]);
    assert_eq!(t.times, [0.0, 1.0]);
    assert_eq!(t.column("a,b").unwrap(), [1.0, 3.0]);
    // No final line end.
    let t = parse(b"t,u\n0,1\n2,3").unwrap();
    assert_eq!((t.times.as_slice(), t.column("u").unwrap()), (&[0.0, 2.0][..], &[1.0, 3.0][..]));
}

#[test]
fn a_named_time_column_and_selected_columns() {
    let t = read(&b"u,x,clock,v\n1,a,0,2\n3,b,1,4\n"[..], Some("clock"), |n| n == "v").unwrap();
    assert_eq!((t.times.as_slice(), t.names.as_slice()), (&[0.0, 1.0][..], &["v".to_owned()][..]));
    assert_eq!(t.column("v").unwrap(), [2.0, 4.0]);
    // Skipped columns are never parsed ("a", "b" are not numbers).
    let e = read(&b"u,v\n1,2\n"[..], Some("time"), all).unwrap_err();
    assert_eq!(e.to_string(), "line 1: no time column \"time\" in the header");
}

#[test]
fn malformed_values_name_their_line_and_column() {
    let e = parse(b"time,u\n0,1\n1,abc\n").unwrap_err();
    assert_eq!(e.to_string(), "line 3, column 2 (\"u\"): \"abc\" is not a number");
    let e = parse(b"time,u\n0,1\n1,NaN\n").unwrap_err();
    assert_eq!(e.to_string(), "line 3, column 2 (\"u\"): \"NaN\" is not a finite number");
    let e = parse(b"time,u\n0,1\n1,inf\n").unwrap_err();
    assert_eq!(e.to_string(), "line 3, column 2 (\"u\"): \"inf\" is not a finite number");
    let e = parse(b"time,u\n0,1\n2,1\n1,1\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "line 4, column 1 (\"time\"): time 1 is before the previous row's 2: times must not decrease"
    );
    let e = parse(b"time,u\n0,1\n1\n").unwrap_err();
    assert_eq!(e.to_string(), "line 3: 1 fields, but the header has 2");
    let e = parse(b"time,u\n0,1\n1,2,3\n").unwrap_err();
    assert_eq!(e.to_string(), "line 3: 3 fields, but the header has 2");
    let e = parse(b"time,u\n0,\n").unwrap_err();
    assert_eq!(e.to_string(), "line 2, column 2 (\"u\"): empty value: every row needs a number here");
    let e = parse(b"time,u\n").unwrap_err();
    assert_eq!(e.to_string(), "line 2: no data rows after the header");
    let e = parse(b"").unwrap_err();
    assert_eq!(e.to_string(), "line 1: the file is empty (no header line)");
    let e = parse(b"time,u,u\n0,1,2\n").unwrap_err();
    assert_eq!(e.to_string(), "line 1, column 3: column \"u\" appears twice");
    let e = parse(b"time,\"u\n0,1\n").unwrap_err();
    assert_eq!(e.to_string(), "line 3, column 2: a quoted field is not closed at the end of the file");
    let e = parse(b"time,\"u\"x\n0,1\n").unwrap_err();
    assert_eq!(e.to_string(), "line 1, column 2: a character after a closing quote");
}

#[test]
fn binary_garbage_is_an_error_not_a_panic() {
    // Deterministic noise: every byte value, NULs and invalid UTF-8 included.
    let mut x: u32 = 12345;
    let noise: Vec<u8> = (0..100_000)
        .map(|_| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            (x >> 16) as u8
        })
        .collect();
    let e = parse(&noise).unwrap_err();
    assert!(e.line >= 1, "{e}");
    let mut text = b"time,u\n0,1\n1,".to_vec();
    text.extend_from_slice(&[0xff, 0xfe, 0x00, 0x80]);
    let e = parse(&text).unwrap_err();
    assert!(e.to_string().starts_with("line 3, column 2 (\"u\"): "), "{e}");
    assert!(e.message.contains("not a number"), "{e}");
}

/// A reader generating `n` bytes of `pattern` (then `tail`), counting what was read.
struct Generated {
    pattern: &'static [u8],
    left: u64,
    tail: &'static [u8],
    read: std::rc::Rc<std::cell::Cell<u64>>,
}

impl Read for Generated {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut n = 0;
        while n < buf.len() && self.left > 0 {
            buf[n] = self.pattern[(self.left % self.pattern.len() as u64) as usize];
            n += 1;
            self.left -= 1;
        }
        if self.left == 0 && n < buf.len() && !self.tail.is_empty() {
            let k = self.tail.len().min(buf.len() - n);
            buf[n..n + k].copy_from_slice(&self.tail[..k]);
            self.tail = &self.tail[k..];
            n += k;
        }
        self.read.set(self.read.get() + n as u64);
        Ok(n)
    }
}

#[test]
fn a_two_gigabyte_line_is_refused_without_reading_it_whole() {
    let read_bytes = std::rc::Rc::new(std::cell::Cell::new(0));
    let line = Generated { pattern: b"1,", left: 2 << 30, tail: b"\n", read: read_bytes.clone() };
    let e = read(std::io::Cursor::new(b"time,u\n".to_vec()).chain(line), None, all).unwrap_err();
    assert_eq!(e.to_string(), "line 2: the line is longer than 256 MiB (MAX_LINE_BYTES): refused");
    assert!(read_bytes.get() < MAX_LINE_BYTES + (1 << 20), "read {} bytes", read_bytes.get());
    // One field over the field limit: refused at the limit.
    let read_bytes = std::rc::Rc::new(std::cell::Cell::new(0));
    let field = Generated { pattern: b"1", left: 2 << 30, tail: b"\n", read: read_bytes.clone() };
    let e = read(std::io::Cursor::new(b"time,u\n0,".to_vec()).chain(field), None, all).unwrap_err();
    assert_eq!(e.to_string(), "line 2, column 2 (\"u\"): a field longer than 64 KiB (MAX_FIELD_BYTES): refused");
    assert!(read_bytes.get() < 1 << 20, "read {} bytes", read_bytes.get());
}

#[test]
fn ten_million_columns_cost_only_the_columns_used() {
    // Header "time,c1,c2,…,c9999999" and two rows, generated; only c5 is kept.
    struct Wide {
        k: usize,
        row: usize,
        pending: Vec<u8>,
    }
    const N: usize = 10_000_000;
    impl Read for Wide {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            while self.pending.len() < buf.len() && self.row < 3 {
                if self.k == 0 {
                    self.pending.extend_from_slice(if self.row == 0 { b"time" } else { b"1" });
                } else if self.row == 0 {
                    self.pending.extend_from_slice(format!(",c{}", self.k).as_bytes());
                } else {
                    self.pending.extend_from_slice(b",2");
                }
                self.k += 1;
                if self.k == N {
                    self.pending.push(b'\n');
                    self.k = 0;
                    self.row += 1;
                }
            }
            let n = self.pending.len().min(buf.len());
            buf[..n].copy_from_slice(&self.pending[..n]);
            self.pending.drain(..n);
            Ok(n)
        }
    }
    let t = read(Wide { k: 0, row: 0, pending: Vec::new() }, None, |n| n == "c5").unwrap();
    assert_eq!((t.times.as_slice(), t.names.as_slice()), (&[1.0, 1.0][..], &["c5".to_owned()][..]));
    assert_eq!(t.column("c5").unwrap(), [2.0, 2.0]);
}
