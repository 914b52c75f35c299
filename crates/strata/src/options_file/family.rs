//! The spelling of column-family section headers: `[CFOptions "name"]` and
//! `[CFLevelOptions "name" "i"]`.
//!
//! A family's name is any non-empty UTF-8 string, so it is quoted: `"` and `\` are
//! escaped with `\`, and the two characters that would end a line, `\n` and `\r`, are
//! written `\n` and `\r`. Every name has exactly one quoted form, so a header names
//! its family unambiguously, and [`unquote_all`] refuses any other escape.

/// The header name of a family's options section.
pub(super) const SECTION: &str = "CFOptions";

/// The header name of a family's level-options sections.
pub(super) const LEVEL_SECTION: &str = "CFLevelOptions";

/// `name` between double quotes, escaped.
pub(super) fn quote(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 2);
    out.push('"');
    for c in name.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The quoted strings of `arg`, separated by blanks; `None` for anything else (text
/// outside quotes, an unterminated string, an unknown escape).
pub(super) fn unquote_all(arg: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut chars = arg.trim().chars();
    loop {
        match chars.next() {
            None => return Some(out),
            Some(c) if c.is_whitespace() => continue,
            Some('"') => {}
            Some(_) => return None,
        }
        let mut s = String::new();
        loop {
            match chars.next()? {
                '"' => break,
                '\\' => s.push(match chars.next()? {
                    '"' => '"',
                    '\\' => '\\',
                    'n' => '\n',
                    'r' => '\r',
                    _ => return None,
                }),
                c => s.push(c),
            }
        }
        out.push(s);
        // Strings are separated by blanks: `"a""b"` is malformed.
        match chars.clone().next() {
            None => {}
            Some(c) if c.is_whitespace() => {}
            Some(_) => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn headers_quote_and_unquote() {
        assert_eq!(quote("users"), "\"users\"");
        assert_eq!(quote("a\"b\\c\nd"), "\"a\\\"b\\\\c\\nd\"");
        assert_eq!(
            unquote_all(" \"a\\\"b\"  \"0\" "),
            Some(vec!["a\"b".to_string(), "0".to_string()])
        );
        for bad in ["users", "\"open", "\"a\\x\"", "\"a\"\"b\"", "\"a\" b"] {
            assert_eq!(unquote_all(bad), None, "{bad}");
        }
    }

    proptest! {
        #[test]
        fn every_name_round_trips(name in "\\PC*|[\"\\\\\n\r ]{0,8}") {
            let quoted = quote(&name);
            prop_assert!(!quoted.contains('\n') && !quoted.contains('\r'));
            prop_assert_eq!(unquote_all(&quoted), Some(vec![name]));
        }
    }
}
