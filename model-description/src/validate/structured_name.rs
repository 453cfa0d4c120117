//! The grammar of structured variable names (FMI 2.0.4 §2.2.9).

/// Checks a name against the EBNF of FMI 2.0 §2.2.9 (`variableNamingConvention="structured"`):
///
/// ```text
/// name          = identifier | "der(" identifier ["," unsignedInteger] ")"
/// identifier    = B-name [arrayIndices] {"." B-name [arrayIndices]}
/// B-name        = nondigit {digit | nondigit} | Q-name
/// Q-name        = "'" (Q-char | escape) {Q-char | escape} "'"
/// arrayIndices  = "[" unsignedInteger {"," unsignedInteger} "]"
/// ```
///
/// Returns the 0-based character position of the first offending character (or the length of
/// the name if it ends too early).
pub fn check_structured_name(name: &str) -> Result<(), usize> {
    let c: Vec<char> = name.chars().collect();
    let mut i = 0;
    if name.starts_with("der(") {
        i = 4;
        identifier(&c, &mut i)?;
        if c.get(i) == Some(&',') {
            i += 1;
            unsigned(&c, &mut i)?;
        }
        expect(&c, &mut i, ')')?;
    } else {
        identifier(&c, &mut i)?;
    }
    if i == c.len() {
        Ok(())
    } else {
        Err(i)
    }
}

fn expect(c: &[char], i: &mut usize, ch: char) -> Result<(), usize> {
    if c.get(*i) == Some(&ch) {
        *i += 1;
        Ok(())
    } else {
        Err(*i)
    }
}

fn is_nondigit(ch: char) -> bool {
    ch == '_' || ch.is_ascii_alphabetic()
}

fn identifier(c: &[char], i: &mut usize) -> Result<(), usize> {
    loop {
        b_name(c, i)?;
        if c.get(*i) == Some(&'[') {
            *i += 1;
            unsigned(c, i)?;
            while c.get(*i) == Some(&',') {
                *i += 1;
                unsigned(c, i)?;
            }
            expect(c, i, ']')?;
        }
        if c.get(*i) == Some(&'.') {
            *i += 1;
        } else {
            return Ok(());
        }
    }
}

fn b_name(c: &[char], i: &mut usize) -> Result<(), usize> {
    match c.get(*i) {
        Some('\'') => q_name(c, i),
        Some(&ch) if is_nondigit(ch) => {
            *i += 1;
            while c.get(*i).is_some_and(|&ch| is_nondigit(ch) || ch.is_ascii_digit()) {
                *i += 1;
            }
            Ok(())
        }
        _ => Err(*i),
    }
}

fn q_name(c: &[char], i: &mut usize) -> Result<(), usize> {
    const PUNCT: &str = "!#$%&()*+,-./:;<>=?@[]^{}|~ ";
    const ESCAPED: &str = "'\"?\\abfnrtv";
    *i += 1; // opening quote
    let start = *i;
    loop {
        match c.get(*i) {
            Some('\'') if *i > start => {
                *i += 1;
                return Ok(());
            }
            Some('\\') => {
                if c.get(*i + 1).is_some_and(|ch| ESCAPED.contains(*ch)) {
                    *i += 2;
                } else {
                    return Err(*i + 1);
                }
            }
            Some(&ch) if is_nondigit(ch) || ch.is_ascii_digit() || PUNCT.contains(ch) => *i += 1,
            _ => return Err(*i),
        }
    }
}

fn unsigned(c: &[char], i: &mut usize) -> Result<(), usize> {
    let start = *i;
    while c.get(*i).is_some_and(char::is_ascii_digit) {
        *i += 1;
    }
    if *i > start {
        Ok(())
    } else {
        Err(*i)
    }
}
