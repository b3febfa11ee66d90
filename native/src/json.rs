//! unwrap.json_container: what `json.loads` (or orjson, where it reads the text exactly) gives
//! for a text that starts with an object or an array, read with the grammar of CPython's C
//! scanner (strict strings, ASCII digits, NaN / Infinity / -Infinity, exact integers, floats
//! correctly rounded as Python's float() rounds them, duplicate keys: the last value at the
//! first key's place).
//!
//! Handed back: lone surrogates (a str Rust cannot hold), nesting past 256 levels (json.loads
//! may then stop at the interpreter's recursion limit, which depends on the caller's stack) and
//! integers past 4,300 digits (Python's int() limit is a setting).

use crate::common::DErr;
use crate::tree::{Node, Str, StrMapBuilder};

/// The nesting the reader follows (unwrap._ORJSON_DEPTH); deeper values are handed back.
pub const MAX_NESTING: usize = 256;
/// Python's default int_max_str_digits.
const MAX_INT_DIGITS: usize = 4300;

/// Why reading stopped: json.loads raises (the text is shown as text), or the value goes back.
enum Stop {
    NotJson,
    HandBack,
}

struct Parser<'a> {
    src: &'a [u8],
    pos: usize,
}

#[inline]
fn ws(b: u8) -> bool {
    b == b' ' || b == b'\t' || b == b'\n' || b == b'\r'
}

/// json_container(text) for the text `payload[base..base+len]`; `nodes`: the budget's node
/// limit. Ok(None): no JSON container.
pub fn json_container(payload: &[u8], base: usize, len: usize, nodes: usize) -> Result<Option<Node>, DErr> {
    let text = &payload[base..base + len];
    // head: the first character after whitespace (Python's str.isspace/lstrip take more
    // characters as space, but a text starting with any of those fails json.loads anyway)
    let mut i = 0;
    while i < text.len() && ws(text[i]) {
        i += 1;
    }
    if i >= text.len() || (text[i] != b'{' && text[i] != b'[') {
        return Ok(None);
    }
    // the budget: more values than nodes are not parsed
    if text.len() > nodes && text.iter().filter(|&&b| (b & 0xC0) != 0x80).count() > nodes {
        let count = text.iter().filter(|&&b| b == b',' || b == b'[' || b == b'{').count();
        if count > nodes {
            return Ok(None);
        }
    }
    let mut parser = Parser { src: payload, pos: base + i };
    let end = base + len;
    match parser.value(0, end) {
        Ok(node) => {
            let mut p = parser.pos;
            while p < end && ws(payload[p]) {
                p += 1;
            }
            if p != end {
                return Ok(None); // extra data
            }
            Ok(Some(node))
        }
        Err(Stop::NotJson) => Ok(None),
        Err(Stop::HandBack) => Err(DErr::HandBack),
    }
}

impl Parser<'_> {
    #[inline]
    fn skip_ws(&mut self, end: usize) {
        while self.pos < end && ws(self.src[self.pos]) {
            self.pos += 1;
        }
    }

    fn value(&mut self, depth: usize, end: usize) -> Result<Node, Stop> {
        if self.pos >= end {
            return Err(Stop::NotJson);
        }
        let b = self.src[self.pos];
        match b {
            b'"' => {
                self.pos += 1;
                Ok(Node::Str(self.string(end)?))
            }
            b'{' => {
                if depth >= MAX_NESTING {
                    return Err(Stop::HandBack);
                }
                self.pos += 1;
                self.object(depth + 1, end)
            }
            b'[' => {
                if depth >= MAX_NESTING {
                    return Err(Stop::HandBack);
                }
                self.pos += 1;
                self.array(depth + 1, end)
            }
            b'n' => self.constant(b"null", Node::Null, end),
            b't' => self.constant(b"true", Node::Bool(true), end),
            b'f' => self.constant(b"false", Node::Bool(false), end),
            b'N' => self.constant(b"NaN", Node::Float(f64::NAN), end),
            b'I' => self.constant(b"Infinity", Node::Float(f64::INFINITY), end),
            b'-' if self.src[self.pos..end].starts_with(b"-Infinity") => {
                self.pos += 9;
                Ok(Node::Float(f64::NEG_INFINITY))
            }
            _ => self.number(end),
        }
    }

    fn constant(&mut self, word: &[u8], node: Node, end: usize) -> Result<Node, Stop> {
        if self.src[self.pos..end].starts_with(word) {
            self.pos += word.len();
            Ok(node)
        } else {
            Err(Stop::NotJson)
        }
    }

    fn number(&mut self, end: usize) -> Result<Node, Stop> {
        let src = self.src;
        let start = self.pos;
        let mut i = start;
        if i < end && src[i] == b'-' {
            i += 1;
        }
        if i < end && (b'1'..=b'9').contains(&src[i]) {
            i += 1;
            while i < end && src[i].is_ascii_digit() {
                i += 1;
            }
        } else if i < end && src[i] == b'0' {
            i += 1;
        } else {
            return Err(Stop::NotJson);
        }
        let int_end = i;
        let mut float = false;
        if i + 1 < end && src[i] == b'.' && src[i + 1].is_ascii_digit() {
            i += 2;
            while i < end && src[i].is_ascii_digit() {
                i += 1;
            }
            float = true;
        }
        if i < end && (src[i] == b'e' || src[i] == b'E') {
            let mut j = i + 1;
            if j < end && (src[j] == b'-' || src[j] == b'+') {
                j += 1;
            }
            let digits = j;
            while j < end && src[j].is_ascii_digit() {
                j += 1;
            }
            if j > digits {
                i = j;
                float = true;
            }
        }
        self.pos = i;
        // ASCII only: the slice is valid UTF-8
        let text = std::str::from_utf8(&src[start..i]).map_err(|_| Stop::NotJson)?;
        if float {
            return text.parse::<f64>().map(Node::Float).map_err(|_| Stop::HandBack);
        }
        let digits = int_end - start - (src[start] == b'-') as usize;
        if digits <= 18 {
            return text.parse::<i64>().map(Node::Int).map_err(|_| Stop::HandBack);
        }
        if let Ok(v) = text.parse::<i128>() {
            if let Ok(small) = i64::try_from(v) {
                return Ok(Node::Int(small));
            }
            return Ok(Node::Wide(v));
        }
        if digits > MAX_INT_DIGITS {
            return Err(Stop::HandBack);
        }
        Ok(Node::BigInt(text.into()))
    }

    /// A string after its opening quote: a span of the payload when it has no escapes.
    fn string(&mut self, end: usize) -> Result<Str, Stop> {
        let src = self.src;
        let start = self.pos;
        let mut i = start;
        // the common case: no escape
        while i < end {
            let b = src[i];
            if b == b'"' {
                self.pos = i + 1;
                return Ok(Str::Span(start as u32, (i - start) as u32));
            }
            if b == b'\\' {
                break;
            }
            if b < 0x20 {
                return Err(Stop::NotJson);
            }
            i += 1;
        }
        if i >= end {
            return Err(Stop::NotJson);
        }
        let mut out: Vec<u8> = src[start..i].to_vec();
        while i < end {
            let b = src[i];
            if b == b'"' {
                self.pos = i + 1;
                // SAFETY-free: out holds UTF-8 copied from the text and encoded scalar values
                let text = String::from_utf8(out).map_err(|_| Stop::HandBack)?;
                return Ok(Str::Owned(text.into_boxed_str()));
            }
            if b < 0x20 {
                return Err(Stop::NotJson);
            }
            if b != b'\\' {
                out.push(b);
                i += 1;
                continue;
            }
            if i + 1 >= end {
                return Err(Stop::NotJson);
            }
            let e = src[i + 1];
            i += 2;
            let mapped = match e {
                b'"' => b'"',
                b'\\' => b'\\',
                b'/' => b'/',
                b'b' => 0x08,
                b'f' => 0x0c,
                b'n' => b'\n',
                b'r' => b'\r',
                b't' => b'\t',
                b'u' => {
                    let c = hex4(src, i, end).ok_or(Stop::NotJson)?;
                    i += 4;
                    let scalar = if (0xd800..=0xdbff).contains(&c) {
                        if i + 6 <= end && src[i] == b'\\' && src[i + 1] == b'u' {
                            let c2 = hex4(src, i + 2, end).ok_or(Stop::NotJson)?;
                            if (0xdc00..=0xdfff).contains(&c2) {
                                i += 6;
                                0x10000 + ((c - 0xd800) << 10) + (c2 - 0xdc00)
                            } else {
                                return Err(Stop::HandBack); // a lone high surrogate
                            }
                        } else {
                            return Err(Stop::HandBack);
                        }
                    } else if (0xdc00..=0xdfff).contains(&c) {
                        return Err(Stop::HandBack); // a lone low surrogate
                    } else {
                        c
                    };
                    let ch = char::from_u32(scalar).ok_or(Stop::HandBack)?;
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                    continue;
                }
                _ => return Err(Stop::NotJson),
            };
            out.push(mapped);
        }
        Err(Stop::NotJson)
    }

    fn object(&mut self, depth: usize, end: usize) -> Result<Node, Stop> {
        let mut map = StrMapBuilder::new();
        self.skip_ws(end);
        if self.pos < end && self.src[self.pos] == b'}' {
            self.pos += 1;
            return Ok(map.finish());
        }
        loop {
            if self.pos >= end || self.src[self.pos] != b'"' {
                return Err(Stop::NotJson);
            }
            self.pos += 1;
            let key = self.string(end)?;
            self.skip_ws(end);
            if self.pos >= end || self.src[self.pos] != b':' {
                return Err(Stop::NotJson);
            }
            self.pos += 1;
            self.skip_ws(end);
            let value = self.value(depth, end)?;
            map.insert(key, value, self.src);
            self.skip_ws(end);
            if self.pos < end && self.src[self.pos] == b'}' {
                self.pos += 1;
                return Ok(map.finish());
            }
            if self.pos >= end || self.src[self.pos] != b',' {
                return Err(Stop::NotJson);
            }
            self.pos += 1;
            self.skip_ws(end);
        }
    }

    fn array(&mut self, depth: usize, end: usize) -> Result<Node, Stop> {
        let mut items: Vec<Node> = Vec::new();
        self.skip_ws(end);
        if self.pos < end && self.src[self.pos] == b']' {
            self.pos += 1;
            return Ok(Node::List(items));
        }
        loop {
            items.push(self.value(depth, end)?);
            self.skip_ws(end);
            if self.pos < end && self.src[self.pos] == b']' {
                self.pos += 1;
                return Ok(Node::List(items));
            }
            if self.pos >= end || self.src[self.pos] != b',' {
                return Err(Stop::NotJson);
            }
            self.pos += 1;
            self.skip_ws(end);
        }
    }
}

fn hex4(src: &[u8], at: usize, end: usize) -> Option<u32> {
    if at + 4 > end {
        return None;
    }
    let mut v: u32 = 0;
    for &b in &src[at..at + 4] {
        let d = (b as char).to_digit(16)?;
        v = v << 4 | d;
    }
    Some(v)
}
