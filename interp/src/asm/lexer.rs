//! Tokens of one source line (comments already stripped by [`strip_comment`]).

use super::AsmErrorKind;

/// One token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Tok {
    /// Identifier, mnemonic, directive (with its leading `.`) or register name.
    Ident(String),
    /// Integer literal (at most 2^64 - 1).
    Num(u128),
    Comma,
    Colon,
    LBrack,
    RBrack,
    LParen,
    RParen,
    Plus,
    Minus,
    /// `<<`
    Shl,
    /// `->`
    Arrow,
}

/// A token with its 1-based start column and the column one past its end.
#[derive(Clone, Debug)]
pub(crate) struct Token {
    pub tok: Tok,
    pub col: usize,
    pub end: usize,
}

/// The line without its comment (`;`, `#` or `//` to the end of the line).
pub(crate) fn strip_comment(chars: &[char]) -> &[char] {
    for i in 0..chars.len() {
        match chars[i] {
            ';' | '#' => return &chars[..i],
            '/' if chars.get(i + 1) == Some(&'/') => return &chars[..i],
            _ => {}
        }
    }
    chars
}

pub(crate) fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == '.'
}

pub(crate) fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '$'
}

/// Parse an integer literal's text (no sign): decimal, `0x`, `0b`, with `_` separators.
pub(crate) fn parse_int(text: &str) -> Result<u128, AsmErrorKind> {
    let bad = || AsmErrorKind::BadNumber(text.to_string());
    let lower = text.to_ascii_lowercase();
    let (digits, radix) = if let Some(r) = lower.strip_prefix("0x") {
        (r, 16)
    } else if let Some(r) = lower.strip_prefix("0b") {
        (r, 2)
    } else {
        (lower.as_str(), 10)
    };
    let mut value: u128 = 0;
    let mut any = false;
    for c in digits.chars() {
        if c == '_' {
            continue;
        }
        let d = c.to_digit(radix).ok_or_else(bad)?;
        any = true;
        value = value * radix as u128 + d as u128;
        if value > u64::MAX as u128 {
            return Err(AsmErrorKind::NumberTooLarge(text.to_string()));
        }
    }
    if !any {
        return Err(bad());
    }
    Ok(value)
}

/// `f32` (true) or `f64` (false), any case: the name of a float literal `f32(x)`.
fn float_kind(name: &[char]) -> Option<bool> {
    let name: String = name.iter().collect::<String>().to_ascii_lowercase();
    match name.as_str() {
        "f32" => Some(true),
        "f64" => Some(false),
        _ => None,
    }
}

/// The float literal whose `(` is at `chars[open]`: `f32(x)` or `f64(x)`, where `x` is a
/// decimal number with optional sign, fraction and exponent, or `inf`, `-inf`, `nan`. Its
/// value is the IEEE 754 bit pattern as an unsigned integer (`f32(2.5)` is `0x40200000`,
/// `f64(-1)` is `0xbff0000000000000`). Returns the value
/// and the index just past the `)`.
pub(crate) fn float_literal(
    chars: &[char],
    open: usize,
    single: bool,
) -> Result<(u128, usize), AsmErrorKind> {
    let close = chars[open..]
        .iter()
        .position(|&c| c == ')')
        .map(|k| open + k);
    let inner: String = match close {
        Some(k) => chars[open + 1..k].iter().collect(),
        None => chars[open + 1..].iter().collect(),
    };
    let text = inner.trim();
    let shown = format!("{}({text})", if single { "f32" } else { "f64" });
    let Some(close) = close else {
        return Err(AsmErrorKind::BadFloat(shown));
    };
    let bits = parse_float_bits(text, single).ok_or(AsmErrorKind::BadFloat(shown))?;
    Ok((bits as u128, close + 1))
}

/// The bit pattern of a decimal float (`2.5`, `-1e-3`, `inf`, `-inf`, `nan`), as f32 (zero-
/// extended) when `single`, else as f64; `nan` is the quiet NaN with sign bit clear
/// (`0x7fc00000`, `0x7ff8000000000000`). `None` when `text` is not such a number (Rust's
/// `infinity`, hex and `_` are refused). `.float`/`.double` read their values with it too.
pub(crate) fn parse_float_bits(text: &str, single: bool) -> Option<u64> {
    let lower = text.to_ascii_lowercase();
    let body = lower.trim_start_matches(['-', '+']);
    let ok = !text.is_empty()
        && (body == "inf"
            || body == "nan"
            || text
                .bytes()
                .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b)));
    if !ok {
        return None;
    }
    if single {
        text.parse::<f32>().ok().map(|v| u64::from(v.to_bits()))
    } else {
        text.parse::<f64>().ok().map(f64::to_bits)
    }
}

/// Tokenize `chars` (a line without comment). On error returns the column and kind.
pub(crate) fn lex(chars: &[char]) -> Result<Vec<Token>, (usize, AsmErrorKind)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let col = i + 1;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let text: String = chars[start..i].iter().collect();
            let v = parse_int(&text).map_err(|k| (col, k))?;
            out.push(Token {
                tok: Tok::Num(v),
                col,
                end: i + 1,
            });
            continue;
        }
        if is_ident_start(c) {
            let start = i;
            while i < chars.len() && is_ident_char(chars[i]) {
                i += 1;
            }
            if chars.get(i) == Some(&'(')
                && let Some(single) = float_kind(&chars[start..i])
            {
                let (bits, end) = float_literal(chars, i, single).map_err(|k| (col, k))?;
                i = end;
                out.push(Token {
                    tok: Tok::Num(bits),
                    col,
                    end: i + 1,
                });
                continue;
            }
            out.push(Token {
                tok: Tok::Ident(chars[start..i].iter().collect()),
                col,
                end: i + 1,
            });
            continue;
        }
        let (tok, len) = match c {
            ',' => (Tok::Comma, 1),
            ':' => (Tok::Colon, 1),
            '[' => (Tok::LBrack, 1),
            ']' => (Tok::RBrack, 1),
            '(' => (Tok::LParen, 1),
            ')' => (Tok::RParen, 1),
            '+' => (Tok::Plus, 1),
            '-' if chars.get(i + 1) == Some(&'>') => (Tok::Arrow, 2),
            '-' => (Tok::Minus, 1),
            '<' if chars.get(i + 1) == Some(&'<') => (Tok::Shl, 2),
            _ => return Err((col, AsmErrorKind::InvalidChar(c))),
        };
        i += len;
        out.push(Token {
            tok,
            col,
            end: i + 1,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(parse_int("0x1_0"), Ok(16));
        assert_eq!(parse_int("0b101"), Ok(5));
        assert_eq!(parse_int("18446744073709551615"), Ok(u64::MAX as u128));
        assert!(matches!(
            parse_int("18446744073709551616"),
            Err(AsmErrorKind::NumberTooLarge(_))
        ));
        assert!(matches!(parse_int("0x"), Err(AsmErrorKind::BadNumber(_))));
        assert!(matches!(parse_int("12a"), Err(AsmErrorKind::BadNumber(_))));
    }

    #[test]
    fn float_literals() {
        let toks = |s: &str| -> Vec<Tok> {
            let chars: Vec<char> = s.chars().collect();
            lex(&chars).unwrap().into_iter().map(|t| t.tok).collect()
        };
        assert_eq!(toks("f32(2.5)"), vec![Tok::Num(0x4020_0000)]);
        assert_eq!(toks("F32( -2.5 )"), vec![Tok::Num(0xc020_0000)]);
        assert_eq!(toks("f64(1)"), vec![Tok::Num(0x3ff0_0000_0000_0000)]);
        assert_eq!(toks("f64(-inf)"), vec![Tok::Num(0xfff0_0000_0000_0000)]);
        assert_eq!(toks("f32(nan)"), vec![Tok::Num(0x7fc0_0000)]);
        assert_eq!(toks("f32(1e-45)"), vec![Tok::Num(1)]);
        // A name `f32` without a parenthesis stays a name.
        assert_eq!(toks("f32 + 1")[0], Tok::Ident("f32".into()));
        for bad in [
            "f32(",
            "f32()",
            "f32(x)",
            "f32(--1)",
            "f64(0x10)",
            "f32(infinity)",
        ] {
            let chars: Vec<char> = bad.chars().collect();
            assert!(
                matches!(lex(&chars), Err((1, AsmErrorKind::BadFloat(_)))),
                "{bad}"
            );
        }
    }

    #[test]
    fn tokens_without_spaces() {
        let chars: Vec<char> = "V.LW[s1+(v2<<3)],->v3".chars().collect();
        let toks: Vec<Tok> = lex(&chars).unwrap().into_iter().map(|t| t.tok).collect();
        assert_eq!(toks.len(), 13);
        assert_eq!(toks[0], Tok::Ident("V.LW".into()));
        assert_eq!(toks[6], Tok::Shl);
        assert_eq!(toks[11], Tok::Arrow);
    }
}
