//! A decoded payload's tree, built as the Python readers build theirs (dicts keep the first
//! key's place and the last value for keys Python's dict takes as equal), its tests
//! (payload/formats/tree.plausible_record), the path steps of query/evaluate.py, and its
//! Python objects.

use std::collections::HashMap;

/// A string of the tree: a span of the payload's bytes (valid UTF-8), or text of its own
/// (a JSON string with escapes).
#[derive(Debug, Clone)]
pub enum Str {
    Span(u32, u32),
    Owned(Box<str>),
}

impl Str {
    #[inline]
    pub fn get<'a>(&'a self, src: &'a [u8]) -> &'a str {
        match self {
            Str::Span(start, len) => {
                let bytes = &src[*start as usize..(*start + *len) as usize];
                // SAFETY-free: spans are made only over bytes checked to be UTF-8.
                std::str::from_utf8(bytes).unwrap_or("")
            }
            Str::Owned(text) => text,
        }
    }

    /// The same string (a span stays a span).
    pub fn copy(&self) -> Str {
        self.clone()
    }

    /// The string's bytes (for comparisons: no UTF-8 check again).
    #[inline]
    pub fn bytes<'a>(&'a self, src: &'a [u8]) -> &'a [u8] {
        match self {
            Str::Span(start, len) => &src[*start as usize..(*start + *len) as usize],
            Str::Owned(text) => text.as_bytes(),
        }
    }
}

#[derive(Debug, Clone)]
pub enum Node {
    Null,
    Bool(bool),
    Int(i64),
    /// An integer past i64 (u64 range, or a CBOR negative down to -2**64).
    Wide(i128),
    /// A JSON integer past 64 bits: its decimal text, made a Python int with int().
    BigInt(Box<str>),
    Float(f64),
    Str(Str),
    Bytes(u32, u32),
    /// A CBOR bignum: its big-endian bytes, and whether it is negative (-1 - n).
    BigBytes(u32, u32, bool),
    List(Vec<Node>),
    Map(Vec<(Node, Node)>),
    /// A MessagePack ext value (Tagged on the Python side): never in a tree given back.
    Ext,
}

/// A CBOR bignum's value when it fits 128 bits: its big-endian magnitude `bytes`, negative as
/// -1 - n (what int.from_bytes and the Python side's reading give).
pub fn bignum(bytes: &[u8], negative: bool) -> Option<i128> {
    let bytes = &bytes[bytes.iter().take_while(|&&b| b == 0).count()..];
    if bytes.len() > 15 {
        return None;
    }
    let magnitude = bytes.iter().fold(0i128, |acc, &b| (acc << 8) | b as i128);
    Some(if negative { -1 - magnitude } else { magnitude })
}

impl Node {
    /// The integer value, when an integer (bool counts as one, as in Python).
    fn as_int(&self) -> Option<i128> {
        match self {
            Node::Bool(b) => Some(*b as i128),
            Node::Int(i) => Some(*i as i128),
            Node::Wide(i) => Some(*i),
            _ => None,
        }
    }
}

/// A number as Python compares numbers (bool, int and float alike).
enum Num {
    Int(i128),
    Float(f64),
}

fn num(node: &Node) -> Option<Num> {
    match node {
        Node::Float(f) => Some(Num::Float(*f)),
        other => other.as_int().map(Num::Int),
    }
}

fn float_int_eq(f: f64, i: i128) -> bool {
    f.fract() == 0.0 && f.abs() < 1.7e38 && (f as i128) == i
}

/// Whether Python's dict takes two scalar keys as the same key.
fn key_eq(a: &Node, b: &Node, src: &[u8]) -> bool {
    match (a, b) {
        (Node::Str(x), Node::Str(y)) => x.bytes(src) == y.bytes(src),
        (Node::Bytes(a0, an), Node::Bytes(b0, bn)) => {
            src[*a0 as usize..(*a0 + *an) as usize] == src[*b0 as usize..(*b0 + *bn) as usize]
        }
        (Node::Null, Node::Null) => true,
        _ => match (num(a), num(b)) {
            (Some(Num::Int(x)), Some(Num::Int(y))) => x == y,
            (Some(Num::Float(x)), Some(Num::Float(y))) => x == y,
            (Some(Num::Float(f)), Some(Num::Int(i))) | (Some(Num::Int(i)), Some(Num::Float(f))) => {
                float_int_eq(f, i)
            }
            _ => false,
        },
    }
}

/// Whether two keys key_eq takes as one are of one Python type (a bool, an int, a float): 1, 1.0
/// and true are one key of a dict, three of a MessagePack map (formats/tree.pairs_kept).
fn same_type(a: &Node, b: &Node) -> bool {
    fn kind(node: &Node) -> u8 {
        match node {
            Node::Bool(_) => 0,
            Node::Float(_) => 1,
            _ => 2,
        }
    }
    kind(a) == kind(b)
}

/// A key's hash bucket, consistent with key_eq.
#[derive(Hash, PartialEq, Eq, Clone, Copy)]
enum Bucket {
    Str(u64),
    Bytes(u64),
    Num(i128),
    Float(u64),
    Null,
    Never,
}

fn fnv(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn bucket(key: &Node, src: &[u8]) -> Bucket {
    match key {
        Node::Str(s) => Bucket::Str(fnv(s.bytes(src))),
        Node::Bytes(a, n) => Bucket::Bytes(fnv(&src[*a as usize..(*a + *n) as usize])),
        Node::Null => Bucket::Null,
        Node::Float(f) => {
            if f.is_nan() {
                Bucket::Never
            } else if f.fract() == 0.0 && f.abs() < 1.7e38 {
                Bucket::Num(*f as i128)
            } else {
                Bucket::Float(f.to_bits())
            }
        }
        other => match other.as_int() {
            Some(i) => Bucket::Num(i),
            None => Bucket::Never,
        },
    }
}

/// Why a key cannot go in a dict: an unhashable list or dict (msgpack's TypeError).
pub struct Unhashable;

/// Entries MapBuilder::with_room makes room for at the most at once (a header's count is the
/// stored value's word).
const MAP_ROOM: usize = 16;

/// Builds a map as repeated `dict[key] = value`.
#[derive(Default)]
pub struct MapBuilder {
    entries: Vec<(Node, Node)>,
    index: Option<HashMap<Bucket, Vec<usize>>>,
    /// A key was taken as an earlier one of another type (1.0 or true after 1): Python's
    /// MessagePack reading keeps it apart (formats/tree.pairs_kept), a map here cannot.
    pub alike: bool,
}

impl MapBuilder {
    pub fn new() -> Self {
        MapBuilder { entries: Vec::new(), index: None, alike: false }
    }

    /// A map of `declared` entries (its header's count: room for a few made at once, not one
    /// growth after another; no more than MAP_ROOM, whatever the header says).
    pub fn with_room(declared: usize) -> Self {
        MapBuilder { entries: Vec::with_capacity(declared.min(MAP_ROOM)), index: None, alike: false }
    }

    pub fn insert(&mut self, key: Node, value: Node, src: &[u8]) -> Result<(), Unhashable> {
        if matches!(key, Node::List(_) | Node::Map(_)) {
            return Err(Unhashable);
        }
        if self.index.is_none() && self.entries.len() < 12 {
            for entry in self.entries.iter_mut() {
                if key_eq(&entry.0, &key, src) {
                    self.alike |= !same_type(&entry.0, &key);
                    entry.1 = value;
                    return Ok(());
                }
            }
            self.entries.push((key, value));
            return Ok(());
        }
        if self.index.is_none() {
            let mut index: HashMap<Bucket, Vec<usize>> = HashMap::new();
            for (i, entry) in self.entries.iter().enumerate() {
                index.entry(bucket(&entry.0, src)).or_default().push(i);
            }
            self.index = Some(index);
        }
        let b = bucket(&key, src);
        let index = self.index.as_mut().expect("made above");
        if b != Bucket::Never {
            if let Some(found) = index.get(&b) {
                for &at in found {
                    if key_eq(&self.entries[at].0, &key, src) {
                        self.alike |= !same_type(&self.entries[at].0, &key);
                        self.entries[at].1 = value;
                        return Ok(());
                    }
                }
            }
        }
        index.entry(b).or_default().push(self.entries.len());
        self.entries.push((key, value));
        Ok(())
    }

    pub fn finish(self) -> Node {
        Node::Map(self.entries)
    }
}

/// A JSON object's keys are all strings: a cheaper builder.
#[derive(Default)]
pub struct StrMapBuilder {
    entries: Vec<(Node, Node)>,
    index: Option<HashMap<Box<[u8]>, usize>>,
}

impl StrMapBuilder {
    pub fn new() -> Self {
        StrMapBuilder { entries: Vec::new(), index: None }
    }

    pub fn insert(&mut self, key: Str, value: Node, src: &[u8]) {
        let text = key.bytes(src);
        if self.entries.len() < 12 && self.index.is_none() {
            for entry in self.entries.iter_mut() {
                if let Node::Str(k) = &entry.0 {
                    if k.bytes(src) == text {
                        entry.1 = value;
                        return;
                    }
                }
            }
            self.entries.push((Node::Str(key), value));
            return;
        }
        if self.index.is_none() {
            let mut index = HashMap::with_capacity(self.entries.len() * 2);
            for (i, entry) in self.entries.iter().enumerate() {
                if let Node::Str(k) = &entry.0 {
                    index.insert(Box::<[u8]>::from(k.bytes(src)), i);
                }
            }
            self.index = Some(index);
        }
        let index = self.index.as_mut().expect("made above");
        if let Some(&at) = index.get(text) {
            self.entries[at].1 = value;
            return;
        }
        index.insert(Box::<[u8]>::from(text), self.entries.len());
        self.entries.push((Node::Str(key), value));
    }

    pub fn finish(self) -> Node {
        Node::Map(self.entries)
    }
}

// ------------------------------------------------------------------------------ plausible_record

/// Whether a string is printable as Python's str.isprintable says: ASCII here, the Basic
/// Multilingual Plane by the table the Python side gave at configure time (its interpreter's
/// Unicode version), anything past it unsure (the value is handed back).
pub enum Printable {
    Yes,
    No,
    Unsure,
}

pub fn printable(text: &str, table: &[u8]) -> Printable {
    let mut unsure = false;
    for c in text.chars() {
        let code = c as u32;
        if code < 0x80 {
            if !(0x20..0x7f).contains(&code) {
                return Printable::No;
            }
        } else if (code as usize) < table.len() {
            if table[code as usize] == 0 {
                return Printable::No;
            }
        } else {
            unsure = true;
        }
    }
    if unsure {
        Printable::Unsure
    } else {
        Printable::Yes
    }
}

/// tree.plausible_record: Some(bool), or None when unsure (non-ASCII keys).
pub fn plausible_record(value: &Node, src: &[u8], table: &[u8]) -> Option<bool> {
    // The common case: a non-empty map whose keys are all str and printable (joined).
    if let Node::Map(entries) = value {
        if !entries.is_empty() && entries.iter().all(|(k, _)| matches!(k, Node::Str(_))) {
            let mut unsure = false;
            let mut all = true;
            for (k, _) in entries {
                if let Node::Str(s) = k {
                    // printable ASCII (the usual key) is printable without reading it as a str
                    if s.bytes(src).iter().all(|b| (0x20..0x7f).contains(b)) {
                        continue;
                    }
                    match printable(s.get(src), table) {
                        Printable::Yes => {}
                        Printable::No => all = false,
                        Printable::Unsure => unsure = true,
                    }
                }
            }
            if all && !unsure {
                return Some(true);
            }
            if unsure {
                return None;
            }
        }
    }
    if !deep_ok(value, src, table)? {
        return Some(false);
    }
    match value {
        Node::Map(entries) => Some(entries.iter().any(|(k, v)| matches!(k, Node::Str(_)) || texty(v, src))),
        Node::List(items) => {
            let has_map = items
                .iter()
                .any(|v| matches!(v, Node::Map(e) if e.iter().any(|(k, _)| matches!(k, Node::Str(_)))));
            if has_map {
                return Some(true);
            }
            let strings =
                items.iter().filter(|v| matches!(v, Node::Str(s) if !s.get(src).is_empty())).count();
            Some(strings >= 2)
        }
        _ => Some(false),
    }
}

/// tree._deep_ok: no extension types; map keys printable strings or non-negative integers.
fn deep_ok(value: &Node, src: &[u8], table: &[u8]) -> Option<bool> {
    let mut stack: Vec<&Node> = vec![value];
    while let Some(node) = stack.pop() {
        match node {
            Node::Ext => return Some(false),
            Node::Map(entries) => {
                for (key, item) in entries {
                    match key {
                        Node::Str(s) => match printable(s.get(src), table) {
                            Printable::Yes => {}
                            Printable::No => return Some(false),
                            Printable::Unsure => return None,
                        },
                        Node::Int(i) if *i >= 0 => {}
                        Node::Wide(i) if *i >= 0 => {}
                        _ => return Some(false),
                    }
                    stack.push(item);
                }
            }
            Node::List(items) => stack.extend(items.iter()),
            _ => {}
        }
    }
    Some(true)
}

fn texty(value: &Node, src: &[u8]) -> bool {
    match value {
        Node::Str(s) => !s.get(src).is_empty(),
        Node::Map(entries) => entries.iter().any(|(k, _)| matches!(k, Node::Str(_))),
        _ => false,
    }
}

/// Whether an Ext node is anywhere in the tree (such a tree is not built here).
pub fn has_ext(value: &Node) -> bool {
    // The containers still to look into: on the stack for a record's few (no allocation a
    // value), past that on the heap; a scalar is looked at where it is met.
    let mut pending = Pending { inline: [value; INLINE_PENDING], held: 0, spill: Vec::new() };
    let mut node = Some(value);
    while let Some(container) = node {
        let found = match container {
            Node::Ext => return true,
            Node::Map(entries) => entries.iter().any(|(k, v)| pending.meets(k) || pending.meets(v)),
            Node::List(items) => items.iter().any(|item| pending.meets(item)),
            _ => false,
        };
        if found {
            return true;
        }
        node = pending.pop();
    }
    false
}

/// Containers has_ext holds on the stack before it takes the heap.
const INLINE_PENDING: usize = 32;

/// has_ext's containers still to look into.
struct Pending<'a> {
    inline: [&'a Node; INLINE_PENDING],
    held: usize,
    spill: Vec<&'a Node>,
}

impl<'a> Pending<'a> {
    /// Whether `node` is an ext; a container is kept to be looked into.
    #[inline]
    fn meets(&mut self, node: &'a Node) -> bool {
        match node {
            Node::Ext => true,
            Node::Map(_) | Node::List(_) => {
                if self.held < INLINE_PENDING {
                    self.inline[self.held] = node;
                    self.held += 1;
                } else {
                    self.spill.push(node);
                }
                false
            }
            _ => false,
        }
    }

    fn pop(&mut self) -> Option<&'a Node> {
        if let Some(node) = self.spill.pop() {
            return Some(node);
        }
        if self.held == 0 {
            return None;
        }
        self.held -= 1;
        Some(self.inline[self.held])
    }
}

// ------------------------------------------------------------------------------ paths

/// A path step: a dict key as written, or a list index (an int key for a dict).
#[derive(Debug, Clone)]
pub enum Step {
    Key(String),
    Index(i128),
    /// A step nothing read here can match: an integer past i128, a str with a lone surrogate.
    Huge,
}

/// evaluate.step / dict.get: the child at `step`, None when absent.
pub fn child<'a>(node: &'a Node, step: &Step, src: &[u8]) -> Option<&'a Node> {
    match node {
        Node::Map(entries) => match step {
            Step::Key(key) => entries
                .iter()
                .find(|(k, _)| matches!(k, Node::Str(s) if s.bytes(src) == key.as_bytes()))
                .map(|(_, v)| v),
            Step::Index(i) => entries
                .iter()
                .find(|(k, _)| match k {
                    Node::Float(f) => f.fract() == 0.0 && f.abs() < 1.7e38 && (*f as i128) == *i,
                    other => other.as_int() == Some(*i),
                })
                .map(|(_, v)| v),
            Step::Huge => None,
        },
        Node::List(items) => match step {
            Step::Index(i) => {
                let len = items.len() as i128;
                if -len <= *i && *i < len {
                    let at = if *i < 0 { len + *i } else { *i };
                    items.get(at as usize)
                } else {
                    None
                }
            }
            _ => None,
        },
        _ => None,
    }
}

/// What a path read in a value: the node there, or where the walk stopped (the step's index,
/// and the string keys of the mapping there: query.evaluate.Miss).
pub enum PathRead {
    Node(Node),
    Missing { depth: usize, keys: Vec<Str> },
}

/// keys_of as the tree's own strings.
pub fn keys_of_node(node: &Node, _src: &[u8], limit: usize) -> Vec<Str> {
    let mut keys = Vec::new();
    if let Node::Map(entries) = node {
        for (k, _) in entries {
            if let Node::Str(s) = k {
                keys.push(s.clone());
                if keys.len() >= limit {
                    break;
                }
            }
        }
    }
    keys
}
