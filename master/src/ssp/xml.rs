//! A small namespace-aware XML tree with line numbers, for the SSP files (`.ssd`, `.ssv`,
//! `.ssm`): every element knows its namespace, local name, attributes, text and the line it
//! starts on, so every error can name the element and the line.

use quick_xml::events::Event;
use quick_xml::name::ResolveResult;
use quick_xml::NsReader;

/// SSP 1.0 namespaces.
pub const SSD: &str = "http://ssp-standard.org/SSP1/SystemStructureDescription";
/// SystemStructureCommon.
pub const SSC: &str = "http://ssp-standard.org/SSP1/SystemStructureCommon";
/// SystemStructureParameterValues.
pub const SSV: &str = "http://ssp-standard.org/SSP1/SystemStructureParameterValues";
/// SystemStructureParameterMapping.
pub const SSM: &str = "http://ssp-standard.org/SSP1/SystemStructureParameterMapping";
/// SystemStructureSignalDictionary.
pub const SSB: &str = "http://ssp-standard.org/SSP1/SystemStructureSignalDictionary";

/// One element.
#[derive(Debug, Clone, Default)]
pub struct Node {
    /// Namespace URI ("" when unbound).
    pub ns: String,
    /// Local name.
    pub name: String,
    /// Attributes without namespace declarations (local names).
    pub attrs: Vec<(String, String)>,
    /// Child elements.
    pub children: Vec<Node>,
    /// Text and CDATA content, concatenated.
    pub text: String,
    /// Line of the start tag (1-based).
    pub line: usize,
    /// Column of the start tag's `<` (1-based, in characters).
    pub column: usize,
    /// Line and column of each attribute's name, in the order of [`Node::attrs`].
    pub attr_at: Vec<(usize, usize)>,
}

impl Node {
    /// `prefix:Name` with the conventional SSP prefix, for messages.
    pub fn label(&self) -> String {
        let prefix = match self.ns.as_str() {
            SSD => "ssd:",
            SSC => "ssc:",
            SSV => "ssv:",
            SSM => "ssm:",
            SSB => "ssb:",
            _ => "",
        };
        format!("{prefix}{}", self.name)
    }

    /// `ssd:Name (line N, column C)`, the element in messages.
    pub fn at(&self) -> String {
        format!("{} (line {}, column {})", self.label(), self.line, self.column)
    }

    /// `ssd:Name/@attr (line N, column C)`, an attribute in messages (the element's position
    /// when the attribute is absent).
    pub fn at_attr(&self, name: &str) -> String {
        let (line, column) = self
            .attrs
            .iter()
            .position(|(k, _)| k == name)
            .and_then(|i| self.attr_at.get(i).copied())
            .unwrap_or((self.line, self.column));
        format!("{}/@{name} (line {line}, column {column})", self.label())
    }

    /// Whether this is `ns:name`.
    pub fn is(&self, ns: &str, name: &str) -> bool {
        self.ns == ns && self.name == name
    }

    /// An attribute's value.
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// Children `ns:name`.
    pub fn all<'a>(&'a self, ns: &'a str, name: &'a str) -> impl Iterator<Item = &'a Node> + 'a {
        self.children.iter().filter(move |c| c.is(ns, name))
    }

    /// The first child `ns:name`.
    pub fn first(&self, ns: &str, name: &str) -> Option<&Node> {
        self.children.iter().find(|c| c.is(ns, name))
    }
}

/// Line numbers of byte offsets that only grow: each byte is counted once as the offset
/// advances (counting from the start per element made a document of 80 000 lines take 25 s).
struct Lines<'a> {
    text: &'a [u8],
    at: usize,
    line: usize,
    /// Byte offset where line `line` starts.
    line_start: usize,
    /// Bytes counted so far (a test checks that it stays within the document's length).
    scanned: usize,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Self {
        Self { text: text.as_bytes(), at: 0, line: 1, line_start: 0, scanned: 0 }
    }

    /// The 1-based line and column (in characters) of `offset`.
    fn position(&mut self, offset: u64) -> (usize, usize) {
        let off = usize::try_from(offset).unwrap_or(usize::MAX).min(self.text.len());
        if off < self.at {
            // Offsets do not go back; should one, count again from the start.
            (self.at, self.line, self.line_start) = (0, 1, 0);
        }
        let span = self.text.get(self.at..off).unwrap_or_default();
        for (i, &c) in span.iter().enumerate() {
            if c == b'\n' {
                self.line += 1;
                self.line_start = self.at + i + 1;
            }
        }
        self.scanned += span.len();
        self.at = off;
        // Characters, not bytes: UTF-8 continuation bytes do not start one.
        let before = self.text.get(self.line_start..off).unwrap_or_default();
        let column = before.iter().filter(|&&c| c & 0xC0 != 0x80).count() + 1;
        (self.line, column)
    }
}

/// Parses a whole document into its root element; errors carry the line.
pub fn parse(text: &str) -> Result<Node, String> {
    parse_counting(text).0
}

/// [`parse`], and how many bytes the line tracking counted.
fn parse_counting(text: &str) -> (Result<Node, String>, usize) {
    let mut lines = Lines::new(text);
    let r = parse_lines(text, &mut lines);
    (r, lines.scanned)
}

fn parse_lines(text: &str, lines: &mut Lines<'_>) -> Result<Node, String> {
    let mut reader = NsReader::from_str(text);
    let mut stack: Vec<Node> = Vec::new();
    let mut root: Option<Node> = None;
    loop {
        let before = reader.buffer_position();
        let (ns, event) = match reader.read_resolved_event() {
            Ok(x) => x,
            Err(e) => {
                let (line, column) = lines.position(reader.error_position());
                return Err(format!("XML error at line {line}, column {column}: {e}"));
            }
        };
        // The event's span may begin with whitespace before the tag.
        let s = usize::try_from(before).unwrap_or(0).min(text.len());
        let skip = text.get(s..).map_or(0, |rest| rest.len() - rest.trim_start().len());
        let start = before + skip as u64;
        let (line, column) = lines.position(start);
        let (e, empty) = match event {
            Event::Start(e) => (e, false),
            Event::Empty(e) => (e, true),
            Event::End(_) => {
                if let Some(done) = stack.pop() {
                    attach(&mut stack, &mut root, done);
                }
                continue;
            }
            Event::Text(t) => {
                if let Some(top) = stack.last_mut() {
                    let s = t.unescape().map_err(|err| format!("XML error at line {line}: {err}"))?;
                    top.text.push_str(&s);
                }
                continue;
            }
            Event::CData(c) => {
                if let Some(top) = stack.last_mut() {
                    top.text.push_str(&String::from_utf8_lossy(&c.into_inner()));
                }
                continue;
            }
            Event::Eof => break,
            _ => continue,
        };
        let ns = match ns {
            ResolveResult::Bound(n) => String::from_utf8_lossy(n.as_ref()).into_owned(),
            ResolveResult::Unbound => String::new(),
            ResolveResult::Unknown(p) => {
                return Err(format!(
                    "XML error at line {line}: undeclared namespace prefix \"{}\"",
                    String::from_utf8_lossy(&p)
                ))
            }
        };
        let mut node = Node {
            ns,
            name: String::from_utf8_lossy(e.local_name().as_ref()).into_owned(),
            line,
            column,
            ..Node::default()
        };
        // Attributes follow the name in order: each is searched after the previous one.
        let tag = text.as_bytes().get(usize::try_from(start).unwrap_or(usize::MAX)..).unwrap_or_default();
        let tag = &tag[..tag.len().min(usize::try_from(reader.buffer_position() - start).unwrap_or(0))];
        let mut from = 1 + e.name().as_ref().len();
        for a in e.attributes() {
            let a = a.map_err(|err| {
                let (line, column) = lines.position(start + 1 + attr_error_offset(&err) as u64);
                format!("XML error at line {line}, column {column}: {err}")
            })?;
            let key = a.key;
            if key.as_ref() == b"xmlns" || key.prefix().is_some_and(|p| p.as_ref() == b"xmlns") {
                continue;
            }
            let value = a.unescape_value().map_err(|err| format!("XML error at line {line}: {err}"))?;
            let at = find_attr(tag, from, key.as_ref()).unwrap_or(0);
            from = at.max(from);
            node.attr_at.push(lines.position(start + at as u64));
            node.attrs.push((String::from_utf8_lossy(key.local_name().as_ref()).into_owned(), value.into_owned()));
        }
        if empty {
            attach(&mut stack, &mut root, node);
        } else {
            stack.push(node);
        }
    }
    if let Some(open) = stack.last() {
        return Err(format!("XML error: element {} is not closed", open.at()));
    }
    root.ok_or_else(|| "XML error: no root element".to_owned())
}

/// Where in its tag an attribute error is (quick-xml counts from the byte after the `<`).
fn attr_error_offset(e: &quick_xml::events::attributes::AttrError) -> usize {
    use quick_xml::events::attributes::AttrError as A;
    match *e {
        A::ExpectedEq(p) | A::ExpectedValue(p) | A::UnquotedValue(p) | A::ExpectedQuote(p, _) | A::Duplicated(p, _) => {
            p
        }
    }
}

/// The offset in `tag` of the attribute `key` (followed by `=`), searched from `from`.
fn find_attr(tag: &[u8], from: usize, key: &[u8]) -> Option<usize> {
    let mut i = from;
    while i + key.len() <= tag.len() {
        let preceded = tag.get(i.wrapping_sub(1)).is_some_and(u8::is_ascii_whitespace);
        if preceded && tag.get(i..i + key.len()) == Some(key) {
            let rest = tag.get(i + key.len()..).unwrap_or_default();
            if rest.iter().find(|c| !c.is_ascii_whitespace()) == Some(&b'=') {
                return Some(i);
            }
        }
        i += 1;
    }
    None
}

fn attach(stack: &mut [Node], root: &mut Option<Node>, node: Node) {
    match stack.last_mut() {
        Some(parent) => parent.children.push(node),
        None => *root = Some(node),
    }
}

/// An `xs:double`.
pub(super) fn parse_f64(s: &str) -> Option<f64> {
    match s.trim() {
        "INF" => Some(f64::INFINITY),
        "-INF" => Some(f64::NEG_INFINITY),
        "NaN" => Some(f64::NAN),
        t => t.parse().ok(),
    }
}

/// Escapes text for an attribute value or element content.
pub fn escape(s: &str) -> String {
    quick_xml::escape::escape(s).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_numbers_cost_one_pass_over_the_document() {
        // Issue 30 item 4: 80 000 annotation lines (0.9 MB) took 24.8 s, each element's line
        // counted from offset 0.
        let mut doc = String::from("<?xml version=\"1.0\"?>\n<ssd:SystemStructureDescription xmlns:ssd=\"");
        doc.push_str(SSD);
        doc.push_str("\">\n<ssd:Annotations>\n");
        for k in 0..80_000 {
            doc.push_str(&format!("<a k=\"{k}\"/>\n"));
        }
        doc.push_str("</ssd:Annotations>\n<ssd:System name=\"late\"/>\n</ssd:SystemStructureDescription>\n");
        let (root, scanned) = parse_counting(&doc);
        let root = root.unwrap();
        assert!(scanned <= doc.len(), "{scanned} bytes counted for a {}-byte document", doc.len());
        let system = root.first(SSD, "System").unwrap();
        assert_eq!(system.line, 80_005, "{}", system.at());
        let last = root.first(SSD, "Annotations").unwrap().children.last().unwrap();
        assert_eq!((last.line, last.attr("k")), (80_003, Some("79999")));
        // An error after them still has its line.
        let bad = doc.replace("<ssd:System name=\"late\"/>", "<ssd:System name=late/>");
        assert!(parse(&bad).unwrap_err().contains("line 80005"), "{}", parse(&bad).unwrap_err());
    }

    #[test]
    fn elements_and_attributes_name_their_line_and_column_in_characters() {
        // Issue 49 item 5: SSP errors with line and column. Columns count characters (the
        // "é" is two bytes), an attribute on its own line has that line, and a name that is
        // also the suffix of another attribute (`name` in `xname`) is not taken for it.
        let doc = format!(
            "<ssd:SystemStructureDescription xmlns:ssd=\"{SSD}\" version=\"1.0\">\n  <ssd:System xname=\"é\" \n     name=\"s\"/>\n</ssd:SystemStructureDescription>\n"
        );
        let root = parse(&doc).unwrap();
        let system = root.first(SSD, "System").unwrap();
        assert_eq!((system.line, system.column), (2, 3), "{}", system.at());
        assert_eq!(system.at(), "ssd:System (line 2, column 3)");
        assert_eq!(system.at_attr("xname"), "ssd:System/@xname (line 2, column 15)");
        assert_eq!(system.at_attr("name"), "ssd:System/@name (line 3, column 6)");
        // An attribute the element lacks: the element's position.
        assert_eq!(system.at_attr("other"), "ssd:System/@other (line 2, column 3)");
        let bad = doc.replace("name=\"s\"", "name=s");
        let e = parse(&bad).unwrap_err();
        assert!(e.starts_with("XML error at line 3, column 11:"), "{e}");
    }
}
