//! A payload query's page answer: the plan's places decoded (engine.rs, as read_page decodes
//! them), its conditions tested on the paths' values with SQL's semantics, and for the rows kept
//! either the projected values or, with aggregates, the page's per-group partial results, as
//! query/evaluate.py and query/groups.py compute them (they are the reference, compared page
//! by page in tests/native). A row the core cannot answer exactly (a value handed back, an
//! integer past 128 bits in a comparison or a sum, a record as a GROUP BY key) is handed back
//! whole: the Python evaluator reads it.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use crate::engine::{decode_value, Config, Kind, Needle, Outcome, Want};
use crate::num::{cmp_int_float, total_cmp};
use crate::tree::{bignum, Node, PathRead, Step, Str};

// ------------------------------------------------------------------------------ the program

/// A literal of a condition, as the Python side compiles it (query.grammar's Literal).
#[derive(Debug, Clone)]
pub enum Lit {
    Str(String),
    Int(i128),
    /// A decimal literal: the float nearest it (a float value compares with that: the number
    /// rule, payload/numbers.py), its floor and ceiling and whether it is an integer (an integer
    /// value compares with it exactly).
    Dec {
        f: f64,
        floor: i128,
        ceil: i128,
        integral: bool,
    },
    Bool(bool),
    Null,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
    Like,
    Contains,
    IsNull,
    IsNotNull,
    Undecodable,
    NotUndecodable,
}

impl Op {
    pub fn by_name(name: &str) -> Option<Op> {
        Some(match name {
            "=" => Op::Eq,
            "!=" => Op::Ne,
            "<" => Op::Lt,
            "<=" => Op::Le,
            ">" => Op::Gt,
            ">=" => Op::Ge,
            "IN" => Op::In,
            "LIKE" => Op::Like,
            "CONTAINS" => Op::Contains,
            "IS NULL" => Op::IsNull,
            "IS NOT NULL" => Op::IsNotNull,
            "IS UNDECODABLE" => Op::Undecodable,
            "IS NOT UNDECODABLE" => Op::NotUndecodable,
            _ => return None,
        })
    }
}

/// A condition: on a path of a place (`path` Some), or on a place's blob itself.
pub struct Cond {
    pub place: usize,
    pub path: Option<usize>,
    pub op: Op,
    pub lits: Vec<Lit>,
    /// LIKE: the pattern's characters (`%` any run, `_` one character).
    pub like: Vec<LikePart>,
    /// IN: its literals made sets once (query.evaluate._in_list, numbers.NumberSet).
    pub in_set: Option<InSet>,
}

/// An IN list's literals as sets: a value equals one of them (compare's `=`) when it is found in
/// the set of its kind: an integer among the integers and the integral decimals, a float among
/// the literals' nearest doubles (-0.0 as 0.0), a string among the strings, a bool among the
/// bools. A null literal equals nothing.
pub struct InSet {
    ints: HashSet<i128>,
    floats: HashSet<u64>,
    strs: HashSet<Box<[u8]>>,
    bools: [bool; 2],
}

/// A float as a key of InSet's floats: its bits, 0.0 for either zero.
fn float_key(f: f64) -> u64 {
    if f == 0.0 {
        0
    } else {
        f.to_bits()
    }
}

impl InSet {
    pub fn of(lits: &[Lit]) -> InSet {
        let mut set =
            InSet { ints: HashSet::new(), floats: HashSet::new(), strs: HashSet::new(), bools: [false; 2] };
        for lit in lits {
            match lit {
                Lit::Str(s) => {
                    set.strs.insert(s.as_bytes().into());
                }
                Lit::Bool(b) => set.bools[*b as usize] = true,
                Lit::Int(l) => {
                    set.ints.insert(*l);
                    set.floats.insert(float_key(*l as f64));
                }
                Lit::Dec { f, floor, integral, .. } => {
                    if *integral {
                        set.ints.insert(*floor);
                    }
                    set.floats.insert(float_key(*f));
                }
                Lit::Null => {}
            }
        }
        set
    }

    fn holds(&self, node: &Node, src: &[u8]) -> bool {
        match node {
            Node::Str(v) => self.strs.contains(v.bytes(src)),
            Node::Bool(b) => self.bools[*b as usize],
            _ => match number(node, src) {
                Some(Num::Int(i)) => self.ints.contains(&i),
                Some(Num::Float(f)) => !f.is_nan() && self.floats.contains(&float_key(f)),
                Some(Num::Big(_)) | None => false,
            },
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LikePart {
    Char(char),
    One,
    Any,
}

pub fn like_parts(pattern: &str) -> Vec<LikePart> {
    pattern
        .chars()
        .map(|c| match c {
            '%' => LikePart::Any,
            '_' => LikePart::One,
            other => LikePart::Char(other),
        })
        .collect()
}

/// query.evaluate.like_regex's fullmatch (DOTALL), on characters.
fn like_matches(parts: &[LikePart], text: &str) -> bool {
    let chars: Vec<char> = text.chars().collect();
    let (mut p, mut t) = (0usize, 0usize);
    let (mut star, mut mark) = (usize::MAX, 0usize);
    while t < chars.len() {
        if p < parts.len() && (parts[p] == LikePart::One || parts[p] == LikePart::Char(chars[t])) {
            p += 1;
            t += 1;
        } else if p < parts.len() && parts[p] == LikePart::Any {
            star = p;
            mark = t;
            p += 1;
        } else if star != usize::MAX {
            p = star + 1;
            mark += 1;
            t = mark;
        } else {
            return false;
        }
    }
    while p < parts.len() && parts[p] == LikePart::Any {
        p += 1;
    }
    p == parts.len()
}

/// An aggregate (query.groups.AggSpec): its function, count(*), its input's path.
pub struct Agg {
    pub func: AggFunc,
    pub star: bool,
    pub input: Option<(usize, usize)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggFunc {
    Count,
    Min,
    Max,
    Sum,
    Avg,
}

impl AggFunc {
    pub fn by_name(name: &str) -> Option<AggFunc> {
        Some(match name {
            "count" => AggFunc::Count,
            "min" => AggFunc::Min,
            "max" => AggFunc::Max,
            "sum" => AggFunc::Sum,
            "avg" => AggFunc::Avg,
            _ => return None,
        })
    }
}

pub struct Program {
    /// Per place, the paths it reads (the steps of each).
    pub paths: Vec<Vec<Vec<Step>>>,
    /// Per place, the needles of its conditions (a JSON text none can hold is not parsed).
    pub needles: Vec<Vec<Needle>>,
    pub conds: Vec<Cond>,
    /// With aggregates: the GROUP BY keys' paths and the aggregates.
    pub keys: Vec<(usize, usize)>,
    pub aggs: Vec<Agg>,
    pub grouped: bool,
    /// Per place, whether its values' trees are built (a file writes the decoded payloads of
    /// the kept rows: held.rs), the paths then read in them.
    pub trees: Vec<bool>,
    /// With `trees`: a text's JSON container read for its value too (Parquet lays its struct
    /// columns out from it: the text stands for its value, engine's Want.text_values, its tree
    /// built where it cannot be read in one pass); false: a file of text (JSON Lines, CSV), which
    /// writes a text's payload from its text, the label's reading saying whether it is a JSON
    /// container.
    pub text_trees: bool,
    /// Without `text_trees`: a JSON text's whitespace runs noted as its JSON is checked, for
    /// JSON Lines to write it minified from them (engine's Want.gaps); false: not noted (CSV).
    pub gaps: bool,
}

// ------------------------------------------------------------------------------ values

/// One place's value in one row.
pub enum Slot {
    /// Read: the outcome of a readable value (text or record, not cut).
    Read(Outcome),
    /// A readable text a needle rejected: a condition certainly fails on it.
    Rejected,
    /// A value no reading can read: its kind code (engine::Kind as u8).
    Undecodable(u8),
    Cut,
    /// A null blob: its paths read as missing.
    Null,
    /// Not a blob at all: undecodable, no known format.
    NotBlob,
    /// The core leaves it to Python.
    HandBack,
}

/// The value at a path in a row, as query.evaluate's _PlacePage.values gives it.
enum At<'a> {
    Node(&'a Node, &'a [u8]),
    Missing,
    /// Undecodable, cut: no value to read (conditions fail, projections are None).
    None,
    Cut,
}

fn at<'a>(slot: &'a Slot, path: usize, stored: &'a [u8]) -> At<'a> {
    match slot {
        Slot::Read(outcome) => match outcome.reads.get(path) {
            Some(PathRead::Node(node)) => At::Node(node, outcome.bytes(stored)),
            _ => At::Missing,
        },
        Slot::Null => At::Missing,
        Slot::Cut => At::Cut,
        _ => At::None,
    }
}

/// SQL's answer for one row: it holds, it does not, or the core cannot tell (hand the row back).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Tri {
    Yes,
    No,
    Unsure,
}

fn tri(b: bool) -> Tri {
    if b {
        Tri::Yes
    } else {
        Tri::No
    }
}

/// A number of a tree (bool excluded: Python's _same_kind keeps bools apart).
enum Num {
    Int(i128),
    Float(f64),
    /// An integer past 128 bits: whether it is negative. Every literal the core takes is within
    /// 128 bits, so its sign alone orders it against one (payload/numbers.py's Exact: by size).
    Big(bool),
}

fn number(node: &Node, src: &[u8]) -> Option<Num> {
    match node {
        Node::Int(i) => Some(Num::Int(*i as i128)),
        Node::Wide(i) => Some(Num::Int(*i)),
        Node::Float(f) => Some(Num::Float(*f)),
        Node::BigInt(text) => {
            Some(text.parse::<i128>().map(Num::Int).unwrap_or(Num::Big(text.starts_with('-'))))
        }
        Node::BigBytes(a, n, negative) => Some(
            bignum(&src[*a as usize..(*a + *n) as usize], *negative)
                .map(Num::Int)
                .unwrap_or(Num::Big(*negative)),
        ),
        _ => None,
    }
}

/// A number past 128 bits against any number within them: below when negative, else above.
fn big_order(negative: bool) -> Ordering {
    if negative {
        Ordering::Less
    } else {
        Ordering::Greater
    }
}

fn ordered(ord: Ordering, op: Op) -> bool {
    match op {
        Op::Eq => ord == Ordering::Equal,
        Op::Ne => ord != Ordering::Equal,
        Op::Lt => ord == Ordering::Less,
        Op::Le => ord != Ordering::Greater,
        Op::Gt => ord == Ordering::Greater,
        Op::Ge => ord != Ordering::Less,
        _ => false,
    }
}

/// query.evaluate.compare(value, op, literal) on a node (op one of = != < <= > >=).
fn compare(node: &Node, src: &[u8], op: Op, lit: &Lit) -> Tri {
    match lit {
        Lit::Null => Tri::No,
        Lit::Str(s) => match node {
            Node::Str(v) => tri(ordered(v.bytes(src).cmp(s.as_bytes()), op)),
            _ => Tri::No,
        },
        Lit::Bool(b) => match node {
            Node::Bool(v) => tri(ordered(v.cmp(b), op)),
            _ => Tri::No,
        },
        Lit::Int(l) => match number(node, src) {
            None => Tri::No,
            Some(Num::Big(negative)) => tri(ordered(big_order(negative), op)),
            Some(Num::Int(i)) => tri(ordered(i.cmp(l), op)),
            // A float against the literal's nearest double (`as` rounds to nearest, ties to even,
            // as Python's float(int) does; past the doubles an infinity).
            Some(Num::Float(f)) => tri(ordered(total_cmp(f, *l as f64), op)),
        },
        Lit::Dec { f: d, floor, ceil, integral } => match number(node, src) {
            None => Tri::No,
            Some(Num::Big(negative)) => tri(ordered(big_order(negative), op)),
            Some(Num::Float(x)) => tri(ordered(total_cmp(x, *d), op)),
            Some(Num::Int(i)) => {
                let ord = if *integral {
                    i.cmp(floor)
                } else if i <= *floor {
                    Ordering::Less
                } else if i >= *ceil {
                    Ordering::Greater
                } else {
                    return Tri::Unsure;
                };
                tri(ordered(ord, op))
            }
        },
    }
}

fn holds(cond: &Cond, value: &At<'_>) -> Tri {
    let (node, src) = match value {
        At::None | At::Cut => return Tri::No,
        At::Missing => {
            return match cond.op {
                Op::IsNull => Tri::Yes,
                _ => Tri::No,
            }
        }
        At::Node(node, src) => (*node, *src),
    };
    match cond.op {
        Op::IsNull => tri(matches!(node, Node::Null)),
        Op::IsNotNull => tri(!matches!(node, Node::Null)),
        Op::Like => match node {
            Node::Str(s) => tri(like_matches(&cond.like, s.get(src))),
            _ => Tri::No,
        },
        Op::In => match &cond.in_set {
            Some(set) => tri(set.holds(node, src)),
            None => Tri::No,
        },
        Op::Contains => {
            let items: Vec<&Node> = match node {
                Node::List(items) => items.iter().collect(),
                Node::Map(entries) => entries.iter().map(|(_, v)| v).collect(),
                _ => return Tri::No,
            };
            let mut out = Tri::No;
            for item in items {
                match compare(item, src, Op::Eq, &cond.lits[0]) {
                    Tri::Yes => return Tri::Yes,
                    Tri::Unsure => out = Tri::Unsure,
                    Tri::No => {}
                }
            }
            out
        }
        Op::Undecodable | Op::NotUndecodable => Tri::Unsure, // said of the blob, not a path
        op => compare(node, src, op, &cond.lits[0]),
    }
}

// ------------------------------------------------------------------------------ groups

/// A GROUP BY key part as Python's dict compares keys (1 == 1.0 == True), with the first one
/// met kept to show (query.groups.Groups keeps the first key inserted).
#[derive(Hash, PartialEq, Eq, Clone)]
enum KeyPart<'a> {
    Null,
    Num(i128),
    Float(u64),
    Str(&'a str),
    Bytes(&'a [u8]),
    Undecodable,
}

/// A key part as shown, borrowed until a new group keeps it (Shown).
enum ShownPart<'a> {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(&'a str),
    Bytes(&'a [u8]),
    Undecodable,
}

impl ShownPart<'_> {
    fn owned(&self) -> Shown {
        match self {
            ShownPart::Null => Shown::Null,
            ShownPart::Bool(b) => Shown::Bool(*b),
            ShownPart::Int(i) => Shown::Int(*i),
            ShownPart::Float(f) => Shown::Float(*f),
            ShownPart::Str(s) => Shown::Str((*s).into()),
            ShownPart::Bytes(b) => Shown::Bytes((*b).into()),
            ShownPart::Undecodable => Shown::Undecodable,
        }
    }
}

#[derive(Clone, Debug)]
pub enum Shown {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(Box<str>),
    Bytes(Box<[u8]>),
    Undecodable,
}

/// The key part of a path's value (plain, as GROUP BY reads it); None: the core cannot key it.
fn key_part<'a>(value: &At<'a>, undecodable: bool) -> Option<(KeyPart<'a>, ShownPart<'a>)> {
    if undecodable {
        return Some((KeyPart::Undecodable, ShownPart::Undecodable));
    }
    let (node, src) = match value {
        At::Node(node, src) => (*node, *src),
        _ => return Some((KeyPart::Null, ShownPart::Null)), // missing, cut: None
    };
    Some(match node {
        Node::Null => (KeyPart::Null, ShownPart::Null),
        Node::Bool(b) => (KeyPart::Num(*b as i128), ShownPart::Bool(*b)),
        Node::Int(i) => (KeyPart::Num(*i as i128), ShownPart::Int(*i as i128)),
        Node::Wide(i) => (KeyPart::Num(*i), ShownPart::Int(*i)),
        Node::BigInt(text) => {
            let i: i128 = text.parse().ok()?;
            (KeyPart::Num(i), ShownPart::Int(i))
        }
        Node::BigBytes(a, n, negative) => {
            let i = bignum(&src[*a as usize..(*a + *n) as usize], *negative)?;
            (KeyPart::Num(i), ShownPart::Int(i))
        }
        Node::Float(f) => {
            if f.is_nan() {
                return None; // a group of its own per value in Python: left to it
            }
            let part = if f.fract() == 0.0 && f.abs() < 1.7e38 {
                KeyPart::Num(*f as i128)
            } else {
                KeyPart::Float(f.to_bits())
            };
            (part, ShownPart::Float(*f))
        }
        Node::Str(s) => {
            let text = s.get(src);
            (KeyPart::Str(text), ShownPart::Str(text))
        }
        Node::Bytes(a, n) => {
            let bytes = &src[*a as usize..(*a + *n) as usize];
            (KeyPart::Bytes(bytes), ShownPart::Bytes(bytes))
        }
        _ => return None, // a record, a big integer: Python keys it
    })
}

/// Whether Accumulator.add of the value is one the core adds exactly (what a fresh
/// accumulator's add() would refuse: an integer past 128 bits, an infinite float).
fn addable(func: AggFunc, star: bool, value: &At<'_>) -> bool {
    if star || func == AggFunc::Count {
        return true;
    }
    match value {
        At::Node(Node::BigInt(text), _) => text.parse::<i128>().is_ok(),
        At::Node(Node::BigBytes(a, n, negative), src) => {
            bignum(&src[*a as usize..(*a + *n) as usize], *negative).is_some()
        }
        At::Node(Node::Float(f), _) => !f.is_infinite(),
        _ => true,
    }
}

/// A float sum kept exactly: a two's complement fixed point number whose last bit is 2**-1074
/// (every finite double is a whole number of those), wide enough for any page's sum.
#[derive(Clone)]
pub struct ExactSum {
    limbs: [u64; LIMBS],
}

const LIMBS: usize = 36;
/// The fixed point's last bit is 2**-FLOAT_SUM_SHIFT (the module's constant of that name).
pub const FLOAT_SUM_SHIFT: u32 = 1074;

impl ExactSum {
    fn new() -> Self {
        ExactSum { limbs: [0; LIMBS] }
    }

    fn is_zero(&self) -> bool {
        self.limbs.iter().all(|&l| l == 0)
    }

    /// Adds a finite float exactly.
    fn add(&mut self, f: f64) {
        if f == 0.0 {
            return;
        }
        let bits = f.to_bits();
        let negative = bits >> 63 == 1;
        let exp = ((bits >> 52) & 0x7ff) as i64;
        let frac = bits & ((1u64 << 52) - 1);
        let (mantissa, shift) = if exp == 0 { (frac, 0i64) } else { (frac | (1u64 << 52), exp - 1) };
        // value = mantissa * 2**(shift - 1074): mantissa shifted left by `shift` in the fixed point
        let shift = shift as usize;
        let (limb, bit) = (shift / 64, shift % 64);
        let low = (mantissa as u128) << bit;
        let parts = [low as u64, (low >> 64) as u64];
        if negative {
            self.sub_at(limb, parts);
        } else {
            self.add_at(limb, parts);
        }
    }

    fn add_at(&mut self, at: usize, parts: [u64; 2]) {
        let mut carry = 0u64;
        for (k, part) in parts.iter().enumerate() {
            let (s1, c1) = self.limbs[at + k].overflowing_add(*part);
            let (s2, c2) = s1.overflowing_add(carry);
            self.limbs[at + k] = s2;
            carry = (c1 as u64) + (c2 as u64);
        }
        let mut i = at + 2;
        while carry != 0 && i < LIMBS {
            let (s, c) = self.limbs[i].overflowing_add(carry);
            self.limbs[i] = s;
            carry = c as u64;
            i += 1;
        }
    }

    fn sub_at(&mut self, at: usize, parts: [u64; 2]) {
        let mut borrow = 0u64;
        for (k, part) in parts.iter().enumerate() {
            let (s1, b1) = self.limbs[at + k].overflowing_sub(*part);
            let (s2, b2) = s1.overflowing_sub(borrow);
            self.limbs[at + k] = s2;
            borrow = (b1 as u64) + (b2 as u64);
        }
        let mut i = at + 2;
        while borrow != 0 && i < LIMBS {
            let (s, b) = self.limbs[i].overflowing_sub(borrow);
            self.limbs[i] = s;
            borrow = b as u64;
            i += 1;
        }
    }

    /// Little-endian two's complement bytes (int.from_bytes(..., "little", signed=True)).
    pub fn bytes(&self) -> Vec<u8> {
        self.limbs.iter().flat_map(|l| l.to_le_bytes()).collect()
    }
}

#[derive(Clone, Debug)]
pub enum NumShown {
    Int(i128),
    Float(f64),
}

fn num_cmp(a: &NumShown, b: &NumShown) -> Ordering {
    match (a, b) {
        (NumShown::Int(x), NumShown::Int(y)) => x.cmp(y),
        (NumShown::Float(x), NumShown::Float(y)) => x.partial_cmp(y).unwrap_or(Ordering::Equal),
        (NumShown::Int(x), NumShown::Float(y)) => cmp_int_float(*x, *y),
        (NumShown::Float(x), NumShown::Int(y)) => cmp_int_float(*y, *x).reverse(),
    }
}

/// query.groups._pick: the smaller (larger) of two; equal numbers of different types resolve
/// to the float (by type name), else the one held.
fn pick_num(held: &mut Option<NumShown>, value: NumShown, want: Ordering) {
    match held {
        None => *held = Some(value),
        Some(current) => {
            let ord = num_cmp(&value, current);
            let float_over_int = ord == Ordering::Equal
                && matches!(value, NumShown::Float(_))
                && matches!(current, NumShown::Int(_));
            if ord == want || float_over_int {
                *held = Some(value);
            }
        }
    }
}

/// query.groups.Accumulator's state over one page.
#[derive(Clone)]
pub struct Acc {
    pub count: u64,
    pub int_sum: i128,
    pub float_sum: ExactSum,
    pub floats: bool,
    pub num_min: Option<NumShown>,
    pub num_max: Option<NumShown>,
    pub str_min: Option<Box<str>>,
    pub str_max: Option<Box<str>>,
    pub skipped: u64,
}

impl Acc {
    fn new() -> Self {
        Acc {
            count: 0,
            int_sum: 0,
            float_sum: ExactSum::new(),
            floats: false,
            num_min: None,
            num_max: None,
            str_min: None,
            str_max: None,
            skipped: 0,
        }
    }

    pub fn has_float_sum(&self) -> bool {
        !self.float_sum.is_zero()
    }

    /// Accumulator.add of the value at the input's path (None: missing, cut, undecodable).
    /// Err(()): the core cannot add it exactly (Python adds the row).
    fn add(&mut self, func: AggFunc, star: bool, value: &At<'_>) -> Result<(), ()> {
        if star {
            self.count += 1;
            return Ok(());
        }
        let (node, src) = match value {
            At::Node(node, src) if !matches!(node, Node::Null) => (*node, *src),
            _ => return Ok(()), // None: not counted
        };
        if func == AggFunc::Count {
            self.count += 1;
            return Ok(());
        }
        let whole = match node {
            Node::Int(i) => Some(*i as i128),
            Node::Wide(i) => Some(*i),
            Node::BigInt(text) => Some(text.parse::<i128>().map_err(|_| ())?),
            Node::BigBytes(a, n, negative) => {
                Some(bignum(&src[*a as usize..(*a + *n) as usize], *negative).ok_or(())?)
            }
            _ => None,
        };
        match node {
            Node::Int(_) | Node::Wide(_) | Node::BigInt(_) | Node::BigBytes(..) => {
                let i = whole.ok_or(())?;
                self.count += 1;
                self.int_sum = self.int_sum.checked_add(i).ok_or(())?;
                pick_num(&mut self.num_min, NumShown::Int(i), Ordering::Less);
                pick_num(&mut self.num_max, NumShown::Int(i), Ordering::Greater);
            }
            Node::Float(f) => {
                if !f.is_finite() {
                    return Err(()); // NaN and the infinities: query/groups.py's flags, Python's to keep
                }
                self.count += 1;
                self.float_sum.add(*f);
                self.floats = true;
                pick_num(&mut self.num_min, NumShown::Float(*f), Ordering::Less);
                pick_num(&mut self.num_max, NumShown::Float(*f), Ordering::Greater);
            }
            Node::Str(s) if matches!(func, AggFunc::Min | AggFunc::Max) => {
                self.count += 1;
                let text = s.get(src);
                if self.str_min.as_deref().is_none_or(|m| text < m) {
                    self.str_min = Some(text.into());
                }
                if self.str_max.as_deref().is_none_or(|m| text > m) {
                    self.str_max = Some(text.into());
                }
            }
            _ => self.skipped += 1,
        }
        Ok(())
    }
}

pub struct Group {
    pub key: Vec<Shown>,
    pub accs: Vec<Acc>,
}

// ------------------------------------------------------------------------------ a page

/// Per path of a place: whether a value had it, and the misses before the first that had it
/// (depth, the step's index, the keys there), as read_page's Page.found / missed.
pub struct PathSeen {
    pub found: bool,
    pub miss: Option<(usize, Vec<String>)>,
}

pub struct PageResult {
    pub kept: Vec<usize>,
    pub handed_rows: Vec<usize>,
    pub undecodable: u64,
    pub cut: u64,
    /// Undecodable values by kind code (engine::Kind as u8; NotBlob counts as no known format).
    pub kinds: [u64; 6],
    pub seen: Vec<Vec<PathSeen>>,
    pub groups: Vec<Group>,
    /// A sum past 128 bits: the page is Python's.
    pub overflow: bool,
}

const MISS_KEYS: usize = 200;

fn note_miss(seen: &mut PathSeen, depth: usize, keys: Vec<String>) {
    match &mut seen.miss {
        Some((d, _)) if depth < *d => {}
        Some((d, known)) if depth == *d => {
            for k in keys {
                if known.len() >= MISS_KEYS {
                    break;
                }
                if !known.contains(&k) {
                    known.push(k);
                }
            }
        }
        _ => {
            let mut fresh: Vec<String> = Vec::new();
            for k in keys {
                if fresh.len() >= MISS_KEYS {
                    break;
                }
                if !fresh.contains(&k) {
                    fresh.push(k);
                }
            }
            seen.miss = Some((depth, fresh));
        }
    }
}

/// Decodes one place's value for a query (the values a reader reads: kind, cut, the paths;
/// `want`: the place's). A value handed back with its containers peeled leaves its outcome in
/// `peeled` (engine.rs: kind HandedBack), for the Python engine to read its payload.
pub fn read_slot(
    cfg: &Config,
    cell: Cell<'_>,
    cap: usize,
    want: &Want,
    peeled: &mut Option<Outcome>,
) -> Slot {
    let value = match cell {
        Cell::Blob(value) => value,
        Cell::Null => return Slot::Null,
        Cell::Other => return Slot::NotBlob,
    };
    let Some(Ok(outcome)) = crate::panics::guarded(|| decode_value(cfg, value, cap, want)) else {
        return Slot::HandBack;
    };
    if outcome.cut {
        return Slot::Cut;
    }
    match outcome.kind {
        Kind::Text if outcome.rejected => Slot::Rejected,
        Kind::Text | Kind::Record => Slot::Read(outcome),
        Kind::HandedBack => {
            *peeled = Some(outcome);
            Slot::HandBack
        }
        kind => Slot::Undecodable(kind as u8),
    }
}

/// The page's answer over its places' slots (slots[place][row]; `stored[place][row]` the stored
/// bytes of each value, for the spans of stored text).
pub fn run<'a>(
    program: &Program,
    slots: &'a [Vec<Slot>],
    stored: &'a [Vec<&'a [u8]>],
    rows: usize,
) -> PageResult {
    let mut out = PageResult {
        kept: Vec::new(),
        handed_rows: Vec::new(),
        undecodable: 0,
        cut: 0,
        kinds: [0; 6],
        seen: program
            .paths
            .iter()
            .map(|paths| paths.iter().map(|_| PathSeen { found: false, miss: None }).collect())
            .collect(),
        groups: Vec::new(),
        overflow: false,
    };
    let mut index: HashMap<Vec<KeyPart<'a>>, usize> = HashMap::new();
    let mut parts: Vec<KeyPart<'a>> = Vec::with_capacity(program.keys.len());
    let mut shown: Vec<ShownPart<'a>> = Vec::with_capacity(program.keys.len());
    let empty: &[u8] = &[];
    for row in 0..rows {
        let stored_of = |place: usize| stored[place].get(row).copied().unwrap_or(empty);
        if slots.iter().any(|place| matches!(place[row], Slot::HandBack)) {
            out.handed_rows.push(row);
            continue;
        }
        // the conditions, in order (all are read: a row the core cannot decide goes to Python)
        let mut verdict = Tri::Yes;
        for cond in &program.conds {
            let slot = &slots[cond.place][row];
            let t = match cond.path {
                None => {
                    let undecodable = matches!(slot, Slot::Undecodable(_) | Slot::NotBlob);
                    tri(undecodable == (cond.op == Op::Undecodable))
                }
                Some(p) => holds(cond, &at(slot, p, stored_of(cond.place))),
            };
            match t {
                Tri::No => {
                    verdict = Tri::No;
                    break;
                }
                Tri::Unsure => verdict = Tri::Unsure,
                Tri::Yes => {}
            }
        }
        if verdict == Tri::Unsure {
            out.handed_rows.push(row);
            continue;
        }
        let mut grouped = false;
        if verdict == Tri::Yes && program.grouped {
            parts.clear();
            shown.clear();
            let mut ok = true;
            for &(place, path) in &program.keys {
                let slot = &slots[place][row];
                let undecodable = matches!(slot, Slot::Undecodable(_) | Slot::NotBlob);
                match key_part(&at(slot, path, stored_of(place)), undecodable) {
                    Some((part, show)) => {
                        parts.push(part);
                        shown.push(show);
                    }
                    None => {
                        ok = false;
                        break;
                    }
                }
            }
            // the inputs: checked before anything of the row is counted
            let exact = ok
                && program.aggs.iter().all(|agg| {
                    let value = match agg.input {
                        Some((place, path)) => at(&slots[place][row], path, stored_of(place)),
                        None => At::Missing,
                    };
                    addable(agg.func, agg.star, &value)
                });
            if !exact {
                out.handed_rows.push(row);
                continue;
            }
            grouped = true;
        }
        // counted: the row is the core's
        for (place, slots_of) in slots.iter().enumerate() {
            let slot = &slots_of[row];
            match slot {
                Slot::Undecodable(kind) => {
                    out.undecodable += 1;
                    out.kinds[*kind as usize] += 1;
                }
                Slot::NotBlob => {
                    out.undecodable += 1;
                    out.kinds[Kind::NoFormat as usize] += 1;
                }
                Slot::Cut => out.cut += 1,
                Slot::Read(outcome) => {
                    let src = outcome.bytes(stored_of(place));
                    for (p, read) in outcome.reads.iter().enumerate() {
                        let seen = &mut out.seen[place][p];
                        match read {
                            PathRead::Node(_) => seen.found = true,
                            PathRead::Missing { depth, keys } => {
                                if !seen.found {
                                    note_miss(
                                        seen,
                                        *depth,
                                        keys.iter().map(|k: &Str| k.get(src).to_owned()).collect(),
                                    );
                                }
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        if verdict != Tri::Yes {
            continue;
        }
        out.kept.push(row);
        if grouped {
            let at_group = match index.get(parts.as_slice()) {
                Some(&g) => g,
                None => {
                    let key = shown.iter().map(ShownPart::owned).collect();
                    out.groups.push(Group { key, accs: program.aggs.iter().map(|_| Acc::new()).collect() });
                    index.insert(parts.clone(), out.groups.len() - 1);
                    out.groups.len() - 1
                }
            };
            for (k, agg) in program.aggs.iter().enumerate() {
                let value = match agg.input {
                    Some((place, path)) => at(&slots[place][row], path, stored_of(place)),
                    None => At::Missing,
                };
                if out.groups[at_group].accs[k].add(agg.func, agg.star, &value).is_err() {
                    out.overflow = true;
                }
            }
        }
    }
    out
}

// ------------------------------------------------------------------------------ the page call

/// A condition as the caller names it: its operator's text (query.grammar's), its place, its
/// path (None: the blob itself), its literals.
pub struct CondSpec {
    pub op: String,
    pub place: usize,
    pub path: Option<usize>,
    pub lits: Vec<Lit>,
}

/// An aggregate as the caller names it: its function's name, count(*), its input's path.
pub struct AggSpec {
    pub func: String,
    pub star: bool,
    pub input: Option<(usize, usize)>,
}

impl Program {
    /// The program of a query's page: every reference checked (a place and path that exist),
    /// operators and functions known, a literal for each operator that needs one.
    #[allow(clippy::too_many_arguments)] // the plan's parts, one each
    pub fn new(
        paths: Vec<Vec<Vec<Step>>>,
        needles: Vec<Vec<Needle>>,
        conds: Vec<CondSpec>,
        projected: &[(usize, usize)],
        keys: Vec<(usize, usize)>,
        aggs: Vec<AggSpec>,
        grouped: bool,
    ) -> Result<Program, String> {
        let known = |place: usize, path: Option<usize>| -> Result<(), String> {
            if place < paths.len() && path.is_none_or(|p| p < paths[place].len()) {
                Ok(())
            } else {
                Err("a reference to no place or path".to_owned())
            }
        };
        if needles.len() != paths.len() {
            return Err("needles for another number of places".to_owned());
        }
        let mut program_conds = Vec::with_capacity(conds.len());
        for spec in conds {
            known(spec.place, spec.path)?;
            let op = Op::by_name(&spec.op).ok_or_else(|| format!("operator {:?}", spec.op))?;
            let like = match (op, spec.lits.first()) {
                (Op::Like, Some(Lit::Str(pattern))) => like_parts(pattern),
                (Op::Like, _) => return Err("LIKE takes a string".to_owned()),
                _ => Vec::new(),
            };
            if matches!(op, Op::Contains | Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge)
                && spec.lits.is_empty()
            {
                return Err("an operator without its literal".to_owned());
            }
            let in_set = (op == Op::In).then(|| InSet::of(&spec.lits));
            program_conds.push(Cond {
                place: spec.place,
                path: spec.path,
                op,
                lits: spec.lits,
                like,
                in_set,
            });
        }
        for &(place, path) in projected.iter().chain(keys.iter()) {
            known(place, Some(path))?;
        }
        let mut program_aggs = Vec::with_capacity(aggs.len());
        for spec in aggs {
            if let Some((place, path)) = spec.input {
                known(place, Some(path))?;
            }
            let func = AggFunc::by_name(&spec.func).ok_or_else(|| format!("aggregate {:?}", spec.func))?;
            program_aggs.push(Agg { func, star: spec.star, input: spec.input });
        }
        let trees = vec![false; paths.len()];
        Ok(Program {
            paths,
            needles,
            conds: program_conds,
            keys,
            aggs: program_aggs,
            grouped,
            trees,
            text_trees: true,
            gaps: false,
        })
    }
}

/// One value of a place as the page holds it: a blob's bytes, a null blob, or anything else
/// (not a blob: undecodable, no known format).
#[derive(Clone, Copy)]
pub enum Cell<'a> {
    Blob(&'a [u8]),
    Null,
    Other,
}

impl<'a> Cell<'a> {
    pub fn stored(&self) -> &'a [u8] {
        match self {
            Cell::Blob(bytes) => bytes,
            _ => &[],
        }
    }
}

/// Decoded bytes a page keeps for its answer at the most (then its other values go back).
const RETAINED: usize = 256 << 20;

/// A query's page: every place's values read (cells[place][row]), then the rows' answer. The
/// slots are kept for the projections of the rows kept (`projected`).
pub fn query_page(
    cfg: &Config,
    program: &Program,
    cells: &[Vec<Cell<'_>>],
    rows: usize,
    cap: usize,
) -> (Vec<Vec<Slot>>, PageResult, Vec<Vec<(usize, Outcome)>>) {
    let mut retained = 0usize;
    // per place, the values handed back with their containers peeled (their row and outcome)
    let mut peeled: Vec<Vec<(usize, Outcome)>> = cells.iter().map(|_| Vec::new()).collect();
    let slots: Vec<Vec<Slot>> = cells
        .iter()
        .zip(program.paths.iter().zip(&program.needles))
        .enumerate()
        .map(|(place, (values, (paths, needles)))| {
            let want = Want {
                paths,
                tree: program.trees.get(place).copied().unwrap_or(false),
                text_tree: false,
                gaps: program.gaps,
                text_values: program.text_trees,
                measure: false,
                json: true,
                needles,
            };
            let handed = &mut peeled[place];
            values
                .iter()
                .enumerate()
                .map(|(row, cell)| {
                    if retained > RETAINED {
                        return Slot::HandBack;
                    }
                    let mut found = None;
                    let slot = read_slot(cfg, *cell, cap, &want, &mut found);
                    let kept = match (&slot, &found) {
                        (Slot::Read(outcome), _) | (_, Some(outcome)) => match &outcome.payload {
                            crate::engine::Payload::Owned(data) => data.len(),
                            crate::engine::Payload::Stored => 0,
                        },
                        _ => 0,
                    };
                    retained += kept;
                    if let Some(outcome) = found {
                        handed.push((row, outcome));
                    }
                    slot
                })
                .collect()
        })
        .collect();
    let stored: Vec<Vec<&[u8]>> =
        cells.iter().map(|values| values.iter().map(Cell::stored).collect()).collect();
    let result = run(program, &slots, &stored, rows);
    (slots, result, peeled)
}

/// The value a kept row has at a place's path (None: missing, cut, undecodable), and the bytes
/// its strings are spans of.
pub fn projected<'a>(slot: &'a Slot, path: usize, cell: &Cell<'a>) -> Option<(&'a Node, &'a [u8])> {
    match at(slot, path, cell.stored()) {
        At::Node(node, src) => Some((node, src)),
        _ => None,
    }
}

/// A group partial's accumulator state, as query.groups.Accumulator takes it.
impl Acc {
    /// The float sum as little-endian two's complement bytes over 2**FLOAT_SUM_SHIFT, None when
    /// no float was added.
    pub fn float_sum_bytes(&self) -> Option<Vec<u8>> {
        if self.has_float_sum() {
            Some(self.float_sum.bytes())
        } else {
            None
        }
    }
}
