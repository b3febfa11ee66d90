//! unwrap.json_container: what `json.loads` (or orjson, where it reads the text exactly) gives
//! for a text that starts with an object or an array, read with the grammar of CPython's C
//! scanner (strict strings, ASCII digits, NaN / Infinity / -Infinity, exact integers, floats
//! correctly rounded as Python's float() rounds them, duplicate keys: the last value at the
//! first key's place).
//!
//! Handed back: lone surrogates (a str Rust cannot hold), nesting past 256 levels (json_text
//! reads up to budget.JSON_DEPTH levels and says why it reads no deeper), more commas and
//! brackets than the budget's nodes (json_text.past_budget decides whether the text is past it) and
//! integers past 4,300 digits (Python's int() limit: json_text reads them as LongInt, within the
//! value's digits).

use std::collections::HashSet;

use crate::common::DErr;
use crate::tree::{child, keys_of_node, Node, PathRead, Step, Str, StrMapBuilder};

/// The nesting the reader follows (unwrap._ORJSON_DEPTH); deeper values are handed back.
pub const MAX_NESTING: usize = 256;
/// Python's default int_max_str_digits (numbers.PYTHON_DIGITS): past it the Python engine reads.
const MAX_INT_DIGITS: usize = 4300;
/// query.evaluate.MISS_KEYS: a mapping's keys kept where a path stopped.
const MISS_KEYS: usize = 200;

/// The rest of a path walked in a value built here: the value found, or where it stopped.
fn walk_built(node: &Node, steps: &[Step], first: usize, src: &[u8]) -> PathRead {
    let mut node = node;
    for (offset, step) in steps.iter().enumerate() {
        match child(node, step, src) {
            Some(next) => node = next,
            None => {
                return PathRead::Missing { depth: first + offset, keys: keys_of_node(node, src, MISS_KEYS) };
            }
        }
    }
    PathRead::Node(node.clone())
}

/// Why reading stopped: json.loads raises (the text is shown as text), or the value goes back.
enum Stop {
    NotJson,
    HandBack,
}

struct Parser<'a> {
    src: &'a [u8],
    pos: usize,
    /// json_paths' `gaps`: the whitespace runs skipped between tokens, as (start, end) pairs, while
    /// recording (None: not asked, or past MAX_GAPS runs)
    gaps: Option<Vec<u32>>,
    /// json_check's `values`: the text is checked as its tree would be read (a lone surrogate
    /// hands the value back) and its objects' keys are watched (`tree_needed`)
    values: bool,
    /// With `values`: a key met twice in one object, or a key with escapes, was seen: the text
    /// cannot be read as its value in place (a dict keeps a repeated key's first place and
    /// last value; an escaped key is compared by its characters): its tree is built instead
    tree_needed: bool,
    /// With `values`: each value skipped, and each key, marked where it is (Checked.marks)
    marks: Option<Vec<Mark>>,
}

impl<'a> Parser<'a> {
    fn at(src: &'a [u8], pos: usize) -> Parser<'a> {
        Parser { src, pos, gaps: None, values: false, tree_needed: false, marks: None }
    }

    /// A mark opened at the value (or key) starting here: its index (None: not marking).
    #[inline(always)]
    fn open_mark(&mut self) -> Option<usize> {
        let marks = self.marks.as_mut()?;
        marks.push(Mark { start: self.pos as u32, end: 0, next: 0, escaped: false });
        Some(marks.len() - 1)
    }

    /// The mark `at` closed where the value ends (here).
    #[inline(always)]
    fn close_mark(&mut self, at: Option<usize>, escaped: bool) {
        if let (Some(at), Some(marks)) = (at, self.marks.as_mut()) {
            let next = marks.len() as u32;
            let mark = &mut marks[at];
            mark.end = self.pos as u32;
            mark.next = next;
            mark.escaped = escaped;
        }
    }
}

/// Where one value (or an object's key) of a checked JSON text is, in document order (a
/// container before its items, a key before its value): its text's start and end (past its last
/// byte) and the index past the marks of the values inside it (its own index + 1 for a
/// scalar): the text's value is read in place from them (held.rs's Place::Text), its strings
/// and containers never scanned again. `escaped`: a string with escapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mark {
    pub start: u32,
    pub end: u32,
    pub next: u32,
    pub escaped: bool,
}

/// The keys of one object seen so far, while a text is checked for its value (Parser::values):
/// a few on the stack, compared as bytes (a key with escapes is not compared: the tree is built).
struct KeysSeen<'a> {
    few: [(u32, u32); KEYS_ON_STACK],
    count: usize,
    many: Option<HashSet<&'a [u8]>>,
}

/// Keys an object's check compares on the stack (more: a set of them).
const KEYS_ON_STACK: usize = 16;

impl<'a> KeysSeen<'a> {
    fn new() -> KeysSeen<'a> {
        KeysSeen { few: [(0, 0); KEYS_ON_STACK], count: 0, many: None }
    }

    /// Whether `key` (src[start..close], no escapes) was seen before in this object; noted.
    fn repeated(&mut self, src: &'a [u8], start: usize, close: usize) -> bool {
        let key = &src[start..close];
        if let Some(many) = &mut self.many {
            return !many.insert(key);
        }
        let len = close - start;
        for &(at, n) in &self.few[..self.count] {
            if n as usize == len && &src[at as usize..at as usize + len] == key {
                return true;
            }
        }
        if self.count < KEYS_ON_STACK {
            self.few[self.count] = (start as u32, len as u32);
            self.count += 1;
        } else {
            let mut many: HashSet<&'a [u8]> = HashSet::with_capacity(2 * KEYS_ON_STACK);
            for &(at, n) in &self.few {
                many.insert(&src[at as usize..(at + n) as usize]);
            }
            many.insert(key);
            self.many = Some(many);
        }
        false
    }
}

/// The most whitespace runs json_paths records (more: none recorded, the text minified by
/// held.rs minified_into as without them); it bounds the list at 2 KB a text.
const MAX_GAPS: usize = 256;

#[inline]
fn ws(b: u8) -> bool {
    b == b' ' || b == b'\t' || b == b'\n' || b == b'\r'
}

/// Where the JSON text starts (past whitespace), when it starts an object or an array and its
/// node count is within the budget: json_container's tests before it parses. A text that may be
/// past the node budget is handed back: json_text.past_budget says whether it is, and why.
fn start(payload: &[u8], base: usize, len: usize, nodes: usize) -> Result<Option<usize>, DErr> {
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
    // the budget: more commas and brackets than nodes may be more values than nodes (the text's
    // characters are counted first on the Python side, but a comma or bracket is a character, so
    // past `nodes` of those the characters are too: counting those alone decides, and stops past
    // `nodes`); whether they are (those in strings are no values) the Python engine says
    if text.len() > nodes && crate::scan::more_of_three(text, b',', b'[', b'{', nodes) {
        return Err(DErr::HandBack);
    }
    Ok(Some(base + i))
}

/// Only whitespace from `pos` to `end` (else json.loads says "Extra data").
fn rest_is_ws(payload: &[u8], pos: usize, end: usize) -> bool {
    payload[pos..end].iter().all(|&b| ws(b))
}

/// json_container(text) for the text `payload[base..base+len]`; `nodes`: the budget's node
/// limit. Ok(None): no JSON container.
pub fn json_container(payload: &[u8], base: usize, len: usize, nodes: usize) -> Result<Option<Node>, DErr> {
    let Some(at) = start(payload, base, len, nodes)? else { return Ok(None) };
    let mut parser = Parser::at(payload, at);
    let end = base + len;
    match parser.value(0, end) {
        Ok(node) if rest_is_ws(payload, parser.pos, end) => Ok(Some(node)),
        Ok(_) | Err(Stop::NotJson) => Ok(None),
        Err(Stop::HandBack) => Err(DErr::HandBack),
    }
}

/// Paths json_paths follows on the stack (more: on the heap).
const INLINE_STEPS: usize = 8;

/// json_container(text), read only for `paths` (what query.evaluate's read() would find in the
/// container): the text is validated whole, only the values at the paths are built. Ok(None):
/// no JSON container.
pub fn json_paths(
    payload: &[u8],
    base: usize,
    len: usize,
    nodes: usize,
    paths: &[Vec<Step>],
) -> Result<Option<Vec<PathRead>>, DErr> {
    Ok(json_check(payload, base, len, nodes, paths, Check::default())?.map(|checked| checked.reads))
}

/// What json_check notes beside the paths' reads.
#[derive(Clone, Copy, Default)]
pub struct Check {
    /// The text's whitespace runs outside its strings (Checked.gaps).
    pub gaps: bool,
    /// The text is checked as its value will be read from it in place (held.rs's Place::Text):
    /// a lone surrogate hands the value back as json_container would, each value is marked
    /// where it is (Checked.marks), and a text that cannot be read in place says so
    /// (Checked.tree_needed).
    pub values: bool,
}

/// json_check's reading of a JSON container's text.
pub struct Checked {
    /// Each path's read.
    pub reads: Vec<PathRead>,
    /// With Check.gaps: where the text's whitespace outside its strings is (the runs before,
    /// between and after its tokens, as (start, end) pairs of offsets in `payload`, in order;
    /// None past MAX_GAPS runs or when not asked): the text without those runs is its minified
    /// spelling (held.rs payload_text_into), found by the validation's own walk.
    pub gaps: Option<Vec<u32>>,
    /// With Check.values: an object holds a key twice, or a key with escapes: its value is
    /// json_container's tree, not its text read in place.
    pub tree_needed: bool,
    /// With Check.values (and no tree needed): each value's mark, the whole text's first.
    pub marks: Option<Vec<Mark>>,
}

/// json_paths, and what `check` asks noted as the text is validated (Checked). Ok(None): no
/// JSON container.
pub fn json_check(
    payload: &[u8],
    base: usize,
    len: usize,
    nodes: usize,
    paths: &[Vec<Step>],
    check: Check,
) -> Result<Option<Checked>, DErr> {
    let Some(at) = start(payload, base, len, nodes)? else { return Ok(None) };
    let mut parser = Parser::at(payload, at);
    parser.gaps = check.gaps.then(|| Vec::with_capacity(64));
    parser.values = check.values;
    if at > base {
        parser.gap(base, at);
    }
    let end = base + len;
    if check.values && !paths.is_empty() {
        // the marks are the skipping walk's: a walk of the whole text first, then the paths'
        let mut marking = Parser::at(payload, at);
        marking.values = true;
        marking.marks = Some(Vec::new());
        match marking.skip(0, end) {
            Ok(()) => {}
            Err(Stop::NotJson) => return Ok(None),
            Err(Stop::HandBack) => return Err(DErr::HandBack),
        }
        parser.tree_needed = marking.tree_needed;
        parser.marks = marking.marks;
        parser.values = false;
    } else if check.values {
        parser.marks = Some(Vec::with_capacity(32));
    }
    let mut out: Vec<PathRead> =
        paths.iter().map(|_| PathRead::Missing { depth: 0, keys: Vec::new() }).collect();
    // (a few paths on the stack, no allocation a value)
    let mut inline = [(0usize, 0usize); INLINE_STEPS];
    let many: Vec<(usize, usize)>;
    let selected: &[(usize, usize)] = if paths.len() <= INLINE_STEPS {
        for (p, slot) in inline.iter_mut().enumerate().take(paths.len()) {
            *slot = (p, 0);
        }
        &inline[..paths.len()]
    } else {
        many = (0..paths.len()).map(|p| (p, 0)).collect();
        &many
    };
    match parser.select(0, end, selected, paths, &mut out) {
        Ok(()) if rest_is_ws(payload, parser.pos, end) => {
            if parser.pos < end {
                parser.gap(parser.pos, end);
            }
            let marks = if parser.tree_needed { None } else { parser.marks };
            Ok(Some(Checked { reads: out, gaps: parser.gaps, tree_needed: parser.tree_needed, marks }))
        }
        Ok(()) | Err(Stop::NotJson) => Ok(None),
        Err(Stop::HandBack) => Err(DErr::HandBack),
    }
}

impl<'a> Parser<'a> {
    #[inline(always)]
    fn skip_ws(&mut self, end: usize) {
        let from = self.pos;
        while self.pos < end && ws(self.src[self.pos]) {
            self.pos += 1;
        }
        if self.pos != from && self.gaps.is_some() {
            self.gap(from, self.pos);
        }
    }

    /// A whitespace run `from..to` outside the strings, recorded while json_paths_gaps asks
    /// (past MAX_GAPS runs none are: the list is dropped).
    #[inline(never)]
    fn gap(&mut self, from: usize, to: usize) {
        if let Some(gaps) = &mut self.gaps {
            match (u32::try_from(from), u32::try_from(to)) {
                (Ok(from), Ok(to)) if gaps.len() < 2 * MAX_GAPS => {
                    gaps.push(from);
                    gaps.push(to);
                }
                _ => self.gaps = None,
            }
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

    /// A value validated as value() reads it, without building it (marked where marks are kept).
    fn skip(&mut self, depth: usize, end: usize) -> Result<(), Stop> {
        if self.marks.is_none() {
            return self.skip_value(depth, end).map(|_| ());
        }
        let mark = self.open_mark();
        let escaped = self.skip_value(depth, end)?;
        self.close_mark(mark, escaped);
        Ok(())
    }

    /// skip()'s reading: whether the value was a string with escapes.
    fn skip_value(&mut self, depth: usize, end: usize) -> Result<bool, Stop> {
        if self.pos >= end {
            return Err(Stop::NotJson);
        }
        match self.src[self.pos] {
            b'"' => {
                self.pos += 1;
                let (_, _, escaped, lone) = self.scan_string(end)?;
                if lone && self.values {
                    return Err(Stop::HandBack); // (as value() hands it back)
                }
                Ok(escaped)
            }
            b'{' => {
                if depth >= MAX_NESTING {
                    return Err(Stop::HandBack);
                }
                self.pos += 1;
                self.members(end, |parser, _key| parser.skip(depth + 1, end)).map(|_| false)
            }
            b'[' => {
                if depth >= MAX_NESTING {
                    return Err(Stop::HandBack);
                }
                self.pos += 1;
                self.items(end, |parser, _index| parser.skip(depth + 1, end)).map(|_| false)
            }
            b'n' => self.word(b"null", end).map(|_| false),
            b't' => self.word(b"true", end).map(|_| false),
            b'f' => self.word(b"false", end).map(|_| false),
            b'N' => self.word(b"NaN", end).map(|_| false),
            b'I' => self.word(b"Infinity", end).map(|_| false),
            b'-' if self.src[self.pos..end].starts_with(b"-Infinity") => {
                self.pos += 9;
                Ok(false)
            }
            _ => self.scan_number(end).map(|_| false),
        }
    }

    fn word(&mut self, word: &[u8], end: usize) -> Result<(), Stop> {
        if self.src[self.pos..end].starts_with(word) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(Stop::NotJson)
        }
    }

    /// An object's members after its brace: `member` reads each value, given its key's raw
    /// bytes (start, close, escaped, lone).
    fn members(
        &mut self,
        end: usize,
        mut member: impl FnMut(&mut Self, (usize, usize, bool, bool)) -> Result<(), Stop>,
    ) -> Result<(), Stop> {
        self.skip_ws(end);
        if self.pos < end && self.src[self.pos] == b'}' {
            self.pos += 1;
            return Ok(());
        }
        let mut seen = self.values.then(KeysSeen::new);
        loop {
            if self.pos >= end || self.src[self.pos] != b'"' {
                return Err(Stop::NotJson);
            }
            let mark = self.open_mark();
            self.pos += 1;
            let key = self.scan_string(end)?;
            self.close_mark(mark, key.2);
            if let Some(seen) = &mut seen {
                let (start, close, escaped, lone) = key;
                if lone {
                    return Err(Stop::HandBack); // (as value() hands it back)
                }
                if escaped || seen.repeated(self.src, start, close) {
                    self.tree_needed = true;
                }
            }
            self.skip_ws(end);
            if self.pos >= end || self.src[self.pos] != b':' {
                return Err(Stop::NotJson);
            }
            self.pos += 1;
            self.skip_ws(end);
            member(self, key)?;
            self.skip_ws(end);
            if self.pos < end && self.src[self.pos] == b'}' {
                self.pos += 1;
                return Ok(());
            }
            if self.pos >= end || self.src[self.pos] != b',' {
                return Err(Stop::NotJson);
            }
            self.pos += 1;
            self.skip_ws(end);
        }
    }

    /// An array's items after its bracket: `item` reads each, given its index.
    fn items(
        &mut self,
        end: usize,
        mut item: impl FnMut(&mut Self, usize) -> Result<(), Stop>,
    ) -> Result<(), Stop> {
        self.skip_ws(end);
        if self.pos < end && self.src[self.pos] == b']' {
            self.pos += 1;
            return Ok(());
        }
        let mut index = 0;
        loop {
            item(self, index)?;
            index += 1;
            self.skip_ws(end);
            if self.pos < end && self.src[self.pos] == b']' {
                self.pos += 1;
                return Ok(());
            }
            if self.pos >= end || self.src[self.pos] != b',' {
                return Err(Stop::NotJson);
            }
            self.pos += 1;
            self.skip_ws(end);
        }
    }

    /// A value read for the paths `selected` ((path, step) pairs whose walk has reached this
    /// value): each path's read (out[path]) is what query.evaluate's read() finds; the value is
    /// built only where a path ends in it (or a negative index needs its length).
    fn select(
        &mut self,
        depth: usize,
        end: usize,
        selected: &[(usize, usize)],
        paths: &[Vec<Step>],
        out: &mut [PathRead],
    ) -> Result<(), Stop> {
        if selected.is_empty() {
            return self.skip(depth, end);
        }
        if self.pos >= end {
            return Err(Stop::NotJson);
        }
        let lead = self.src[self.pos];
        let whole = selected.iter().any(|&(p, k)| {
            k == paths[p].len() || (lead == b'[' && matches!(paths[p][k], Step::Index(i) if i < 0))
        });
        if whole || (lead != b'{' && lead != b'[') {
            // build the value, and walk the rest of each path in it (a scalar: a miss here)
            let node = self.value(depth, end)?;
            for &(p, k) in selected {
                out[p] = walk_built(&node, &paths[p][k..], k, self.src);
            }
            return Ok(());
        }
        if depth >= MAX_NESTING {
            return Err(Stop::HandBack);
        }
        self.pos += 1;
        if lead == b'[' {
            let mut count = 0usize;
            self.items(end, |parser, index| {
                count = index + 1;
                let next: Vec<(usize, usize)> = selected
                    .iter()
                    .filter(|&&(p, k)| matches!(paths[p][k], Step::Index(i) if i >= 0 && i as usize == index))
                    .map(|&(p, k)| (p, k + 1))
                    .collect();
                parser.select(depth + 1, end, &next, paths, out)
            })?;
            for &(p, k) in selected {
                let within = matches!(paths[p][k], Step::Index(i) if i >= 0 && (i as usize) < count);
                if !within {
                    out[p] = PathRead::Missing { depth: k, keys: Vec::new() }; // no such index; no mapping
                }
            }
            return Ok(());
        }
        // an object: each member's key against the paths' next steps
        let body = self.pos;
        // which of the selected paths met their key here, and each member's selected paths: on
        // the stack for a few paths (no allocation an object), else on the heap
        let few = selected.len() <= INLINE_STEPS;
        let mut matched_few = [false; INLINE_STEPS];
        let mut matched_many = if few { Vec::new() } else { vec![false; selected.len()] };
        let matched: &mut [bool] = if few { &mut matched_few[..selected.len()] } else { &mut matched_many };
        let src = self.src;
        self.members(end, |parser, (start, close, escaped, lone)| {
            let mut next_few = [(0usize, 0usize); INLINE_STEPS];
            let mut met = 0;
            let mut next_many: Vec<(usize, usize)> = Vec::new();
            for (slot, &(p, k)) in selected.iter().enumerate() {
                if let Step::Key(wanted) = &paths[p][k] {
                    let same = if lone {
                        false // a step is a str Rust holds: never a lone surrogate
                    } else if escaped {
                        unescape(src, start, close).as_bytes() == wanted.as_bytes()
                    } else {
                        &src[start..close] == wanted.as_bytes()
                    };
                    if same {
                        matched[slot] = true;
                        if few {
                            next_few[met] = (p, k + 1);
                            met += 1;
                        } else {
                            next_many.push((p, k + 1));
                        }
                    }
                }
            }
            let next: &[(usize, usize)] = if few { &next_few[..met] } else { &next_many };
            parser.select(depth + 1, end, next, paths, out)
        })?;
        if matched.iter().all(|&m| m) {
            return Ok(());
        }
        // a path misses here: the mapping's string keys (the first 200 distinct), read again
        let keys = Parser::at(src, body).keys(depth, end)?; // (no run twice)
        for (slot, &(p, k)) in selected.iter().enumerate() {
            if !matched[slot] {
                out[p] = PathRead::Missing { depth: k, keys: keys.iter().map(|key| key.copy()).collect() };
            }
        }
        Ok(())
    }

    /// The distinct string keys of an object (after its brace), the first MISS_KEYS of them, in
    /// the order a dict keeps them (a repeated key at its first place).
    fn keys(&mut self, depth: usize, end: usize) -> Result<Vec<Str>, Stop> {
        let mut keys: Vec<Str> = Vec::new();
        let src = self.src;
        self.members(end, |parser, (start, close, escaped, lone)| {
            if keys.len() < MISS_KEYS {
                if lone {
                    return Err(Stop::HandBack); // a key Rust cannot hold
                }
                let key = if escaped {
                    Str::Owned(unescape(src, start, close).into_boxed_str())
                } else {
                    Str::Span(start as u32, (close - start) as u32)
                };
                if !keys.iter().any(|seen| seen.bytes(src) == key.bytes(src)) {
                    keys.push(key);
                }
            }
            parser.skip(depth + 1, end)
        })?;
        Ok(keys)
    }

    fn constant(&mut self, word: &[u8], node: Node, end: usize) -> Result<Node, Stop> {
        if self.src[self.pos..end].starts_with(word) {
            self.pos += word.len();
            Ok(node)
        } else {
            Err(Stop::NotJson)
        }
    }

    /// A number's text as the C scanner matches it: (start, end, whether it is a float, the
    /// integer part's digits). Integers past Python's 4,300-digit limit are handed back.
    fn scan_number(&mut self, end: usize) -> Result<(usize, usize, bool, usize), Stop> {
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
        let digits = i - start - (src[start] == b'-') as usize;
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
            let first = j;
            while j < end && src[j].is_ascii_digit() {
                j += 1;
            }
            if j > first {
                i = j;
                float = true;
            }
        }
        self.pos = i;
        if !float && digits > MAX_INT_DIGITS {
            return Err(Stop::HandBack); // int() refuses it by a setting's default
        }
        Ok((start, i, float, digits))
    }

    fn number(&mut self, end: usize) -> Result<Node, Stop> {
        let (start, stop, float, digits) = self.scan_number(end)?;
        // ASCII only: the slice is valid UTF-8
        let text = std::str::from_utf8(&self.src[start..stop]).map_err(|_| Stop::NotJson)?;
        if float {
            return text.parse::<f64>().map(Node::Float).map_err(|_| Stop::HandBack);
        }
        if digits <= 18 {
            return text.parse::<i64>().map(Node::Int).map_err(|_| Stop::HandBack);
        }
        if let Ok(v) = text.parse::<i128>() {
            if let Ok(small) = i64::try_from(v) {
                return Ok(Node::Int(small));
            }
            return Ok(Node::Wide(v));
        }
        Ok(Node::BigInt(text.into()))
    }

    /// A string after its opening quote, validated as json.loads reads it: (its raw bytes'
    /// start, the closing quote's position, whether it has escapes, whether it holds a lone
    /// surrogate). The parser moves past the closing quote.
    fn scan_string(&mut self, end: usize) -> Result<(usize, usize, bool, bool), Stop> {
        let start = self.pos;
        match crate::scan::json_string_end(self.src, start, end) {
            Ok((close, escaped, lone)) => {
                self.pos = close + 1;
                Ok((start, close, escaped, lone))
            }
            Err(_) => Err(Stop::NotJson),
        }
    }

    /// A string after its opening quote: a span of the payload when it has no escapes.
    fn string(&mut self, end: usize) -> Result<Str, Stop> {
        let raw = self.scan_string(end)?;
        self.str_of(raw)
    }

    /// A scanned string (start, close, escaped, lone) as the tree holds it.
    fn str_of(&self, (start, close, escaped, lone): (usize, usize, bool, bool)) -> Result<Str, Stop> {
        if lone {
            return Err(Stop::HandBack); // a str Rust cannot hold
        }
        if !escaped {
            return Ok(Str::Span(start as u32, (close - start) as u32));
        }
        Ok(Str::Owned(unescape(self.src, start, close).into_boxed_str()))
    }

    fn object(&mut self, depth: usize, end: usize) -> Result<Node, Stop> {
        let mut map = StrMapBuilder::new();
        self.members(end, |p, raw| {
            let key = p.str_of(raw)?;
            let value = p.value(depth, end)?;
            map.insert(key, value, p.src);
            Ok(())
        })?;
        Ok(map.finish())
    }

    fn array(&mut self, depth: usize, end: usize) -> Result<Node, Stop> {
        let mut items: Vec<Node> = Vec::new();
        self.items(end, |p, _index| {
            items.push(p.value(depth, end)?);
            Ok(())
        })?;
        Ok(Node::List(items))
    }
}

// ------------------------------------------------------------------------------ a text in place

/// A checked JSON text's value read in place (held.rs's Place::Text): json_check with
/// Check.values marked each value where it is (Mark), so a value is read where it is written,
/// its containers' items and members found from the marks (nothing scanned again, nothing built
/// but a scalar).
pub enum InPlace {
    /// A scalar as the tree would hold it (a string without escapes a span of the text).
    Scalar(Node),
    /// A list: its items' marks are from the index after its own to its mark's `next`.
    List,
    /// An object: its members' marks (each key's, then its value's) likewise.
    Map,
}

/// The value of mark `at` of a checked text `src`; None where the marks are not the text's
/// (never, for marks json_check made of it).
pub fn in_place(src: &[u8], marks: &[Mark], at: usize) -> Option<InPlace> {
    let mark = marks.get(at)?;
    let (start, end) = (mark.start as usize, (mark.end as usize).min(src.len()));
    if start >= end {
        return None;
    }
    match src[start] {
        b'[' => Some(InPlace::List),
        b'{' => Some(InPlace::Map),
        b'"' => string_at(src, mark).map(|str_| InPlace::Scalar(Node::Str(str_))),
        b'-' | b'0'..=b'9' => match small_int(&src[start..end]) {
            Some(v) => Some(InPlace::Scalar(Node::Int(v))),
            None => Parser::at(src, start).value(0, end).ok().map(InPlace::Scalar),
        },
        _ => Parser::at(src, start).value(0, end).ok().map(InPlace::Scalar),
    }
}

/// A checked number's text read as number() reads it where it is an integer of at most 18
/// digits (no fraction, no exponent); None for any other number.
fn small_int(text: &[u8]) -> Option<i64> {
    let (negative, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    if digits.is_empty() || digits.len() > 18 {
        return None;
    }
    let mut v: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (d - b'0') as i64;
    }
    Some(if negative { -v } else { v })
}

/// A marked string as the tree holds it: a span of its body without escapes, else its
/// characters (the check found no lone surrogate in it).
pub fn string_at(src: &[u8], mark: &Mark) -> Option<Str> {
    let (start, close) = (mark.start as usize + 1, (mark.end as usize).checked_sub(1)?);
    if close < start || close >= src.len().max(1) || src.get(close) != Some(&b'"') {
        return None;
    }
    Some(if mark.escaped {
        Str::Owned(unescape(src, start, close).into_boxed_str())
    } else {
        Str::Span(start as u32, (close - start) as u32)
    })
}

/// The marks of a container's items (a list's; an object's keys and values in turn): the index
/// of each, from the one after the container's own.
pub fn inside(marks: &[Mark], at: usize) -> Inside<'_> {
    let stop = marks.get(at).map_or(0, |m| (m.next as usize).min(marks.len()));
    Inside { marks, next: at + 1, stop }
}

/// inside()'s iterator.
pub struct Inside<'a> {
    marks: &'a [Mark],
    next: usize,
    stop: usize,
}

impl Iterator for Inside<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.next >= self.stop {
            return None;
        }
        let here = self.next;
        self.next = (self.marks[here].next as usize).max(here + 1);
        Some(here)
    }
}

/// A string's escapes decoded: the body `src[start..close]` of a scanned string (its escapes are
/// valid, no lone surrogate), as unescape_to writes it.
fn unescape(src: &[u8], start: usize, close: usize) -> String {
    let mut out: Vec<u8> = vec![0; close - start + UNESCAPE_SLACK];
    let w = unescape_to(src, start, close, &mut out);
    out.truncate(w);
    String::from_utf8(out).unwrap_or_default()
}

/// The room unescape_to needs past a body's length (a block's move).
pub const UNESCAPE_SLACK: usize = 16;

/// A string's escapes decoded into `out` (at least the body's length and UNESCAPE_SLACK long):
/// how many bytes it wrote. Sixteen bytes at a time: the block is moved whole into the output's
/// slack and its backslashes found at once (scan::backslashes16: one vector compare), of which the
/// bytes before the first backslash are kept (a note of JSON text in a document escapes a quote
/// every few bytes: a run is short, and not copied byte by byte). The output is UTF-8 where the
/// body is (an escape gives a whole character, U+FFFD for a lone surrogate).
pub fn unescape_to(src: &[u8], start: usize, close: usize, out: &mut [u8]) -> usize {
    // the output is never longer than the body (an escape of 2, 6 or 12 bytes gives 1 to 4), plus
    // sixteen bytes of slack for a block's move
    assert!(out.len() >= close - start + UNESCAPE_SLACK);
    let mut w = 0;
    let mut c = start;
    while c < close {
        let left = close - c;
        if let Some(block) = src.get(c..c + 16) {
            let block: &[u8; 16] = block.try_into().unwrap_or(&[0; 16]);
            let mut mask = crate::scan::backslashes16(block);
            if left < 16 {
                mask &= (1u32 << left) - 1;
            }
            out[w..w + 16].copy_from_slice(block);
            let run = if mask == 0 { left.min(16) } else { mask.trailing_zeros() as usize };
            w += run;
            c += run;
            if mask == 0 {
                continue;
            }
        } else {
            // the payload's last bytes: a byte at a time
            while c < close && src[c] != b'\\' {
                out[w] = src[c];
                w += 1;
                c += 1;
            }
            if c >= close {
                break;
            }
        }
        // an escape at c
        if c + 1 >= close {
            break; // (a scanned body does not end in a lone backslash)
        }
        let e = src[c + 1];
        c += 2;
        let mapped = match e {
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'u' => {
                let code = hex4(src, c, close).unwrap_or(0xfffd);
                c += 4;
                let scalar = if (0xd800..=0xdbff).contains(&code) {
                    let low = hex4(src, c + 2, close).unwrap_or(0xfffd);
                    c += 6;
                    0x10000 + ((code - 0xd800) << 10) + (low.wrapping_sub(0xdc00) & 0x3ff)
                } else {
                    code
                };
                let ch = char::from_u32(scalar).unwrap_or('\u{fffd}');
                w += ch.encode_utf8(&mut out[w..w + 4]).len();
                continue;
            }
            other => other, // the quote, backslash and slash stand for themselves
        };
        out[w] = mapped;
        w += 1;
    }
    w
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

#[cfg(test)]
mod tests {
    use super::*;

    /// unescape a byte at a time, as it was written first: the reference.
    fn unescape_bytewise(raw: &[u8]) -> String {
        let mut out: Vec<u8> = Vec::new();
        let mut i = 0;
        while i < raw.len() {
            if raw[i] != b'\\' {
                out.push(raw[i]);
                i += 1;
                continue;
            }
            let e = raw[i + 1];
            i += 2;
            let mapped = match e {
                b'b' => 0x08,
                b'f' => 0x0c,
                b'n' => b'\n',
                b'r' => b'\r',
                b't' => b'\t',
                b'u' => {
                    let c = hex4(raw, i, raw.len()).unwrap_or(0xfffd);
                    i += 4;
                    let scalar = if (0xd800..=0xdbff).contains(&c) {
                        let c2 = hex4(raw, i + 2, raw.len()).unwrap_or(0xfffd);
                        i += 6;
                        0x10000 + ((c - 0xd800) << 10) + (c2.wrapping_sub(0xdc00) & 0x3ff)
                    } else {
                        c
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(char::from_u32(scalar).unwrap().encode_utf8(&mut buf).as_bytes());
                    continue;
                }
                other => other,
            };
            out.push(mapped);
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn unescape_is_the_bytewise_reading_wherever_escapes_fall() {
        let pieces: [&str; 12] = [
            "a",
            "\\\"",
            "\\\\",
            "\\/",
            "\\n",
            "\\t",
            "\\u00e9",
            "\\ud83d\\ude00",
            "é",
            "日本",
            "xxxxxxxxxxxxxxxxxxx",
            "\\b\\f\\r",
        ];
        let mut seed: u64 = 7;
        for len in 0..400 {
            let mut body = String::new();
            for _ in 0..(len % 60) {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                body.push_str(pieces[(seed >> 33) as usize % pieces.len()]);
            }
            // the body inside a payload, with bytes after it (the sixteen-byte moves read past
            // the closing quote) or none
            for tail in ["\"", "\", \"more\": 1}   padding past sixteen bytes"] {
                let text = format!("{{\"k\": \"{body}{tail}");
                let src = text.as_bytes();
                let (start, close) = (7, 7 + body.len());
                assert_eq!(unescape(src, start, close), unescape_bytewise(&src[start..close]), "{body:?}");
            }
        }
    }
}
