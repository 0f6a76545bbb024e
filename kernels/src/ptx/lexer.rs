//! Lexer: PTX source text to a flat list of tokens, each with its line,
//! column and byte span. Comments are dropped here; directives that must be
//! kept verbatim (`.section`, `.loc`, ...) are recovered by the parser from
//! the byte spans.

use super::error::PtxError;

/// What a token is. Texts are kept verbatim so printing reproduces them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenKind {
    /// `foo`, `%r12`, `%ctaid`, `$L__BB0_3`, `_Z3fooPf_param_0`, `_`.
    Ident(String),
    /// A dotted part without its dot: `.reg` is `Directive("reg")`,
    /// `ld.param.u32` is `Ident("ld")` followed by two adjacent directives.
    Directive(String),
    /// Integer literal text: `12`, `0x1F`, `017`, `0b101`, `4U`.
    Int(String),
    /// Float literal text: `0f3F800000`, `0d3FF0000000000000`, `1.5`, `9.5`.
    Float(String),
    /// String contents between the quotes, escapes kept as written.
    Str(String),
    /// One of `{ } ( ) [ ] , ; : @ ! + - < > | =`.
    Punct(char),
}

/// A token with its position. `spaced` is true when whitespace or a comment
/// separates it from the previous token: `ld.param` and `ld .param` differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub kind: TokenKind,
    pub line: u32,
    pub column: u32,
    /// Column just past the token's last character (tokens never span lines).
    pub end_column: u32,
    pub start: usize,
    pub end: usize,
    pub spaced: bool,
}

impl TokenKind {
    /// How the token reads in an error message.
    pub fn describe(&self) -> String {
        match self {
            TokenKind::Ident(s) => format!("`{s}`"),
            TokenKind::Directive(s) => format!("`.{s}`"),
            TokenKind::Int(s) | TokenKind::Float(s) => format!("`{s}`"),
            TokenKind::Str(s) => format!("\"{s}\""),
            TokenKind::Punct(c) => format!("`{c}`"),
        }
    }
}

const PUNCT: &[u8] = b"{}()[],;:@!+-<>|=";

fn ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b == b'$' || b == b'%'
}

fn ident_continue(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

struct Lexer<'a> {
    src: &'a [u8],
    pos: usize,
    line: u32,
    line_start: usize,
}

impl Lexer<'_> {
    fn peek(&self, ahead: usize) -> Option<u8> {
        self.src.get(self.pos + ahead).copied()
    }

    fn column_at(&self, pos: usize) -> u32 {
        u32::try_from(pos.saturating_sub(self.line_start) + 1).unwrap_or(u32::MAX)
    }

    fn error(&self, pos: usize, expected: &str, found: String) -> PtxError {
        PtxError::syntax(self.line, self.column_at(pos), expected, found)
    }

    /// Skips whitespace and comments; returns whether anything was skipped.
    fn skip_trivia(&mut self) -> Result<bool, PtxError> {
        let mut skipped = false;
        loop {
            match self.peek(0) {
                Some(b'\n') => {
                    self.pos += 1;
                    self.line = self.line.saturating_add(1);
                    self.line_start = self.pos;
                }
                Some(b' ' | b'\t' | b'\r' | 0x0c) => self.pos += 1,
                Some(b'/') if self.peek(1) == Some(b'/') => {
                    while let Some(b) = self.peek(0) {
                        if b == b'\n' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                Some(b'/') if self.peek(1) == Some(b'*') => {
                    let (open_line, open_col) = (self.line, self.column_at(self.pos));
                    self.pos += 2;
                    loop {
                        match self.peek(0) {
                            None => {
                                return Err(PtxError::syntax(
                                    open_line,
                                    open_col,
                                    "`*/` closing this comment",
                                    "end of input",
                                ))
                            }
                            Some(b'*') if self.peek(1) == Some(b'/') => {
                                self.pos += 2;
                                break;
                            }
                            Some(b'\n') => {
                                self.pos += 1;
                                self.line = self.line.saturating_add(1);
                                self.line_start = self.pos;
                            }
                            Some(_) => self.pos += 1,
                        }
                    }
                }
                _ => return Ok(skipped),
            }
            skipped = true;
        }
    }

    fn take_while(&mut self, f: impl Fn(u8) -> bool) {
        while self.peek(0).is_some_and(&f) {
            self.pos += 1;
        }
    }

    fn text(&self, start: usize) -> String {
        String::from_utf8_lossy(self.src.get(start..self.pos).unwrap_or_default()).into_owned()
    }

    fn number(&mut self, start: usize) -> Result<TokenKind, PtxError> {
        let first = self.peek(0).unwrap_or(b'0');
        let second = self.peek(1).unwrap_or(b' ');
        let kind = if first == b'0' && matches!(second, b'f' | b'F' | b'd' | b'D') {
            // Raw IEEE bits: 0f + 8 hex digits (f32), 0d + 16 (f64).
            self.pos += 2;
            let digits_start = self.pos;
            self.take_while(|b| b.is_ascii_hexdigit());
            let want = if matches!(second, b'f' | b'F') { 8 } else { 16 };
            if self.pos - digits_start != want {
                return Err(self.error(
                    start,
                    &format!("{want} hex digits in a float literal"),
                    self.text(start),
                ));
            }
            TokenKind::Float(self.text(start))
        } else if first == b'0' && matches!(second, b'x' | b'X' | b'b' | b'B') {
            self.pos += 2;
            let digits_start = self.pos;
            if matches!(second, b'x' | b'X') {
                self.take_while(|b| b.is_ascii_hexdigit());
            } else {
                self.take_while(|b| b == b'0' || b == b'1');
            }
            if self.pos == digits_start {
                return Err(self.error(start, "digits after the radix prefix", self.text(start)));
            }
            if self.peek(0) == Some(b'U') {
                self.pos += 1;
            }
            TokenKind::Int(self.text(start))
        } else {
            self.take_while(|b| b.is_ascii_digit());
            let mut float = false;
            if self.peek(0) == Some(b'.') && self.peek(1).is_some_and(|b| b.is_ascii_digit()) {
                float = true;
                self.pos += 1;
                self.take_while(|b| b.is_ascii_digit());
            }
            if matches!(self.peek(0), Some(b'e' | b'E')) {
                let sign = usize::from(matches!(self.peek(1), Some(b'+' | b'-')));
                if self.peek(1 + sign).is_some_and(|b| b.is_ascii_digit()) {
                    float = true;
                    self.pos += 1 + sign;
                    self.take_while(|b| b.is_ascii_digit());
                }
            }
            if float {
                TokenKind::Float(self.text(start))
            } else {
                if self.peek(0) == Some(b'U') {
                    self.pos += 1;
                }
                let text = self.text(start);
                // A leading 0 means octal: every digit must be below 8.
                if text.len() > 1
                    && text.starts_with('0')
                    && text.bytes().any(|b| b == b'8' || b == b'9')
                {
                    return Err(self.error(start, "an octal literal", text));
                }
                TokenKind::Int(text)
            }
        };
        if self.peek(0).is_some_and(ident_continue) {
            self.take_while(ident_continue);
            return Err(self.error(start, "a number", self.text(start)));
        }
        Ok(kind)
    }

    fn string(&mut self, start: usize) -> Result<TokenKind, PtxError> {
        self.pos += 1;
        loop {
            match self.peek(0) {
                None | Some(b'\n') => {
                    return Err(self.error(start, "`\"` closing this string", "end of line".into()))
                }
                Some(b'"') => {
                    self.pos += 1;
                    let inner = self.src.get(start + 1..self.pos - 1).unwrap_or_default();
                    return Ok(TokenKind::Str(String::from_utf8_lossy(inner).into_owned()));
                }
                Some(b'\\') => self.pos += 2.min(self.src.len() - self.pos),
                Some(_) => self.pos += 1,
            }
        }
    }

    fn token(&mut self) -> Result<Option<Token>, PtxError> {
        let spaced = self.skip_trivia()? || self.pos == 0;
        let start = self.pos;
        let Some(b) = self.peek(0) else {
            return Ok(None);
        };
        let (line, column) = (self.line, self.column_at(start));
        let kind = if ident_start(b) {
            self.pos += 1;
            self.take_while(ident_continue);
            if b == b'%' && self.pos == start + 1 {
                return Err(self.error(start, "a register name after `%`", "`%`".into()));
            }
            TokenKind::Ident(self.text(start))
        } else if b == b'.' {
            self.pos += 1;
            self.take_while(ident_continue);
            if self.pos == start + 1 {
                return Err(self.error(
                    start,
                    "a directive or modifier name after `.`",
                    "`.`".into(),
                ));
            }
            TokenKind::Directive(self.text(start + 1))
        } else if b.is_ascii_digit() {
            self.number(start)?
        } else if b == b'"' {
            self.string(start)?
        } else if PUNCT.contains(&b) {
            self.pos += 1;
            TokenKind::Punct(char::from(b))
        } else {
            let found = match std::str::from_utf8(self.src.get(start..).unwrap_or_default()) {
                Ok(s) => s
                    .chars()
                    .next()
                    .map_or_else(String::new, |c| format!("`{c}`")),
                Err(_) => format!("byte 0x{b:02x}"),
            };
            return Err(self.error(start, "a PTX token", found));
        };
        let end_column = self.column_at(self.pos);
        Ok(Some(Token {
            kind,
            line,
            column,
            end_column,
            start,
            end: self.pos,
            spaced,
        }))
    }
}

/// Splits `src` into tokens. Fails on the first character that starts no
/// PTX token, with its line and column.
pub fn tokenize(src: &str) -> Result<Vec<Token>, PtxError> {
    let mut lexer = Lexer {
        src: src.as_bytes(),
        pos: 0,
        line: 1,
        line_start: 0,
    };
    let mut tokens = Vec::new();
    while let Some(tok) = lexer.token()? {
        tokens.push(tok);
    }
    Ok(tokens)
}

/// The value of an integer literal as the lexer wrote it (`0x1F`, `017`,
/// `0b101`, `12U`), or `None` if it does not fit in 64 bits.
pub fn int_value(text: &str) -> Option<u64> {
    let t = text.strip_suffix('U').unwrap_or(text);
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else if let Some(b) = t.strip_prefix("0b").or_else(|| t.strip_prefix("0B")) {
        u64::from_str_radix(b, 2).ok()
    } else if t.len() > 1 && t.starts_with('0') {
        u64::from_str_radix(&t[1..], 8).ok()
    } else {
        t.parse().ok()
    }
}
