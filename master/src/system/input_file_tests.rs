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

/// A reader handing out at most `chunk` bytes a call: the lexer's buffer ends cut fields, line
/// ends ("\r" | "\n") and quotes at every place.
struct Chunked<'a> {
    text: &'a [u8],
    chunk: usize,
}

impl Read for Chunked<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.chunk.min(buf.len()).min(self.text.len());
        buf[..n].copy_from_slice(&self.text[..n]);
        self.text = &self.text[n..];
        Ok(n)
    }
}

#[test]
fn fields_cut_by_the_buffer_end_read_as_whole_ones() {
    // Fields within the buffer go to the parser uncopied, fields across its end are copied:
    // the same tables and the same errors, wherever the cuts fall.
    let texts: [&[u8]; 10] = [
        b"\xEF\xBB\xBFtime,\"u,v\",w\r\n0,1.5,-2e3\r\n\r\n0.25,\"7\",true\r\n1,+.5,3.\r\n",
        b"time,u\n0,1\n1,2",
        b"time,u\n0,1.5\rx\n",
        b"time,u\n0,1\n1,1e\n",
        b"time,u\n0,12345678901234567890123,\n",
        b"time,u\n0,\"1\"\"\"\n",
        b"time,u\n0,1\n\n2,3\r\n1,4\n",
        b"time,u\n0,1\r,2\n",
        b"time,u\n\r\r\n0,1\r\r\n",
        b"time,u,v,w\n0,1,x,2\n1,2,y,3\n",
    ];
    for text in texts {
        let not_v = |n: &str| n != "v";
        let (whole, whole_not_v) = (read(text, None, all), read(text, None, not_v));
        for chunk in 1..=9 {
            let cut = read(Chunked { text, chunk }, None, all);
            assert_eq!(cut, whole, "{:?} read {chunk} bytes at a time", String::from_utf8_lossy(text));
            let cut = read(Chunked { text, chunk }, None, not_v);
            assert_eq!(cut, whole_not_v, "{:?} without v, {chunk} bytes at a time", String::from_utf8_lossy(text));
        }
    }
    // A '\r' is dropped only before a line end: inside a field it is part of the value.
    let e = parse(texts[2]).unwrap_err();
    assert_eq!(e.to_string(), "line 2, column 2 (\"u\"): \"1.5\\rx\" is not a number");
    let t = parse(texts[0]).unwrap();
    assert_eq!((t.times.as_slice(), t.column("w").unwrap()), (&[0.0, 0.25, 1.0][..], &[-2000.0, 1.0, 3.0][..]));
    assert_eq!(t.column("u,v").unwrap(), [1.5, 7.0, 0.5]);
    // Skipped columns are not parsed on either path.
    let t = read(texts[9], None, |n| n != "v").unwrap();
    assert_eq!((t.column("u").unwrap(), t.column("w").unwrap()), (&[1.0, 2.0][..], &[2.0, 3.0][..]));
}

#[test]
fn the_fast_decimal_path_gives_str_parse_bit_for_bit() {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    // Edge cases, '|'-separated (some have blanks).
    let edges = "0|-0|+0|0.0|-0.0|0e400|1|-1|+1.5|.5|5.|1e22|1e23|1e-22|1e-23|9007199254740992|9007199254740993|\
                 9007199254740993e0|0.1|0.3|123456789012345678|1234567890123456789|12345678901234567890|\
                 1.7976931348623157e308|2.2250738585072014e-308|4.9e-324|1e|1e+|e5|.|-|+-1|1..2|1e1.5|1,5| 1|1 |0x10|1_000";
    let mut texts: Vec<String> = edges.split('|').map(str::to_owned).collect();
    for _ in 0..100_000 {
        let r = next();
        let y = f64::from_bits(next());
        let text = match r % 6 {
            // Doubles as Rust and Python print them (shortest round trip), in both notations.
            0 if y.is_finite() => format!("{y}"),
            1 if y.is_finite() => format!("{y:e}"),
            // Decimals as files hold them: a few digits, a point, perhaps an exponent.
            _ => {
                let digits = 1 + (r >> 8) % if r & 64 != 0 { 20 } else { 12 };
                let mut s = String::new();
                if r & 16 != 0 {
                    s.push('-');
                }
                for k in 0..digits {
                    if k == (r >> 16) % (digits + 1) {
                        s.push('.');
                    }
                    s.push(char::from(b'0' + (next() % 10) as u8));
                }
                if r & 32 != 0 {
                    s.push_str(&format!("e{}", ((r >> 24) % 61) as i64 - 30));
                }
                s
            }
        };
        texts.push(text);
    }
    let mut fast = 0;
    for text in &texts {
        let parsed = text.parse::<f64>().ok();
        if let Some(y) = plain_decimal(text.as_bytes()) {
            fast += 1;
            assert_eq!(Some(y.to_bits()), parsed.map(f64::to_bits), "{text:?}");
        }
        if let Some(y) = parsed.filter(|y| y.is_finite()) {
            assert_eq!(number(text.as_bytes()).map(f64::to_bits), Ok(y.to_bits()), "{text:?}");
        }
    }
    // The path is taken by most of the file-like decimals (a test of the test).
    assert!(fast > texts.len() / 2, "{fast} of {} by the fast path", texts.len());
}

#[test]
fn a_pipe_or_a_device_is_refused_before_its_first_read() {
    let dev = Path::new("/dev/null");
    let e = check(dev, None, all, |_, _, _| Ok(())).unwrap_err();
    assert_eq!(e.line, 0);
    assert!(e.to_string().starts_with("not a regular file: an input file is read more than once"), "{e}");
    assert_eq!(header_names(dev, |_| true).unwrap_err(), e);
    assert_eq!(read_file(dev, None, all).unwrap_err(), e);
    assert_eq!(check(Path::new("/no/such/file.csv"), None, all, |_, _, _| Ok(())).unwrap_err().line, 0);
}

#[test]
fn the_word_at_a_time_separator_search_is_the_byte_by_byte_one() {
    let mut x: u32 = 7;
    let mut byte = move || {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        // Mostly digits and separators, sometimes any byte (0x80.. and 0x01 included).
        match (x >> 16) % 16 {
            0 => b',',
            1 => b'\n',
            2 => b'"',
            3 => (x >> 8) as u8,
            _ => b'0' + ((x >> 20) % 10) as u8,
        }
    };
    for len in 0..40 {
        for _ in 0..200 {
            let buf: Vec<u8> = (0..len).map(|_| byte()).collect();
            for i in 0..=len + 1 {
                let naive =
                    buf.get(i..).and_then(|r| r.iter().position(|b| matches!(b, b',' | b'\n' | b'"'))).map(|p| i + p);
                assert_eq!(separator(&buf, i), naive, "{buf:?} from {i}");
            }
        }
    }
}
