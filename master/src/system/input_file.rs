//! Input files (`cosim run X.fmu --input-file in.csv`, `[[inputs]] file = "cycle.csv"`, the
//! replay of a live run's results.csv): a CSV file with a time column and one column per input,
//! checked in **one streaming pass** before the run starts ([`check`]) and read again, one row
//! at a time ([`Rows`]), while it runs ([`super::input_stream`]).
//!
//! The pass validates the whole file (every row's field count, every used value a finite number,
//! the time never decreasing) and keeps nothing: memory is O(used columns), never O(file), O(rows)
//! or O(all columns), so a file of 10⁷ columns of which two are used costs two columns, and 10⁶
//! rows cost what 10 do. Nothing of the run starts before the pass has succeeded, and an error
//! names the line and column (`line 7, column 3 ("u"): "abc" is not a number`). [`read`] keeps
//! the used columns whole (tests, small tables).
//!
//! The format is RFC 4180 CSV as spreadsheets and pandas write it: comma-separated, a header
//! line of names (double-quoted when they contain commas or quotes, `""` for a quote), `\n` or
//! `\r\n` line ends, an optional UTF-8 byte-order mark, blank lines ignored. Values are decimal
//! numbers (`1`, `-2.5e-3`); `true`/`false` are 1 and 0. Hostile input is refused without being
//! held: a line over [`MAX_LINE_BYTES`] or a field over [`MAX_FIELD_BYTES`] is an error as soon
//! as the limit is passed, whatever follows (a 2 GB line is not read whole).

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// The longest line accepted (bytes, 256 MiB): a header of 10⁷ columns fits; a longer line is
/// refused when this many bytes of it have been read.
pub const MAX_LINE_BYTES: u64 = 256 << 20;
/// The longest field (a column name or a value) accepted (bytes, 64 KiB).
pub const MAX_FIELD_BYTES: usize = 64 << 10;

/// What is wrong with an input file, and where.
#[derive(Debug, Clone, PartialEq)]
pub struct CsvError {
    /// Line (1-based; physical lines: a quoted field may span several).
    pub line: u64,
    /// Column (1-based) and its name, when the error is in one field.
    pub column: Option<(usize, String)>,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for CsvError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            // Not in the content (no such file, a file changed since it was checked).
            return f.write_str(&self.message);
        }
        write!(f, "line {}", self.line)?;
        if let Some((c, name)) = &self.column {
            write!(f, ", column {c}")?;
            if !name.is_empty() {
                write!(f, " ({name:?})")?;
            }
        }
        write!(f, ": {}", self.message)
    }
}

/// The used columns of an input file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct InputTable {
    /// The time column's name.
    pub time_name: String,
    /// Times (s), never decreasing (a repeated time is a discontinuity).
    pub times: Vec<f64>,
    /// The selected columns' names, in the file's order.
    pub names: Vec<String>,
    /// Their values, one vector per selected column (same length as `times`).
    pub columns: Vec<Vec<f64>>,
}

impl InputTable {
    /// The values of column `name`, if it was selected.
    pub fn column(&self, name: &str) -> Option<&[f64]> {
        self.names.iter().position(|n| n == name).map(|k| self.columns[k].as_slice())
    }
}

/// Opens an input file: a regular file only. The run reads it more than once (its header, the
/// check before the run, then during it), so a pipe (`--input-file <(…)`) would be empty the
/// second time (and opening one without a writer would block), a device endless.
fn open(path: &Path) -> std::result::Result<std::fs::File, CsvError> {
    let error = |message: String| CsvError { line: 0, column: None, message };
    let meta = std::fs::metadata(path).map_err(|e| error(e.to_string()))?;
    if !meta.is_file() {
        return Err(error(
            "not a regular file: an input file is read more than once (checked before the run, then \
             streamed during it), so a pipe or a device cannot be one; write it to a file first"
                .into(),
        ));
    }
    std::fs::File::open(path).map_err(|e| error(e.to_string()))
}

/// Reads the file at `path` ([`read`]); an error that is not in the content (no such file)
/// has line 0.
pub fn read_file(
    path: &Path,
    time: Option<&str>,
    select: impl FnMut(&str) -> bool,
) -> std::result::Result<InputTable, CsvError> {
    let f = open(path)?;
    read(f, time, select)
}

/// Reads an input file whole: `time` names the time column (`None`: the first column, as
/// FMPy), `select` picks the other columns kept (by name; called once per column of the
/// header). Every row is checked ([`Rows`]); at least one row. The run streams instead
/// ([`check`] before it, [`Rows`] during it); this is for tests and small tables.
pub fn read(
    reader: impl Read,
    time: Option<&str>,
    select: impl FnMut(&str) -> bool,
) -> std::result::Result<InputTable, CsvError> {
    let mut rows = Rows::new(reader, time, select)?;
    let mut table = InputTable {
        time_name: rows.time_name.clone(),
        names: rows.names().map(str::to_owned).collect(),
        columns: vec![Vec::new(); rows.kept.len()],
        ..InputTable::default()
    };
    while rows.next_row()? {
        table.times.push(rows.time());
        for (c, v) in table.columns.iter_mut().zip(rows.values()) {
            c.push(*v);
        }
    }
    rows.finish()?;
    Ok(table)
}

/// What the validating pass ([`check`]) learnt of a file: its kept columns and rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    /// The time column's name.
    pub time_name: String,
    /// The kept columns' names, in the file's order.
    pub names: Vec<String>,
    /// Data rows.
    pub rows: u64,
}

/// The validating pass over the file at `path` before a run: every row checked as [`read`]
/// does, and `on_row(row, time, values)` (the kept values, in [`Checked::names`]' order) may
/// refuse a row with a message; nothing is kept (memory O(columns)). An error that is not in
/// the content (no such file) has line 0.
pub fn check(
    path: &Path,
    time: Option<&str>,
    select: impl FnMut(&str) -> bool,
    mut on_row: impl FnMut(u64, f64, &[f64]) -> std::result::Result<(), String>,
) -> std::result::Result<Checked, CsvError> {
    let mut rows = Rows::open(path, time, select)?;
    while rows.next_row()? {
        on_row(rows.rows, rows.time(), rows.values()).map_err(|message| CsvError {
            line: rows.record_line(),
            column: None,
            message,
        })?;
    }
    rows.finish()?;
    Ok(Checked { time_name: rows.time_name.clone(), names: rows.names().map(str::to_owned).collect(), rows: rows.rows })
}

/// An input file read one row at a time: the header parsed when opened, then each
/// [`Rows::next_row`] checks one row (field count, finite numbers, time not decreasing) into a
/// buffer reused for every row — no allocation per row, memory O(kept columns).
pub struct Rows<R> {
    lex: Lexer<R>,
    time_k: usize,
    time_name: String,
    /// Kept columns: (field position, name).
    kept: Vec<(usize, String)>,
    /// Field k → where it goes: 0 the time, j + 1 kept column j, usize::MAX skipped.
    slot: Vec<usize>,
    n_fields: usize,
    /// The row read last: the time, then the kept values.
    row: Vec<f64>,
    /// Data rows read.
    rows: u64,
}

impl<R> std::fmt::Debug for Rows<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rows")
            .field("time", &self.time_name)
            .field("kept", &self.kept)
            .field("rows", &self.rows)
            .finish()
    }
}

impl Rows<std::fs::File> {
    /// Opens the file at `path` ([`Rows::new`]); an error that is not in the content (no such
    /// file) has line 0.
    pub fn open(
        path: &Path,
        time: Option<&str>,
        select: impl FnMut(&str) -> bool,
    ) -> std::result::Result<Self, CsvError> {
        let f = open(path)?;
        Self::new(f, time, select)
    }
}

impl<R: Read> Rows<R> {
    /// Reads the header: `time` names the time column (`None`: the first column, as FMPy),
    /// `select` picks the other columns kept (by name; called once per column of the header).
    pub fn new(
        reader: R,
        time: Option<&str>,
        mut select: impl FnMut(&str) -> bool,
    ) -> std::result::Result<Self, CsvError> {
        let mut lex = Lexer::new(reader)?;
        let mut time_at = None;
        let mut kept: Vec<(usize, String)> = Vec::new();
        let mut n_fields = 0usize;
        let header = lex.record(
            |_| true,
            |k, bytes| {
                let name = String::from_utf8_lossy(bytes).trim().to_owned();
                n_fields = k + 1;
                let is_time = match time {
                    Some(t) => name == t,
                    None => k == 0,
                };
                if is_time && time_at.is_none() {
                    time_at = Some((k, name));
                } else if select(&name) {
                    if kept.iter().any(|(_, n)| *n == name) {
                        return Err(format!("column {name:?} appears twice"));
                    }
                    kept.push((k, name));
                }
                Ok(())
            },
        )?;
        if header.is_none() {
            return Err(CsvError { line: 1, column: None, message: "the file is empty (no header line)".into() });
        }
        let Some((time_k, time_name)) = time_at else {
            let message = format!("no time column {:?} in the header", time.unwrap_or("time"));
            return Err(CsvError { line: 1, column: None, message });
        };
        let last = kept.iter().map(|(k, _)| *k).max().unwrap_or(0).max(time_k);
        let mut slot = vec![usize::MAX; last + 1];
        slot[time_k] = 0;
        for (j, (k, _)) in kept.iter().enumerate() {
            slot[*k] = j + 1;
        }
        let row = vec![f64::NAN; kept.len() + 1];
        Ok(Self { lex, time_k, time_name, kept, slot, n_fields, row, rows: 0 })
    }

    /// The kept columns' names, in the file's order (the order of [`Rows::values`]).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.kept.iter().map(|(_, n)| n.as_str())
    }

    /// The time column's name.
    pub fn time_name(&self) -> &str {
        &self.time_name
    }

    /// The time of the row read last.
    pub fn time(&self) -> f64 {
        self.row[0]
    }

    /// The kept values of the row read last.
    pub fn values(&self) -> &[f64] {
        &self.row[1..]
    }

    /// Data rows read so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// The line where the row read last starts.
    pub fn record_line(&self) -> u64 {
        self.lex.st.record_line
    }

    /// Reads and checks the next row; `false` at the end of the file.
    pub fn next_row(&mut self) -> std::result::Result<bool, CsvError> {
        let prev = self.row[0];
        if self.plain_row(prev) {
            return Ok(true);
        }
        self.row[0] = prev;
        let Self { lex, time_k, time_name, kept, slot, n_fields, row, rows } = self;
        let last = slot.len() - 1;
        let keep = |k: usize| k <= last && slot[k] != usize::MAX;
        let fields = lex.record(keep, |k: usize, bytes: &[u8]| {
            row[slot[k]] = number(bytes)?;
            Ok(())
        });
        let fields = fields.map_err(|mut e| {
            if let Some((k, _)) = &mut e.column {
                let at = *k - 1;
                let name = if at == *time_k {
                    time_name.clone()
                } else {
                    kept.iter().find(|(i, _)| *i == at).map(|(_, n)| n.clone()).unwrap_or_default()
                };
                e.column = Some((*k, name));
            }
            e
        })?;
        let Some(fields) = fields else { return Ok(false) };
        let line = lex.st.record_line;
        if fields != *n_fields {
            let message = format!("{fields} fields, but the header has {n_fields}");
            return Err(CsvError { line, column: None, message });
        }
        let t = row[0];
        if *rows > 0 && t < prev {
            let message = format!("time {t} is before the previous row's {prev}: times must not decrease");
            return Err(CsvError { line, column: Some((*time_k + 1, time_name.clone())), message });
        }
        *rows += 1;
        Ok(true)
    }

    /// The next row when it is a plain line wholly in the buffer, as nearly all are: no quote,
    /// not blank, every kept value a [`plain_decimal`], as many fields as the header, the time
    /// not before `prev` — read at once, without a copy, a '\r' at a field's end dropped as
    /// [`Lexer::record`] does. `false` (nothing consumed; `row` may be partly overwritten, its
    /// time restored by the caller) for anything else, which [`Lexer::record`] then reads byte by
    /// byte, with the errors.
    #[inline]
    fn plain_row(&mut self, prev: f64) -> bool {
        let Lexer { r, st } = &mut self.lex;
        let buf = r.buffer();
        if st.line_bytes != 0 || matches!(buf.first(), None | Some(b'\r' | b'\n')) {
            return false;
        }
        let (mut k, mut at) = (0, 0);
        let end = loop {
            let Some(end) = separator(buf, at) else { return false };
            let sep = buf[end];
            if sep == b'"' {
                return false;
            }
            if let Some(&j) = self.slot.get(k).filter(|j| **j != usize::MAX) {
                let field = &buf[at..end];
                match plain_decimal(field.strip_suffix(b"\r").unwrap_or(field)) {
                    Some(x) => self.row[j] = x,
                    None => return false,
                }
            }
            k += 1;
            if sep == b'\n' {
                break end;
            }
            at = end + 1;
        };
        if k != self.n_fields || (self.rows > 0 && self.row[0] < prev) {
            return false;
        }
        st.record_line = st.line;
        st.line += 1;
        r.consume(end + 1);
        self.rows += 1;
        true
    }

    /// At the end of the file: an error when it had no data row.
    pub fn finish(&self) -> std::result::Result<(), CsvError> {
        if self.rows == 0 {
            return Err(CsvError {
                line: self.lex.st.line,
                column: None,
                message: "no data rows after the header".into(),
            });
        }
        Ok(())
    }
}

/// Only the header's names ([`read`]'s header pass), to pick columns before reading.
pub fn header_names(path: &Path, mut keep: impl FnMut(&str) -> bool) -> std::result::Result<Vec<String>, CsvError> {
    let f = open(path)?;
    let mut lex = Lexer::new(f)?;
    let mut names = Vec::new();
    lex.record(
        |_| true,
        |_, bytes| {
            let name = String::from_utf8_lossy(bytes).trim().to_owned();
            if keep(&name) {
                names.push(name);
            }
            Ok(())
        },
    )?;
    Ok(names)
}

/// A field's value: a finite decimal number, or `true`/`false` (1, 0).
#[inline]
fn number(bytes: &[u8]) -> std::result::Result<f64, String> {
    match plain_decimal(bytes) {
        Some(x) => Ok(x),
        None => any_number(bytes),
    }
}

/// [`number`] for what [`plain_decimal`] does not take: blanks around, long mantissas, large
/// exponents, `true`/`false`, and the errors.
#[cold]
fn any_number(bytes: &[u8]) -> std::result::Result<f64, String> {
    let shown = || {
        let s = String::from_utf8_lossy(&bytes[..bytes.len().min(40)]).into_owned();
        if bytes.len() > 40 {
            format!("{s:?}…")
        } else {
            format!("{s:?}")
        }
    };
    let s = std::str::from_utf8(bytes).map_err(|_| format!("{} is not a number (not UTF-8 text)", shown()))?.trim();
    if let Ok(x) = s.parse::<f64>() {
        if x.is_finite() {
            return Ok(x);
        }
    }
    if s.eq_ignore_ascii_case("true") {
        return Ok(1.0);
    }
    if s.eq_ignore_ascii_case("false") {
        return Ok(0.0);
    }
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        Ok(_) => Err(format!("{} is not a finite number", shown())),
        Err(_) if s.is_empty() => Err("empty value: every row needs a number here".into()),
        Err(_) => Err(format!("{} is not a number", shown())),
    }
}

/// The value of a plain decimal `[+-]digits[.digits][(e|E)[+-]digits]` (no blanks) of at most
/// 19 digits by Clinger's fast path: when its integer mantissa w is at most 2^53 and its decimal
/// exponent e at most 22 in size, w and 10^|e| are exact doubles and w·10^e (or w/10^−e) is one
/// correctly rounded operation, so the value is the one `str::parse::<f64>` gives (whose own
/// first path this is). `None` for anything else (longer numbers, other forms, errors), which
/// [`number`] hands to `str::parse`. Most values of a CSV file take this path, an order of
/// magnitude faster than UTF-8 checking, trimming and the general parser.
#[inline]
fn plain_decimal(bytes: &[u8]) -> Option<f64> {
    const POW10: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
        1e20, 1e21, 1e22,
    ];
    let (negative, start) = match bytes.first()? {
        b'-' => (true, 1),
        b'+' => (false, 1),
        _ => (false, 0),
    };
    let mut w = 0u64;
    let mut i = digits(bytes, start, &mut w);
    let (mut fraction, point) = (0, bytes.get(i) == Some(&b'.'));
    if point {
        let after_point = digits(bytes, i + 1, &mut w);
        fraction = after_point - (i + 1);
        i = after_point;
    }
    // At most 19 digits (w wraps beyond: refused here, before it is used).
    let count = i - start - usize::from(point);
    if count == 0 || count > 19 {
        return None;
    }
    let mut exponent = 0i32;
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        i += 1;
        let negative_exponent = match bytes.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let mut e = 0u64;
        let end = digits(bytes, i, &mut e);
        if end == i || end - i > 4 {
            return None;
        }
        exponent = e as i32;
        i = end;
        if negative_exponent {
            exponent = -exponent;
        }
    }
    if i != bytes.len() || w > 1 << 53 {
        return None;
    }
    let e = exponent - fraction as i32;
    let x = if w == 0 {
        0.0
    } else if (0..=22).contains(&e) {
        w as f64 * POW10[e as usize]
    } else if (-22..0).contains(&e) {
        w as f64 / POW10[(-e) as usize]
    } else {
        return None;
    };
    Some(if negative { -x } else { x })
}

/// The first ',', '\n' or '"' in `buf` from `i` on, eight bytes at a time (SWAR: a byte equal
/// to `c` is a zero byte of `x ^ c·0x01…01`, and the lowest set bit of `(y − 0x01…01) & !y &
/// 0x80…80` marks the first zero byte of y — higher ones may be false, and are not used).
#[inline]
fn separator(buf: &[u8], mut i: usize) -> Option<usize> {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGHS: u64 = ONES << 7;
    let zero_at = |y: u64| y.wrapping_sub(ONES) & !y & HIGHS;
    while let Some(word) = buf.get(i..i + 8) {
        let x = u64::from_le_bytes(word.try_into().ok()?);
        let found = zero_at(x ^ (ONES * u64::from(b',')))
            | zero_at(x ^ (ONES * u64::from(b'\n')))
            | zero_at(x ^ (ONES * u64::from(b'"')));
        if found != 0 {
            return Some(i + (found.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    buf.get(i..)?.iter().position(|b| matches!(b, b',' | b'\n' | b'"')).map(|p| i + p)
}

/// Adds the decimal digits of `bytes` from `i` on to `w` (`w = 10 w + d`, wrapping: the caller
/// counts the digits); the index after them.
#[inline(always)]
fn digits(bytes: &[u8], mut i: usize, w: &mut u64) -> usize {
    while let Some(d) = bytes.get(i).map(|b| b.wrapping_sub(b'0')).filter(|d| *d < 10) {
        *w = w.wrapping_mul(10).wrapping_add(u64::from(d));
        i += 1;
    }
    i
}

/// The CSV lexer: one record at a time from a buffered reader, kept fields copied out (at most
/// [`MAX_FIELD_BYTES`] each), skipped fields never stored.
struct Lexer<R> {
    r: BufReader<std::io::Chain<std::io::Cursor<Vec<u8>>, R>>,
    st: Position,
}

/// Where the lexer is, and the field being read.
struct Position {
    /// Line (1-based) of the next byte.
    line: u64,
    /// Bytes of the current line so far.
    line_bytes: u64,
    /// Line where the last record read starts.
    record_line: u64,
    field: Vec<u8>,
}

#[derive(Clone, Copy, PartialEq)]
enum State {
    Start,
    Plain,
    Quoted,
    QuoteInQuoted,
}

impl<R: Read> Lexer<R> {
    fn new(mut inner: R) -> std::result::Result<Self, CsvError> {
        // A UTF-8 byte-order mark is dropped; anything else read here is put back in front.
        let mut head = Vec::with_capacity(3);
        let mut byte = [0u8; 1];
        while head.len() < 3 {
            match inner.read(&mut byte) {
                Ok(0) => break,
                Ok(_) => head.push(byte[0]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(CsvError { line: 1, column: None, message: e.to_string() }),
            }
        }
        if head == [0xEF, 0xBB, 0xBF] {
            head.clear();
        }
        let r = BufReader::with_capacity(1 << 16, std::io::Cursor::new(head).chain(inner));
        Ok(Self { r, st: Position { line: 1, line_bytes: 0, record_line: 1, field: Vec::new() } })
    }

    /// Reads one record (blank lines skipped): `keep(k)` says whether field k (0-based) is
    /// handed to `on_field`; returns the number of fields, `None` at the end of the file.
    /// `on_field`'s error is placed at the field (line, column k + 1).
    fn record(
        &mut self,
        keep: impl Fn(usize) -> bool,
        mut on_field: impl FnMut(usize, &[u8]) -> std::result::Result<(), String>,
    ) -> std::result::Result<Option<usize>, CsvError> {
        let Self { r, st } = self;
        let mut state = State::Start;
        let mut k = 0usize;
        let mut kept = keep(0);
        let mut any = false;
        // The current field went to `on_field` straight from the buffer (what follows in it up
        // to its end, a '\r' before a line end, is not kept).
        let mut delivered = false;
        st.field.clear();
        let err = |line: u64, column: Option<usize>, message: String| CsvError {
            line,
            column: column.map(|c| (c + 1, String::new())),
            message,
        };
        loop {
            let buf = match r.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(err(st.line, None, e.to_string())),
            };
            if buf.is_empty() {
                // End of the file: the last record ends here (without a line end).
                if state == State::Quoted {
                    return Err(err(st.line, Some(k), "a quoted field is not closed at the end of the file".into()));
                }
                if !any && k == 0 {
                    return Ok(None);
                }
                st.end_field(k, kept && !delivered, &mut on_field)?;
                return Ok(Some(k + 1));
            }
            let mut used = 0;
            let mut done = None;
            while used < buf.len() {
                // The common case: a run of ordinary bytes of an unquoted field, taken at once.
                if matches!(state, State::Start | State::Plain) {
                    let rest = &buf[used..];
                    let run = rest.iter().position(|b| matches!(b, b',' | b'\n' | b'"' | b'\r')).unwrap_or(rest.len());
                    if run > 0 {
                        st.line_bytes += run as u64;
                        if st.line_bytes > MAX_LINE_BYTES {
                            return Err(err(
                                st.line,
                                None,
                                format!(
                                    "the line is longer than {} MiB (MAX_LINE_BYTES): refused",
                                    MAX_LINE_BYTES >> 20
                                ),
                            ));
                        }
                        if !any {
                            any = true;
                            st.record_line = st.line;
                        }
                        let whole = state == State::Start && run <= MAX_FIELD_BYTES;
                        let ends = match rest.get(run) {
                            Some(b',' | b'\n') => true,
                            Some(b'\r') => rest.get(run + 1) == Some(&b'\n'),
                            _ => false,
                        };
                        if kept && whole && ends {
                            // The whole field is in the buffer: handed over without a copy.
                            on_field(k, &rest[..run]).map_err(|message| err(st.line, Some(k), message))?;
                            delivered = true;
                        } else if !delivered {
                            st.push_all(kept, &rest[..run], k)?;
                        }
                        state = State::Plain;
                        used += run;
                        continue;
                    }
                }
                let b = buf[used];
                used += 1;
                st.line_bytes += 1;
                if st.line_bytes > MAX_LINE_BYTES {
                    return Err(err(
                        st.line,
                        None,
                        format!("the line is longer than {} MiB (MAX_LINE_BYTES): refused", MAX_LINE_BYTES >> 20),
                    ));
                }
                if b == b'\n' && state != State::Quoted {
                    st.line += 1;
                    st.line_bytes = 0;
                    if !any && k == 0 {
                        // A blank line (perhaps "\r\n"): skipped.
                        st.field.clear();
                        state = State::Start;
                        continue;
                    }
                    done = Some(k);
                    break;
                }
                if b == b'\n' {
                    st.line += 1;
                    st.line_bytes = 0;
                }
                if !any && b != b'\r' {
                    any = true;
                    st.record_line = st.line;
                }
                match (state, b) {
                    (State::Start, b'"') => state = State::Quoted,
                    (State::Quoted, b'"') => state = State::QuoteInQuoted,
                    (State::QuoteInQuoted, b'"') => {
                        state = State::Quoted;
                        st.push(kept, b, k)?;
                    }
                    (State::Quoted, _) => st.push(kept, b, k)?,
                    (State::Start | State::Plain | State::QuoteInQuoted, b',') => {
                        st.end_field(k, kept && !delivered, &mut on_field)?;
                        k += 1;
                        kept = keep(k);
                        delivered = false;
                        state = State::Start;
                    }
                    (State::QuoteInQuoted, b'\r') => {}
                    (State::QuoteInQuoted, _) => {
                        return Err(err(st.line, Some(k), "a character after a closing quote".into()));
                    }
                    (State::Start | State::Plain, _) => {
                        state = State::Plain;
                        st.push(kept && !delivered, b, k)?;
                    }
                }
            }
            r.consume(used);
            if let Some(k) = done {
                st.end_field(k, kept && !delivered, &mut on_field)?;
                return Ok(Some(k + 1));
            }
        }
    }
}

impl Position {
    fn push(&mut self, kept: bool, b: u8, k: usize) -> std::result::Result<(), CsvError> {
        if kept {
            if self.field.len() >= MAX_FIELD_BYTES {
                return Err(CsvError {
                    line: self.line,
                    column: Some((k + 1, String::new())),
                    message: format!("a field longer than {} KiB (MAX_FIELD_BYTES): refused", MAX_FIELD_BYTES >> 10),
                });
            }
            self.field.push(b);
        }
        Ok(())
    }

    fn push_all(&mut self, kept: bool, bytes: &[u8], k: usize) -> std::result::Result<(), CsvError> {
        if kept {
            if self.field.len() + bytes.len() > MAX_FIELD_BYTES {
                return Err(CsvError {
                    line: self.line,
                    column: Some((k + 1, String::new())),
                    message: format!("a field longer than {} KiB (MAX_FIELD_BYTES): refused", MAX_FIELD_BYTES >> 10),
                });
            }
            self.field.extend_from_slice(bytes);
        }
        Ok(())
    }

    fn end_field(
        &mut self,
        k: usize,
        kept: bool,
        on_field: &mut impl FnMut(usize, &[u8]) -> std::result::Result<(), String>,
    ) -> std::result::Result<(), CsvError> {
        if kept {
            if self.field.last() == Some(&b'\r') {
                self.field.pop();
            }
            // The line of the field: the record's line unless a quoted line end came since.
            let line = self.line - u64::from(self.line_bytes == 0);
            on_field(k, &self.field).map_err(|message| CsvError {
                line,
                column: Some((k + 1, String::new())),
                message,
            })?;
        }
        self.field.clear();
        Ok(())
    }
}

#[cfg(test)]
#[path = "input_file_tests.rs"]
mod tests;
