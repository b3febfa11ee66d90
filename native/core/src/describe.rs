//! DESCRIBE PAYLOAD's page answer: a place's values decoded (engine.rs, trees built), each
//! tree walked as describe/structure.py's Structure.add walks it (paths, present and seen
//! counts, types, string and list lengths, numbers' range) and each path's values sketched as
//! describe/sketch.py's Values sketches them (each distinct value's count while few, then a
//! HyperLogLog of their blake2b hashes). The page's partial structure is handed to Python,
//! which merges it into the place's (exactly: the same figures however values are split).
//! Values the core does not walk exactly (a key that is not ASCII text, a number past 128 bits,
//! failed and cut values: their reasons are Python's) are handed back.

use std::collections::HashMap;

use blake2::digest::{Update, VariableOutput};
use blake2::Blake2bVar;

use crate::engine::{decode_value, Config, Kind, Needle, Outcome, Want};
use crate::num::cmp_int_float;
use crate::tree::{bignum, Node};

/// The bounds of describe/structure.py and sketch.py (configure's "describe" entry).
pub struct DescribeConfig {
    pub max_paths: usize,
    pub max_visits: i64,
    pub max_depth: usize,
    pub exact: usize,
    pub long_text: usize,
    pub long_key: usize,
    pub p: u32,
}

// ------------------------------------------------------------------------------ the sketch

/// A value as sketch.key keys it.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Key {
    Str(String),
    /// A string past LONG_TEXT characters: its first LONG_TEXT characters and its hash.
    LongStr(String, u64),
    Int(i128),
    /// A float's bits (-0.0 spelt 0.0; every NaN one key).
    Float(u64),
    Nan,
    Bool(bool),
    Null,
    Bytes(Vec<u8>),
    /// Bytes past LONG_TEXT: "0x" and the first LONG_TEXT / 2 bytes in hex, and the hash.
    LongBytes(String, u64),
}

/// sketch.spelling of a value's key (before a long value is cut to its key).
fn spelling_of_int(i: i128) -> Vec<u8> {
    // int.to_bytes(bit_length // 8 + 1, "little", signed=True): bit_length is the magnitude's
    let n = (128 - i.unsigned_abs().leading_zeros() as usize) / 8 + 1;
    let mut out = vec![b'i'];
    let bytes = i.to_le_bytes();
    out.extend_from_slice(&bytes[..n.min(16)]);
    for _ in 16..n {
        out.push(if i < 0 { 0xff } else { 0 });
    }
    out
}

fn spelling_of_float(f: f64) -> Vec<u8> {
    if f.is_nan() {
        return b"fnan".to_vec();
    }
    let mut out = vec![b'f'];
    out.extend_from_slice(&(f + 0.0).to_le_bytes());
    out
}

pub fn hash64(spelt: &[u8]) -> u64 {
    let mut hasher = Blake2bVar::new(8).expect("8 is a valid output size");
    hasher.update(spelt);
    let mut out = [0u8; 8];
    hasher.finalize_variable(&mut out).expect("the output size given");
    u64::from_le_bytes(out)
}

fn key_spelling(k: &Key) -> Option<Vec<u8>> {
    Some(match k {
        Key::Str(s) => [b"s".as_slice(), s.as_bytes()].concat(),
        Key::Int(i) => spelling_of_int(*i),
        Key::Float(bits) => spelling_of_float(f64::from_bits(*bits)),
        Key::Nan => b"fnan".to_vec(),
        Key::Bool(b) => {
            if *b {
                b"b1".to_vec()
            } else {
                b"b0".to_vec()
            }
        }
        Key::Null => b"n".to_vec(),
        Key::Bytes(b) => [b"x".as_slice(), b].concat(),
        Key::LongStr(..) | Key::LongBytes(..) => return None,
    })
}

/// sketch.key_hash.
fn key_hash(k: &Key) -> u64 {
    match k {
        Key::LongStr(_, h) | Key::LongBytes(_, h) => *h,
        other => hash64(&key_spelling(other).unwrap_or_default()),
    }
}

fn chars_prefix(s: &str, n: usize) -> (String, bool) {
    match s.char_indices().nth(n) {
        Some((at, _)) => (s[..at].to_owned(), true),
        None => (s.to_owned(), false),
    }
}

pub enum Sketch {
    Counts(Vec<(Key, u64)>, HashMap<Key, usize>),
    Registers(Vec<u8>),
}

impl Sketch {
    fn new() -> Self {
        Sketch::Counts(Vec::new(), HashMap::new())
    }

    fn register(registers: &mut [u8], h: u64, p: u32) {
        let rest = 64 - p;
        let index = (h >> rest) as usize;
        let low = h & ((1u64 << rest) - 1);
        let rank = (rest - (64 - low.leading_zeros())) as u8 + 1;
        if rank > registers[index] {
            registers[index] = rank;
        }
    }

    fn switch_to_registers(&mut self, p: u32) {
        if let Sketch::Counts(counts, _) = self {
            let mut registers = vec![0u8; 1 << p];
            for (k, _) in counts.iter() {
                if *k != Key::Null {
                    Self::register(&mut registers, key_hash(k), p);
                }
            }
            *self = Sketch::Registers(registers);
        }
    }

    /// Values.add_many: counted while at most `exact` distinct after the page, else registers.
    fn add_keys(&mut self, keys: Vec<Key>, cfg: &DescribeConfig) {
        match self {
            Sketch::Counts(counts, index) => {
                for k in keys {
                    match index.get(&k) {
                        Some(&at) => counts[at].1 += 1,
                        None => {
                            index.insert(k.clone(), counts.len());
                            counts.push((k, 1));
                        }
                    }
                }
                if counts.len() > cfg.exact {
                    self.switch_to_registers(cfg.p);
                }
            }
            Sketch::Registers(registers) => {
                for k in keys {
                    if k != Key::Null {
                        Self::register(registers, key_hash(&k), cfg.p);
                    }
                }
            }
        }
    }
}

// ------------------------------------------------------------------------------ data keys

/// A key that stands for data (structure.data_kind), for ASCII keys without control characters;
/// Err(()) for another key (Python tells).
fn data_kind(key: &str, cfg: &DescribeConfig) -> Result<Option<&'static str>, ()> {
    let b = key.as_bytes();
    if !key.is_ascii() || b.iter().any(|&c| c < 0x20 || c == 0x7f) {
        return Err(());
    }
    if b.len() > cfg.long_key {
        return Ok(Some("long keys"));
    }
    if !b.iter().any(|c| c.is_ascii_digit() || *c == b'@') {
        return Ok(None);
    }
    if is_date(b) {
        return Ok(Some("dates"));
    }
    if is_number(b) {
        return Ok(Some("numbers"));
    }
    if is_uuid(b) {
        return Ok(Some("UUIDs"));
    }
    if b.len() >= 8 && b.iter().all(|c| c.is_ascii_hexdigit()) && b.iter().any(|c| c.is_ascii_digit()) {
        return Ok(Some("hex ids"));
    }
    if b.windows(4).any(|w| w.iter().all(|c| c.is_ascii_digit())) {
        return Ok(Some("ids"));
    }
    if is_address(b) {
        return Ok(Some("addresses"));
    }
    Ok(None)
}

fn digits(b: &[u8], at: usize, n: usize) -> bool {
    at + n <= b.len() && b[at..at + n].iter().all(|c| c.is_ascii_digit())
}

/// DATA_KEYS' dates pattern, fullmatch: every position its optional parts can end at.
fn is_date(b: &[u8]) -> bool {
    let n = b.len();
    // \d{4}/\d{2}/\d{2} and \d{2}:\d{2}(?::\d{2})?
    if n == 10 && digits(b, 0, 4) && b[4] == b'/' && digits(b, 5, 2) && b[7] == b'/' && digits(b, 8, 2) {
        return true;
    }
    if (n == 5 || n == 8)
        && digits(b, 0, 2)
        && b[2] == b':'
        && digits(b, 3, 2)
        && (n == 5 || (b[5] == b':' && digits(b, 6, 2)))
    {
        return true;
    }
    // \d{4}-\d{2}(?:-\d{2})?(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?:Z|[+-]\d{2}:?\d{2})?
    if !(digits(b, 0, 4) && n > 4 && b[4] == b'-' && digits(b, 5, 2)) {
        return false;
    }
    let mut ends: Vec<usize> = vec![7];
    if n >= 10 && b[7] == b'-' && digits(b, 8, 2) {
        ends.push(10);
    }
    let mut with_time = ends.clone();
    for &q in &ends {
        if q + 6 <= n
            && (b[q] == b'T' || b[q] == b' ')
            && digits(b, q + 1, 2)
            && b[q + 3] == b':'
            && digits(b, q + 4, 2)
        {
            let r = q + 6;
            with_time.push(r);
            if r + 3 <= n && b[r] == b':' && digits(b, r + 1, 2) {
                let r2 = r + 3;
                with_time.push(r2);
                if r2 < n && b[r2] == b'.' {
                    let mut k = r2 + 1;
                    while k < n && b[k].is_ascii_digit() {
                        k += 1;
                        with_time.push(k);
                    }
                }
            }
        }
    }
    for &q in &with_time {
        if q == n {
            return true;
        }
        if q + 1 == n && b[q] == b'Z' {
            return true;
        }
        if q < n && (b[q] == b'+' || b[q] == b'-') && digits(b, q + 1, 2) {
            if q + 5 == n && digits(b, q + 3, 2) {
                return true;
            }
            if q + 6 == n && b[q + 3] == b':' && digits(b, q + 4, 2) {
                return true;
            }
        }
    }
    false
}

fn is_number(b: &[u8]) -> bool {
    let mut i = usize::from(!b.is_empty() && (b[0] == b'+' || b[0] == b'-'));
    let start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    if i == start {
        return false;
    }
    if i == b.len() {
        return true;
    }
    if b[i] != b'.' {
        return false;
    }
    let frac = i + 1;
    i = frac;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    i > frac && i == b.len()
}

fn is_uuid(b: &[u8]) -> bool {
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| {
            if [8, 13, 18, 23].contains(&i) {
                *c == b'-'
            } else {
                c.is_ascii_hexdigit()
            }
        })
}

fn is_address(b: &[u8]) -> bool {
    let space = |c: &u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c);
    let Some(at) = b.iter().position(|&c| c == b'@') else { return false };
    at > 0 && at + 1 < b.len() && !b[at + 1..].contains(&b'@') && !b.iter().any(space)
}

// ------------------------------------------------------------------------------ the structure

#[derive(Clone, Debug)]
pub enum Num {
    Int(i128),
    Float(f64),
}

fn num_lt(a: &Num, b: &Num) -> bool {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => x < y,
        (Num::Float(x), Num::Float(y)) => x < y,
        (Num::Int(x), Num::Float(y)) => cmp_int_float(*x, *y) == std::cmp::Ordering::Less,
        (Num::Float(x), Num::Int(y)) => cmp_int_float(*y, *x) == std::cmp::Ordering::Greater,
    }
}

/// A leaf met by the walk, counted at the end of the page (Node.flush).
enum Leaf {
    Str(String),
    Int(i128),
    Float(f64),
    Bool(bool),
    Null,
    Bytes(Vec<u8>),
}

pub struct DNode {
    pub present: u64,
    pub seen: u64,
    last: u64,
    pub types: Vec<(&'static str, u64)>,
    pub children: Vec<(String, usize)>,
    child_index: HashMap<String, usize>,
    pub items: Option<usize>,
    pub folded: Option<usize>,
    pub key_kinds: Vec<(&'static str, u64)>,
    pub keys: Option<Sketch>,
    pub strings: (u64, u64, u64, u64),
    pub lists: (u64, u64, u64, u64),
    pub low: Option<Num>,
    pub high: Option<Num>,
    pub values: Option<Sketch>,
    pending: Vec<Leaf>,
}

impl DNode {
    fn new() -> Self {
        DNode {
            present: 0,
            seen: 0,
            last: 0,
            types: Vec::new(),
            children: Vec::new(),
            child_index: HashMap::new(),
            items: None,
            folded: None,
            key_kinds: Vec::new(),
            keys: None,
            strings: (0, 0, 0, 0),
            lists: (0, 0, 0, 0),
            low: None,
            high: None,
            values: None,
            pending: Vec::new(),
        }
    }
}

fn bump(list: &mut Vec<(&'static str, u64)>, name: &'static str, n: u64) {
    match list.iter_mut().find(|(k, _)| *k == name) {
        Some(entry) => entry.1 += n,
        None => list.push((name, n)),
    }
}

pub struct DStructure {
    pub values: u64,
    pub nodes: Vec<DNode>,
    pub untracked: u64,
    pub unfinished: u64,
    pub too_deep: u64,
    dirty: Vec<usize>,
}

impl Default for DStructure {
    fn default() -> Self {
        Self::new()
    }
}

impl DStructure {
    pub fn new() -> Self {
        DStructure {
            values: 0,
            nodes: vec![DNode::new()],
            untracked: 0,
            unfinished: 0,
            too_deep: 0,
            dirty: Vec::new(),
        }
    }

    fn new_node(&mut self, cfg: &DescribeConfig) -> Option<usize> {
        if self.nodes.len() >= cfg.max_paths {
            return None;
        }
        self.nodes.push(DNode::new());
        Some(self.nodes.len() - 1)
    }

    fn touch(&mut self, at: usize, serial: u64) {
        let node = &mut self.nodes[at];
        if node.last != serial {
            node.last = serial;
            node.present += 1;
        }
    }

    fn push_leaf(&mut self, at: usize, leaf: Leaf) {
        if self.nodes[at].pending.is_empty() {
            self.dirty.push(at);
        }
        self.nodes[at].pending.push(leaf);
    }

    /// Checks a tree has nothing the core does not walk exactly (before anything is counted).
    pub fn walkable(tree: &Node, src: &[u8], cfg: &DescribeConfig) -> bool {
        let mut stack = vec![tree];
        while let Some(node) = stack.pop() {
            match node {
                Node::BigInt(text) if text.parse::<i128>().is_err() => return false,
                Node::BigBytes(a, n, negative)
                    if bignum(&src[*a as usize..(*a + *n) as usize], *negative).is_none() =>
                {
                    return false
                }
                Node::Ext => return false,
                Node::Str(s) if s.get(src).is_empty() && !s.bytes(src).is_empty() => return false,
                Node::List(items) => stack.extend(items.iter()),
                Node::Map(entries) => {
                    for (k, v) in entries {
                        if let Node::Str(s) = k {
                            if data_kind(s.get(src), cfg).is_err() {
                                return false;
                            }
                        }
                        stack.push(v);
                    }
                }
                _ => {}
            }
        }
        true
    }

    fn leaf(node: &Node, src: &[u8]) -> Option<Leaf> {
        Some(match node {
            Node::Null => Leaf::Null,
            Node::Bool(b) => Leaf::Bool(*b),
            Node::Int(i) => Leaf::Int(*i as i128),
            Node::Wide(i) => Leaf::Int(*i),
            Node::BigInt(text) => Leaf::Int(text.parse().unwrap_or(0)),
            Node::BigBytes(a, n, negative) => {
                Leaf::Int(bignum(&src[*a as usize..(*a + *n) as usize], *negative).unwrap_or(0))
            }
            Node::Float(f) => Leaf::Float(*f),
            Node::Str(s) => Leaf::Str(s.get(src).to_owned()),
            Node::Bytes(a, n) => Leaf::Bytes(src[*a as usize..(*a + *n) as usize].to_vec()),
            _ => return None,
        })
    }

    /// Structure.add of one value's tree.
    pub fn add(&mut self, tree: &Node, src: &[u8], cfg: &DescribeConfig) {
        self.values += 1;
        let serial = self.values;
        let mut walk = Walk { visits: cfg.max_visits, deep: false, serial };
        self.walk(&mut walk, 0, tree, src, 0, cfg);
        if walk.visits < 0 {
            self.unfinished += 1;
        }
        if walk.deep {
            self.too_deep += 1;
        }
    }

    fn walk(
        &mut self,
        w: &mut Walk,
        at: usize,
        value: &Node,
        src: &[u8],
        depth: usize,
        cfg: &DescribeConfig,
    ) {
        w.visits -= 1;
        if w.visits < 0 {
            return;
        }
        self.touch(at, w.serial);
        if let Some(leaf) = Self::leaf(value, src) {
            self.push_leaf(at, leaf);
            return;
        }
        self.nodes[at].seen += 1;
        match value {
            Node::List(items) => {
                let n = items.len() as u64;
                let node = &mut self.nodes[at];
                bump(&mut node.types, "list", 1);
                let (count, least, most, total) = node.lists;
                node.lists =
                    if count == 0 { (1, n, n, n) } else { (count + 1, least.min(n), most.max(n), total + n) };
                if n == 0 {
                    return;
                }
                if depth >= cfg.max_depth {
                    w.deep = true;
                    return;
                }
                let items_at = match self.nodes[at].items {
                    Some(i) => i,
                    None => match self.new_node(cfg) {
                        Some(i) => {
                            self.nodes[at].items = Some(i);
                            i
                        }
                        None => {
                            self.untracked += n;
                            return;
                        }
                    },
                };
                if n as i64 <= w.visits && items.iter().all(|v| Self::leaf(v, src).is_some()) {
                    w.visits -= n as i64;
                    self.touch(items_at, w.serial);
                    for v in items {
                        if let Some(leaf) = Self::leaf(v, src) {
                            self.push_leaf(items_at, leaf);
                        }
                    }
                    return;
                }
                for child in items {
                    self.walk(w, items_at, child, src, depth + 1, cfg);
                    if w.visits < 0 {
                        return;
                    }
                }
            }
            Node::Map(entries) => {
                bump(&mut self.nodes[at].types, "record", 1);
                if depth >= cfg.max_depth {
                    w.deep = true;
                    return;
                }
                for (k, child) in entries {
                    let found = match k {
                        Node::Str(s) => self.nodes[at].child_index.get(s.get(src)).copied(),
                        _ => None,
                    };
                    let target = match found {
                        Some(t) => Some(t),
                        None => self.child_of(at, k, src, cfg),
                    };
                    let Some(target) = target else {
                        self.untracked += 1;
                        w.visits -= 1;
                        if w.visits < 0 {
                            return;
                        }
                        continue;
                    };
                    if let Some(leaf) = Self::leaf(child, src) {
                        w.visits -= 1;
                        if w.visits < 0 {
                            return;
                        }
                        self.touch(target, w.serial);
                        self.push_leaf(target, leaf);
                    } else {
                        self.walk(w, target, child, src, depth + 1, cfg);
                        if w.visits < 0 {
                            return;
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// Structure._child: a field's new node, or the map's folded node for a data key.
    fn child_of(&mut self, at: usize, key: &Node, src: &[u8], cfg: &DescribeConfig) -> Option<usize> {
        let (kind, folded_key) = match key {
            Node::Str(s) => {
                let text = s.get(src);
                match data_kind(text, cfg) {
                    Ok(None) => {
                        let child = self.new_node(cfg)?;
                        self.nodes[at].children.push((text.to_owned(), child));
                        self.nodes[at].child_index.insert(text.to_owned(), child);
                        return Some(child);
                    }
                    Ok(Some(kind)) => (kind, key_of(&Leaf::Str(text.to_owned()), cfg)),
                    Err(()) => (NOT_TEXT, Key::Null), // (walkable() keeps such keys away)
                }
            }
            other => {
                let folded = match other {
                    Node::Null => Key::Str("None".to_owned()),
                    Node::Bool(b) => Key::Bool(*b),
                    n => match Self::leaf(n, src) {
                        Some(leaf) => key_of(&leaf, cfg),
                        None => Key::Null,
                    },
                };
                (NOT_TEXT, folded)
            }
        };
        let folded = match self.nodes[at].folded {
            Some(f) => f,
            None => {
                let f = self.new_node(cfg)?;
                self.nodes[at].folded = Some(f);
                f
            }
        };
        let node = &mut self.nodes[folded];
        bump(&mut node.key_kinds, kind, 1);
        node.keys.get_or_insert_with(Sketch::new).add_keys(vec![folded_key], cfg);
        Some(folded)
    }

    /// Node.flush of every node with leaves: the page's leaves counted.
    pub fn flush(&mut self, cfg: &DescribeConfig) {
        let dirty = std::mem::take(&mut self.dirty);
        for at in dirty {
            let leaves = std::mem::take(&mut self.nodes[at].pending);
            let node = &mut self.nodes[at];
            node.seen += leaves.len() as u64;
            for leaf in &leaves {
                bump(&mut node.types, leaf_name(leaf), 1);
            }
            let lengths: Vec<u64> = leaves
                .iter()
                .filter_map(|l| if let Leaf::Str(s) = l { Some(s.chars().count() as u64) } else { None })
                .collect();
            if !lengths.is_empty() {
                let (least, most) =
                    (*lengths.iter().min().unwrap_or(&0), *lengths.iter().max().unwrap_or(&0));
                let total: u64 = lengths.iter().sum();
                let (count, lo, hi, sum) = node.strings;
                node.strings = if count == 0 {
                    (lengths.len() as u64, least, most, total)
                } else {
                    (count + lengths.len() as u64, lo.min(least), hi.max(most), sum + total)
                };
            }
            // numbers' range: min and max over the page's finite numbers (the first among equals)
            let mut low: Option<Num> = None;
            let mut high: Option<Num> = None;
            for leaf in &leaves {
                let n = match leaf {
                    Leaf::Int(i) => Num::Int(*i),
                    Leaf::Float(f) if f.is_finite() => Num::Float(*f),
                    _ => continue,
                };
                if low.as_ref().is_none_or(|l| num_lt(&n, l)) {
                    low = Some(n.clone());
                }
                if high.as_ref().is_none_or(|h| num_lt(h, &n)) {
                    high = Some(n);
                }
            }
            let zero = |n: Num| match n {
                Num::Float(f) => Num::Float(f + 0.0),
                other => other,
            };
            if let (Some(lo), Some(hi)) = (low, high) {
                let (lo, hi) = (zero(lo), zero(hi));
                node.low = Some(match node.low.take() {
                    None => lo,
                    Some(current) => {
                        if num_lt(&lo, &current) {
                            lo
                        } else {
                            current
                        }
                    }
                });
                node.high = Some(match node.high.take() {
                    None => hi,
                    Some(current) => {
                        if num_lt(&current, &hi) {
                            hi
                        } else {
                            current
                        }
                    }
                });
            }
            let keys: Vec<Key> = leaves.iter().map(|l| key_of(l, cfg)).collect();
            node.values.get_or_insert_with(Sketch::new).add_keys(keys, cfg);
        }
    }
}

struct Walk {
    visits: i64,
    deep: bool,
    serial: u64,
}

const NOT_TEXT: &str = "keys that are not text";

fn leaf_name(leaf: &Leaf) -> &'static str {
    match leaf {
        Leaf::Str(_) => "string",
        Leaf::Int(_) => "integer",
        Leaf::Float(_) => "float",
        Leaf::Bool(_) => "boolean",
        Leaf::Null => "null",
        Leaf::Bytes(_) => "bytes",
    }
}

/// sketch.key.
fn key_of(leaf: &Leaf, cfg: &DescribeConfig) -> Key {
    match leaf {
        Leaf::Str(s) => {
            let (prefix, long) = chars_prefix(s, cfg.long_text);
            if long {
                Key::LongStr(prefix, hash64(&[b"s".as_slice(), s.as_bytes()].concat()))
            } else {
                Key::Str(s.clone())
            }
        }
        Leaf::Int(i) => Key::Int(*i),
        Leaf::Float(f) => {
            if f.is_nan() {
                Key::Nan
            } else {
                Key::Float((f + 0.0).to_bits())
            }
        }
        Leaf::Bool(b) => Key::Bool(*b),
        Leaf::Null => Key::Null,
        Leaf::Bytes(b) => {
            if b.len() > cfg.long_text {
                let hex: String = b[..cfg.long_text / 2].iter().map(|x| format!("{x:02x}")).collect();
                Key::LongBytes(format!("0x{hex}"), hash64(&[b"x".as_slice(), b].concat()))
            } else {
                Key::Bytes(b.clone())
            }
        }
    }
}

/// Decodes one value for DESCRIBE: its outcome with its tree.
pub fn decode_for_describe(cfg: &Config, value: &[u8], cap: usize) -> Option<Outcome> {
    let want = Want {
        paths: &[],
        tree: true,
        text_tree: true,
        gaps: false,
        text_values: false,
        measure: false,
        json: true,
        needles: &[] as &[Needle],
    };
    crate::panics::guarded(|| decode_value(cfg, value, cap, &want)).and_then(Result::ok)
}

/// The kinds DESCRIBE walks or counts here; the others (failed, handed back) go to Python, and
/// so does a cut value (its reason is Python's).
pub fn describable(outcome: &Outcome) -> bool {
    !outcome.cut && matches!(outcome.kind, Kind::Text | Kind::Record | Kind::Binary | Kind::NoFormat)
}

// ------------------------------------------------------------------------------ the page call

impl DescribeConfig {
    /// The bounds of describe/structure.py and sketch.py, checked.
    pub fn new(
        max_paths: usize,
        max_visits: i64,
        max_depth: usize,
        exact: usize,
        long_text: usize,
        long_key: usize,
        p: u32,
    ) -> Result<DescribeConfig, String> {
        if max_paths == 0 || p == 0 || p > 20 {
            return Err("bounds out of range".to_owned());
        }
        Ok(DescribeConfig { max_paths, max_visits, max_depth, exact, long_text, long_key, p })
    }
}

/// DESCRIBE PAYLOAD's answer for a page of one place's values.
pub struct Described {
    /// (kind, label, values) of the values read here, in the order first met.
    pub encodings: Vec<(Kind, crate::engine::Label, u64)>,
    /// The indexes of the values left to the Python engine.
    pub handed_back: Vec<usize>,
    /// Those of them handed back with their containers peeled (engine.rs: kind HandedBack), by
    /// index, for the Python engine to read their payloads.
    pub peeled: Vec<(usize, Outcome)>,
    /// The page's partial structure (flushed).
    pub structure: DStructure,
}

/// A page of one place's values (None: not a blob) decoded with their trees, walked and
/// sketched. Nothing here touches Python.
pub fn describe_page(cfg: &Config, values: &[Option<&[u8]>], cap: usize, dcfg: &DescribeConfig) -> Described {
    let mut structure = DStructure::new();
    let mut encodings: Vec<(Kind, crate::engine::Label, u64)> = Vec::new();
    let mut handed: Vec<usize> = Vec::new();
    let mut peeled: Vec<(usize, Outcome)> = Vec::new();
    for (i, value) in values.iter().enumerate() {
        let Some(value) = value else {
            handed.push(i);
            continue;
        };
        let Some(outcome) = decode_for_describe(cfg, value, cap) else {
            handed.push(i);
            continue;
        };
        if !describable(&outcome) {
            handed.push(i);
            if outcome.kind == Kind::HandedBack {
                peeled.push((i, outcome));
            }
            continue;
        }
        let src = outcome.bytes(value);
        if let Some(tree) = &outcome.tree {
            if !DStructure::walkable(tree, src, dcfg) {
                handed.push(i);
                continue;
            }
            structure.add(tree, src, dcfg);
        }
        match encodings.iter_mut().find(|(k, l, _)| *k == outcome.kind && *l == outcome.label) {
            Some(entry) => entry.2 += 1,
            None => encodings.push((outcome.kind, outcome.label, 1)),
        }
    }
    structure.flush(dcfg);
    Described { encodings, handed_back: handed, peeled, structure }
}
