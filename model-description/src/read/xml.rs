//! The XML layer under the FMI 2.0 and 3.0 readers: start tags as [`Elem`]s with unescaped
//! attributes and their 1-based line and column, the attribute value parsers, and
//! [`ReadError`], which every reader error is.

use crate::model::*;
use quick_xml::events::attributes::AttrError;
use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

/// Why a `modelDescription.xml` could not be read. Every variant carries the 1-based `line` and
/// `column` (counted in characters) where the problem was found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// The text is not well-formed XML.
    #[error("line {line}, column {column}: malformed XML: {message}")]
    Xml {
        /// Line.
        line: u32,
        /// Column.
        column: u32,
        /// What is wrong.
        message: String,
    },
    /// A required attribute is absent.
    #[error("line {line}, column {column}: {}: missing required attribute {attribute}", tag(.element, .name.as_deref()))]
    MissingAttribute {
        /// Line of the element.
        line: u32,
        /// Column of the element.
        column: u32,
        /// Element name, e.g. `ScalarVariable`.
        element: String,
        /// The element's `name` attribute, when it has one (to tell which variable).
        name: Option<String>,
        /// The missing attribute.
        attribute: String,
    },
    /// An attribute value does not parse as the type the schema requires.
    #[error("line {line}, column {column}: {}: attribute {attribute}=\"{value}\" is not {expected}", tag(.element, .name.as_deref()))]
    InvalidAttribute {
        /// Line of the attribute.
        line: u32,
        /// Column of the attribute.
        column: u32,
        /// Element name, e.g. `ScalarVariable`.
        element: String,
        /// The element's `name` attribute, when it has one.
        name: Option<String>,
        /// Attribute name.
        attribute: String,
        /// The value as written.
        value: String,
        /// What was expected, e.g. "an unsigned integer".
        expected: &'static str,
    },
    /// The root element is not `<fmiModelDescription>`.
    #[error("line {line}, column {column}: the root element is <{found}>, not <fmiModelDescription>: this is not an FMI model description")]
    WrongRoot {
        /// Line.
        line: u32,
        /// Column.
        column: u32,
        /// The root element found.
        found: String,
    },
    /// `fmiVersion` is not `2.0`, e.g. `1.0` or `3.0`: a description of another FMI version.
    #[error("line {line}, column {column}: fmiVersion=\"{version}\": this is an FMI {version} model description, only FMI 2.0 is supported")]
    UnsupportedVersion {
        /// Line of the attribute.
        line: u32,
        /// Column of the attribute.
        column: u32,
        /// The `fmiVersion` found.
        version: String,
    },
    /// A `<ScalarVariable>` (or `<SimpleType>`) has none of the type elements `Real`, `Integer`,
    /// `Boolean`, `String`, `Enumeration`.
    #[error("line {line}, column {column}: {}: no type element (Real, Integer, Boolean, String or Enumeration)", tag(.element, .name.as_deref()))]
    MissingTypeElement {
        /// Line of the element.
        line: u32,
        /// Column of the element.
        column: u32,
        /// Element name, `ScalarVariable` or `SimpleType`.
        element: String,
        /// Its `name` attribute, if present.
        name: Option<String>,
    },
}

impl ReadError {
    /// 1-based line of the problem.
    pub fn line(&self) -> u32 {
        match self {
            Self::Xml { line, .. }
            | Self::MissingAttribute { line, .. }
            | Self::InvalidAttribute { line, .. }
            | Self::WrongRoot { line, .. }
            | Self::UnsupportedVersion { line, .. }
            | Self::MissingTypeElement { line, .. } => *line,
        }
    }

    /// 1-based column (in characters) of the problem.
    pub fn column(&self) -> u32 {
        match self {
            Self::Xml { column, .. }
            | Self::MissingAttribute { column, .. }
            | Self::InvalidAttribute { column, .. }
            | Self::WrongRoot { column, .. }
            | Self::UnsupportedVersion { column, .. }
            | Self::MissingTypeElement { column, .. } => *column,
        }
    }
}

/// `<Element name="x">` or `<Element>`, for messages.
pub(crate) fn tag(element: &str, name: Option<&str>) -> String {
    match name {
        Some(n) => format!("<{element} name=\"{n}\">"),
        None => format!("<{element}>"),
    }
}

pub(crate) const UINT: &str = "an unsigned integer";
pub(crate) const INT: &str = "an integer";
pub(crate) const DOUBLE: &str = "a floating-point number";
pub(crate) const BOOL: &str = "a boolean (true, false, 1 or 0)";
pub(crate) const UINT_LIST: &str = "a space-separated list of unsigned integers";
pub(crate) const KIND_LIST: &str =
    "a space-separated list of dependency kinds (dependent, constant, fixed, tunable, discrete)";
pub(crate) const CAUSALITY: &str = "a causality (parameter, calculatedParameter, input, output, local or independent)";
pub(crate) const VARIABILITY: &str = "a variability (constant, fixed, tunable, discrete or continuous)";
pub(crate) const INITIAL: &str = "an initial (exact, approx or calculated)";
pub(crate) const CONVENTION: &str = "a naming convention (flat or structured)";

pub(crate) fn parse_u32(s: &str) -> Option<u32> {
    s.trim().parse().ok()
}

pub(crate) fn parse_i32(s: &str) -> Option<i32> {
    s.trim().parse().ok()
}

/// `xs:double`, including `INF`, `-INF` and `NaN`.
pub(crate) fn parse_f64(s: &str) -> Option<f64> {
    match s.trim() {
        "INF" | "+INF" => Some(f64::INFINITY),
        "-INF" => Some(f64::NEG_INFINITY),
        "NaN" => Some(f64::NAN),
        t => t.parse().ok(),
    }
}

pub(crate) fn parse_bool(s: &str) -> Option<bool> {
    match s.trim() {
        "true" | "1" => Some(true),
        "false" | "0" => Some(false),
        _ => None,
    }
}

pub(crate) fn parse_kind(s: &str) -> Option<DependencyKind> {
    Some(match s {
        "dependent" => DependencyKind::Dependent,
        "constant" => DependencyKind::Constant,
        "fixed" => DependencyKind::Fixed,
        "tunable" => DependencyKind::Tunable,
        "discrete" => DependencyKind::Discrete,
        _ => return None,
    })
}

pub(crate) fn parse_u32_list(s: &str) -> Option<Vec<u32>> {
    s.split_ascii_whitespace().map(|t| t.parse().ok()).collect()
}

pub(crate) fn parse_kind_list(s: &str) -> Option<Vec<DependencyKind>> {
    s.split_ascii_whitespace().map(parse_kind).collect()
}

/// A 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pos {
    pub(crate) line: u32,
    pub(crate) column: u32,
}

/// Converts byte offsets into line and column in linear total time for increasing offsets: each
/// byte is looked at once, the column is counted on as the offset advances (never by rescanning
/// the line, which made a description on one long line quadratic).
pub(crate) struct Lines<'a> {
    pub(crate) src: &'a [u8],
    /// Byte offset up to which `line` and `column` are known.
    pub(crate) offset: usize,
    /// 1-based line at `offset`.
    pub(crate) line: u32,
    /// Characters between the start of the line and `offset`.
    pub(crate) column: usize,
}

impl<'a> Lines<'a> {
    pub(crate) fn new(src: &'a str) -> Self {
        Self { src: src.as_bytes(), offset: 0, line: 1, column: 0 }
    }

    pub(crate) fn at(&mut self, offset: usize) -> Pos {
        let offset = offset.min(self.src.len());
        if offset < self.offset {
            // Only on the way to an error message: start over.
            self.offset = 0;
            self.line = 1;
            self.column = 0;
        }
        for b in self.src.get(self.offset..offset).unwrap_or_default() {
            if *b == b'\n' {
                self.line = self.line.saturating_add(1);
                self.column = 0;
            } else if (*b & 0xC0) != 0x80 {
                // A character: a byte that does not continue a UTF-8 sequence.
                self.column += 1;
            }
        }
        self.offset = offset;
        Pos { line: self.line, column: u32::try_from(self.column + 1).unwrap_or(u32::MAX) }
    }
}

/// A start (or empty-element) tag with its attributes, unescaped.
pub(crate) struct Elem {
    /// Local name.
    pub(crate) name: String,
    /// Position of the `<`.
    pub(crate) pos: Pos,
    /// Byte offset just after the tag's `>`.
    pub(crate) end: usize,
    /// `<…/>`: no content and no end tag follow.
    pub(crate) empty: bool,
    /// Attributes: name, unescaped value, position of the name.
    pub(crate) attrs: Vec<(String, String, Pos)>,
}

impl Elem {
    pub(crate) fn get(&self, key: &str) -> Option<&(String, String, Pos)> {
        self.attrs.iter().find(|(k, _, _)| k == key)
    }

    /// The `name` attribute, to say which variable/unit/type a message is about.
    pub(crate) fn name_attr(&self) -> Option<String> {
        self.get("name").map(|(_, v, _)| v.clone())
    }

    pub(crate) fn opt(&self, key: &str) -> Option<String> {
        self.get(key).map(|(_, v, _)| v.clone())
    }

    pub(crate) fn req(&self, key: &str) -> Result<String, ReadError> {
        self.opt(key).ok_or_else(|| ReadError::MissingAttribute {
            line: self.pos.line,
            column: self.pos.column,
            element: self.name.clone(),
            name: self.name_attr(),
            attribute: key.to_owned(),
        })
    }

    pub(crate) fn parse<T>(
        &self,
        key: &str,
        expected: &'static str,
        f: impl Fn(&str) -> Option<T>,
    ) -> Result<Option<T>, ReadError> {
        let Some((k, v, pos)) = self.get(key) else {
            return Ok(None);
        };
        match f(v) {
            Some(x) => Ok(Some(x)),
            None => Err(ReadError::InvalidAttribute {
                line: pos.line,
                column: pos.column,
                element: self.name.clone(),
                name: self.name_attr(),
                attribute: k.clone(),
                value: v.clone(),
                expected,
            }),
        }
    }

    pub(crate) fn req_parse<T>(
        &self,
        key: &str,
        expected: &'static str,
        f: impl Fn(&str) -> Option<T>,
    ) -> Result<T, ReadError> {
        self.req(key)?;
        self.parse(key, expected, f)?.ok_or_else(|| self.missing(key))
    }

    pub(crate) fn missing(&self, key: &str) -> ReadError {
        ReadError::MissingAttribute {
            line: self.pos.line,
            column: self.pos.column,
            element: self.name.clone(),
            name: self.name_attr(),
            attribute: key.to_owned(),
        }
    }

    pub(crate) fn u32(&self, key: &str) -> Result<Option<u32>, ReadError> {
        self.parse(key, UINT, parse_u32)
    }

    pub(crate) fn i32(&self, key: &str) -> Result<Option<i32>, ReadError> {
        self.parse(key, INT, parse_i32)
    }

    pub(crate) fn f64(&self, key: &str) -> Result<Option<f64>, ReadError> {
        self.parse(key, DOUBLE, parse_f64)
    }

    pub(crate) fn bool(&self, key: &str) -> Result<Option<bool>, ReadError> {
        self.parse(key, BOOL, parse_bool)
    }

    /// A boolean flag whose schema default is false.
    pub(crate) fn flag(&self, key: &str) -> Result<bool, ReadError> {
        Ok(self.bool(key)?.unwrap_or(false))
    }
}

/// The events the model is built from; text, comments, declarations and processing
/// instructions are skipped.
pub(crate) enum Ev {
    /// A start tag or an empty-element tag.
    Elem(Elem),
    /// An end tag, with the byte offset of its `<`.
    End(usize),
    /// End of input.
    Eof,
}

/// Byte offsets of the attribute names in a raw start tag (`<name a="1" b='2'>`), in order.
/// Only used to point errors at the attribute; the tag has already been accepted by quick-xml.
pub(crate) fn attribute_offsets(raw: &[u8]) -> Vec<(&[u8], usize)> {
    let mut out = Vec::new();
    let n = raw.len();
    let mut i = 1; // skip '<'
    while i < n && !raw[i].is_ascii_whitespace() && raw[i] != b'/' && raw[i] != b'>' {
        i += 1;
    }
    loop {
        while i < n && raw[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= n || raw[i] == b'/' || raw[i] == b'>' {
            break;
        }
        let key_start = i;
        while i < n && !raw[i].is_ascii_whitespace() && raw[i] != b'=' {
            i += 1;
        }
        out.push((&raw[key_start..i], key_start));
        while i < n && raw[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= n || raw[i] != b'=' {
            break;
        }
        i += 1;
        while i < n && raw[i].is_ascii_whitespace() {
            i += 1;
        }
        let Some(&quote) = raw.get(i) else { break };
        if quote != b'"' && quote != b'\'' {
            break;
        }
        i += 1;
        while i < n && raw[i] != quote {
            i += 1;
        }
        i += 1;
    }
    out
}

pub(crate) struct Parser<'a> {
    pub(crate) src: &'a str,
    pub(crate) reader: Reader<&'a [u8]>,
    pub(crate) lines: Lines<'a>,
}

impl<'a> Parser<'a> {
    pub(crate) fn new(src: &'a str) -> Self {
        let mut reader = Reader::from_str(src);
        let config = reader.config_mut();
        config.check_end_names = true;
        config.trim_text(false);
        Self { src, reader, lines: Lines::new(src) }
    }

    pub(crate) fn offset(&self) -> usize {
        usize::try_from(self.reader.buffer_position()).unwrap_or(usize::MAX)
    }

    pub(crate) fn xml_error_at(&mut self, offset: usize, message: String) -> ReadError {
        let pos = self.lines.at(offset);
        self.xml_error_at_pos(pos, message)
    }

    pub(crate) fn xml_error_at_pos(&self, pos: Pos, message: String) -> ReadError {
        ReadError::Xml { line: pos.line, column: pos.column, message }
    }

    pub(crate) fn next(&mut self) -> Result<Ev, ReadError> {
        loop {
            let before = self.offset();
            let event = match self.reader.read_event() {
                Ok(event) => event,
                Err(e) => {
                    let at = usize::try_from(self.reader.error_position()).unwrap_or(before);
                    return Err(self.xml_error_at(at, e.to_string()));
                }
            };
            match event {
                Event::Start(e) => return self.elem(&e, before, false).map(Ev::Elem),
                Event::Empty(e) => return self.elem(&e, before, true).map(Ev::Elem),
                Event::End(_) => return Ok(Ev::End(before)),
                Event::Eof => return Ok(Ev::Eof),
                _ => {}
            }
        }
    }

    pub(crate) fn elem(&mut self, e: &BytesStart<'_>, start: usize, empty: bool) -> Result<Elem, ReadError> {
        let end = self.offset();
        let pos = self.lines.at(start);
        let name = String::from_utf8_lossy(e.local_name().as_ref()).into_owned();
        let raw = self.src.as_bytes().get(start..end).unwrap_or_default();
        let offsets = attribute_offsets(raw);
        let mut attrs = Vec::new();
        for attr in e.attributes() {
            let attr = match attr {
                Ok(a) => a,
                Err(err) => {
                    let (rel, message) = describe_attr_error(&err);
                    // Positions in AttrError are relative to the byte after '<'.
                    return Err(self.xml_error_at(start + 1 + rel, message));
                }
            };
            let key = String::from_utf8_lossy(attr.key.as_ref()).into_owned();
            let key_offset = offsets.iter().find(|(k, _)| *k == attr.key.as_ref()).map_or(start, |(_, o)| start + o);
            let key_pos = self.lines.at(key_offset);
            let value = match attr.unescape_value() {
                Ok(v) => v.into_owned(),
                Err(err) => return Err(self.xml_error_at_pos(key_pos, format!("attribute {key} of <{name}>: {err}"))),
            };
            attrs.push((key, value, key_pos));
        }
        Ok(Elem { name, pos, end, empty, attrs })
    }

    /// Calls `f` for each child element of `parent` until its end tag; `f` must consume the
    /// child completely (use [`Parser::skip`] for children it does not know).
    pub(crate) fn children(
        &mut self,
        parent: &Elem,
        mut f: impl FnMut(&mut Self, Elem) -> Result<(), ReadError>,
    ) -> Result<(), ReadError> {
        if parent.empty {
            return Ok(());
        }
        loop {
            match self.next()? {
                Ev::Elem(child) => f(self, child)?,
                Ev::End(_) => return Ok(()),
                Ev::Eof => return Err(self.unclosed(parent)),
            }
        }
    }

    pub(crate) fn unclosed(&mut self, e: &Elem) -> ReadError {
        let message = format!(
            "unexpected end of the document: <{}> of line {}, column {} is not closed",
            e.name, e.pos.line, e.pos.column
        );
        self.xml_error_at(self.src.len(), message)
    }

    /// Skips the content of `e` up to its end tag; returns the byte offset of that end tag.
    pub(crate) fn skip(&mut self, e: &Elem) -> Result<usize, ReadError> {
        if e.empty {
            return Ok(e.end);
        }
        let mut depth = 0usize;
        loop {
            match self.next()? {
                Ev::Elem(child) => {
                    if !child.empty {
                        depth += 1;
                    }
                }
                Ev::End(at) => {
                    if depth == 0 {
                        return Ok(at);
                    }
                    depth -= 1;
                }
                Ev::Eof => return Err(self.unclosed(e)),
            }
        }
    }

    /// Skips an element whose content is of no interest.
    pub(crate) fn ignore(&mut self, e: Elem) -> Result<(), ReadError> {
        self.skip(&e).map(|_| ())
    }
}

/// Offset (relative to the byte after `<`) and message of an attribute syntax error.
pub(crate) fn describe_attr_error(err: &AttrError) -> (usize, String) {
    match *err {
        AttrError::ExpectedEq(p) => (p, "attribute name not followed by `=`".into()),
        AttrError::ExpectedValue(p) => (p, "`=` not followed by an attribute value".into()),
        AttrError::UnquotedValue(p) => (p, "attribute value not in quotes".into()),
        AttrError::ExpectedQuote(p, q) => {
            (p, format!("missing closing quote `{}` of an attribute value", char::from(q)))
        }
        AttrError::Duplicated(p, _) => (p, "duplicated attribute".into()),
    }
}
