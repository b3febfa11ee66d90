//! Values held for a file: the path values and decoded payloads of a page's kept rows, kept by the
//! core (no Python object per value) until the file's writer has settled each column's kind, then
//! laid out as Arrow arrays of that kind (render/parquet.py writes them as they come).
//!
//! The kinds are render/arrow_types.py's, decided there (its lattice reads a sample of the values
//! as Python objects, and the values that did not fit): the core only converts a value to a kind,
//! as that module's converters do (`compile_kind`), and says which values do not fit it (a misfit:
//! the writer widens the kind and asks again). A value whose conversion the Python side does
//! differently (parquet_columns.is_plain says no: bytes, a tag, a non-finite float or a huge
//! integer in a record, a tree past the budget's nodes or 32 levels) is not held: it stays Python's.

use std::collections::HashMap;
use std::fmt::Write;
use std::sync::Arc;

use crate::columns::{
    fixed_array, list_array, nullable_struct_array, py_float_repr, variable_array_of, Array, DataBytes,
};
use crate::engine::{Kind as ViewKind, Label, Outcome};
use crate::query::Slot as QuerySlot;
use crate::tree::{Node, Str};

/// A kind of render/arrow_types.py (the ones values read from payloads take).
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// Only nulls (written as utf8).
    Null,
    Bool,
    /// Integers within `bits`: 53 and 64 as int64, 128 as decimal128(38, 0).
    Int(u32),
    Float,
    /// decimal128(38, scale): integers of at most `digits` digits.
    Dec {
        scale: u32,
        digits: u32,
    },
    Str,
    /// Each value as its JSON text (arrow_types.json_text).
    Json,
    List(Box<Kind>),
    Struct(Vec<(String, Kind)>),
}

/// One value held: its node (Node::Null stands for None) and the bytes its spans point into (empty
/// when detached: every string its own). The bytes are the decoded payload's own buffer, not a
/// copy of it (an `Arc<[u8]>` made of a Vec copies it).
#[derive(Clone, Debug)]
pub struct Held {
    pub node: Node,
    pub src: Arc<Vec<u8>>,
}

/// No bytes: one buffer shared by every detached value (no allocation a value).
fn no_bytes() -> Arc<Vec<u8>> {
    static EMPTY: std::sync::OnceLock<Arc<Vec<u8>>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(|| Arc::new(Vec::new())).clone()
}

/// A decoded payload's bytes as a held value's: its buffer kept (its spare room given back when
/// large), or the stored bytes copied.
fn payload_bytes(payload: crate::engine::Payload, stored: &[u8]) -> Arc<Vec<u8>> {
    match payload {
        crate::engine::Payload::Owned(mut data) => {
            if data.capacity() - data.len() > data.len() / 8 {
                data.shrink_to_fit();
            }
            Arc::new(data)
        }
        crate::engine::Payload::Stored => Arc::new(stored.to_vec()),
    }
}

impl Held {
    pub fn none() -> Held {
        Held { node: Node::Null, src: no_bytes() }
    }
}

/// 2**53: the integers a double holds exactly (arrow_types._EXACT_IN_DOUBLE).
const EXACT_IN_DOUBLE: i128 = 1 << 53;
/// Digits of decimal128 (arrow_types._DECIMAL_DIGITS).
const DECIMAL_DIGITS: u32 = 38;
/// parquet_columns.is_plain: records nested deeper are spelt by the Python side.
const PLAIN_DEPTH: usize = 32;
/// parquet_columns._plain_scalar: an integer of more bits is spelt by the Python side. A decimal
/// text of at most this many digits is within 14,000 bits (10**4214 < 2**14000).
const PLAIN_DIGITS: usize = 4214;

/// A CBOR bignum as an integer node (its value within 128 bits, else its decimal text).
fn bignum_node(node: &Node, src: &[u8]) -> Node {
    if let Node::BigBytes(a, n, negative) = node {
        if let Some(value) = crate::tree::bignum(&src[*a as usize..(*a + *n) as usize], *negative) {
            return match i64::try_from(value) {
                Ok(small) => Node::Int(small),
                Err(_) => Node::Wide(value),
            };
        }
        return Node::BigInt(crate::columns::big_text(node, src).into());
    }
    node.clone()
}

/// The tree with its CBOR bignums as integer nodes (what the Python side reads them as).
fn without_bignums(node: &mut Node, src: &[u8]) {
    match node {
        Node::BigBytes(..) => *node = bignum_node(node, src),
        Node::List(items) => items.iter_mut().for_each(|item| without_bignums(item, src)),
        Node::Map(entries) => entries.iter_mut().for_each(|(k, v)| {
            without_bignums(k, src);
            without_bignums(v, src);
        }),
        _ => {}
    }
}

fn has_bignum(node: &Node) -> bool {
    match node {
        Node::BigBytes(..) => true,
        Node::List(items) => items.iter().any(has_bignum),
        Node::Map(entries) => entries.iter().any(|(k, v)| has_bignum(k) || has_bignum(v)),
        _ => false,
    }
}

/// A node with its spans copied out (every string its own, a CBOR bignum an integer), or None for
/// a node a held value cannot be (a byte string, an ext value: the Python side spells those).
pub fn detached(node: &Node, src: &[u8]) -> Option<Node> {
    Some(match node {
        Node::BigBytes(..) => bignum_node(node, src),
        Node::Null => Node::Null,
        Node::Bool(b) => Node::Bool(*b),
        Node::Int(i) => Node::Int(*i),
        Node::Wide(i) => Node::Wide(*i),
        Node::BigInt(text) => Node::BigInt(text.clone()),
        Node::Float(f) => Node::Float(*f),
        Node::Str(s) => Node::Str(Str::Owned(s.get(src).into())),
        Node::List(items) => Node::List(items.iter().map(|item| detached(item, src)).collect::<Option<_>>()?),
        Node::Map(entries) => Node::Map(
            entries
                .iter()
                .map(|(k, v)| Some((detached(k, src)?, detached(v, src)?)))
                .collect::<Option<_>>()?,
        ),
        Node::Bytes(..) | Node::Ext => return None,
    })
}

fn plain_scalar(node: &Node) -> bool {
    match node {
        Node::Null | Node::Bool(_) | Node::Str(_) | Node::Int(_) | Node::Wide(_) => true,
        // a bignum's magnitude of at most 1,750 bytes is within 14,000 bits
        Node::BigBytes(_, n, _) => *n <= 1750,
        Node::BigInt(text) => text.trim_start_matches('-').len() <= PLAIN_DIGITS,
        Node::Float(f) => f.is_finite(),
        _ => false,
    }
}

/// parquet_columns.is_plain: JSON-able as it stands (string keys, finite floats, integers of at
/// most 14,000 bits, no bytes or tags), within `nodes` nodes and 32 levels, so the Python side
/// writes it as it is. Where this says no, the Python side decides (a value not held).
pub fn plain(node: &Node, nodes: usize) -> bool {
    fn walk(node: &Node, depth: usize, left: &mut i64) -> bool {
        *left -= 1;
        match node {
            Node::List(items) => {
                if depth > PLAIN_DEPTH || *left < 0 {
                    return false;
                }
                items.iter().all(|item| walk(item, depth + 1, left))
            }
            Node::Map(entries) => {
                if depth > PLAIN_DEPTH || *left < 0 {
                    return false;
                }
                entries.iter().all(|(k, v)| matches!(k, Node::Str(_)) && walk(v, depth + 1, left))
            }
            scalar => plain_scalar(scalar),
        }
    }
    let mut left = nodes as i64;
    walk(node, 0, &mut left)
}

/// A path's value as a file holds it (parquet_columns.Splitter: a scalar as it is, a list or a
/// record when is_plain), detached; None: the Python side's (bytes, or not plain).
pub fn held_value(node: &Node, src: &[u8], nodes: usize) -> Option<Held> {
    let keep = match node {
        Node::List(_) | Node::Map(_) => plain(node, nodes),
        Node::Bytes(..) | Node::Ext => false,
        _ => true,
    };
    if !keep {
        return None;
    }
    Some(Held { node: detached(node, src)?, src: no_bytes() })
}

// ------------------------------------------------------------------------------ shapes

/// What a value's kind (arrow_types.kind_of) is read from, as bytes: its types, its records' keys,
/// its integers' class by `bounds` (the magnitudes arrow_types reads integers by: exact in a
/// double, int64, 38 digits), a list's items' shapes once each in the order met. Two values of one
/// shape have one kind, so a sample's kinds are read from one value of each shape (merging a kind
/// met before changes nothing).
pub fn shape(node: &Node, src: &[u8], bounds: &[i128; 3], out: &mut Vec<u8>) {
    match node {
        Node::Null | Node::Ext => out.push(b'n'),
        Node::Bool(_) => out.push(b'b'),
        Node::Float(_) => out.push(b'f'),
        Node::Str(_) => out.push(b's'),
        Node::Bytes(..) => out.push(b'y'),
        Node::Int(_) | Node::Wide(_) | Node::BigInt(_) | Node::BigBytes(..) => {
            let value = match node {
                Node::BigBytes(..) => int_of(&bignum_node(node, src)),
                other => int_of(other),
            };
            let class = match value {
                Some(v) if v.unsigned_abs() <= bounds[0].unsigned_abs() => b'0',
                Some(v) if -bounds[1] <= v && v < bounds[1] => b'1',
                Some(v) if v.unsigned_abs() < bounds[2].unsigned_abs() => b'2',
                _ => b'3',
            };
            out.push(class);
        }
        Node::List(items) => {
            out.push(b'[');
            let mut seen: Vec<Vec<u8>> = Vec::new();
            let mut one = Vec::new();
            for item in items {
                one.clear();
                shape(item, src, bounds, &mut one);
                if !seen.contains(&one) {
                    out.extend_from_slice(&one);
                    seen.push(one.clone());
                }
            }
            out.push(b']');
        }
        Node::Map(entries) => {
            out.push(b'{');
            for (k, v) in entries {
                match k {
                    Node::Str(key) => {
                        let key = key.bytes(src);
                        out.push(b'k');
                        out.extend_from_slice(&(key.len() as u32).to_le_bytes());
                        out.extend_from_slice(key);
                    }
                    other => {
                        out.push(b'?');
                        shape(other, src, bounds, out);
                    }
                }
                shape(v, src, bounds, out);
            }
            out.push(b'}');
        }
    }
}

/// The index of the first value of each shape among `values` (None: a null, the shape of
/// Node::Null), in order, with how many values have that shape (a sample's kinds are voted by them).
pub fn one_of_each_shape(values: &[Slot<'_>], bounds: &[i128; 3]) -> Vec<(usize, usize)> {
    let mut seen: std::collections::HashMap<Vec<u8>, usize> = std::collections::HashMap::new();
    let mut out: Vec<(usize, usize)> = Vec::new();
    let mut buffer = Vec::new();
    for (i, slot) in values.iter().enumerate() {
        buffer.clear();
        match slot {
            Some((node, src)) => shape(node, src, bounds, &mut buffer),
            None => buffer.push(b'n'),
        }
        match seen.get(&buffer) {
            Some(&at) => out[at].1 += 1,
            None => {
                seen.insert(buffer.clone(), out.len());
                out.push((i, 1));
            }
        }
    }
    out
}

// ------------------------------------------------------------------------------ a blob's contents

/// A blob value's row of a file's columns (render/parquet_columns.py: its payload, label, kind,
/// note and stored bytes).
#[derive(Clone, Debug)]
pub enum Content {
    /// A null blob: every part null.
    Null,
    /// Read by the core: the view's kind (text, record, or no known format: unknown), its label
    /// (None for no known format) and its payload (a text's JSON tree or its text, a record's tree;
    /// Node::Null for no known format); `json`: a text that is a JSON container (its tree, or,
    /// read without it (engine's Want.text_tree), its label's reading). No note; the stored bytes
    /// only where asked (raw) or for no known format. `gaps`: a JSON container's text read without
    /// its tree, its whitespace outside strings (engine's Outcome.gaps; None: not noted).
    Read {
        kind: ViewKind,
        label: Option<Arc<str>>,
        payload: Held,
        text_len: usize,
        json: bool,
        gaps: Option<Vec<u32>>,
    },
    /// The Python engine's: a value handed back, cut, binary, failed, or a record the Python side
    /// spells itself (not plain).
    Python,
}

/// Labels spelt once a page (a label's text shared by its rows).
#[derive(Default)]
pub struct Labels {
    spelt: Vec<(Label, Arc<str>)>,
}

impl Labels {
    pub fn spell(&mut self, label: Label) -> Arc<str> {
        if let Some((_, text)) = self.spelt.iter().find(|(l, _)| *l == label) {
            return text.clone();
        }
        let text: Arc<str> = Arc::from(label.spell());
        self.spelt.push((label, text.clone()));
        text
    }
}

/// A decoded value's row (`outcome`: what the engine read of it, its tree built; `stored` its
/// stored bytes); `nodes`: the budget's nodes (a record within them is written as it is).
pub fn content(outcome: Outcome, stored: &[u8], nodes: usize, labels: &mut Labels) -> Content {
    if outcome.cut {
        return Content::Python;
    }
    match outcome.kind {
        ViewKind::Text => {
            let src = payload_bytes(outcome.payload, stored);
            // a JSON container's tree is built where a reader needs it (Parquet's struct columns); a
            // file of text reads it without (its label's reading, "json", says it is one)
            let (payload, json) = match outcome.tree {
                Some(tree) => {
                    let json = matches!(tree, Node::Map(_) | Node::List(_));
                    (tree, json)
                }
                None => (Node::Str(Str::Span(0, outcome.text_len as u32)), outcome.label.reading() == "json"),
            };
            let text_len = outcome.text_len;
            Content::Read {
                kind: ViewKind::Text,
                label: Some(labels.spell(outcome.label)),
                payload: Held { node: payload, src },
                text_len,
                json,
                gaps: if json { outcome.gaps } else { None },
            }
        }
        ViewKind::Record => {
            let Some(mut tree) = outcome.tree else { return Content::Python };
            if !plain(&tree, nodes) {
                return Content::Python;
            }
            let src = payload_bytes(outcome.payload, stored);
            if has_bignum(&tree) {
                without_bignums(&mut tree, &src);
            }
            Content::Read {
                kind: ViewKind::Record,
                label: Some(labels.spell(outcome.label)),
                payload: Held { node: tree, src },
                text_len: 0,
                json: false,
                gaps: None,
            }
        }
        ViewKind::NoFormat => Content::Read {
            kind: ViewKind::NoFormat,
            label: None,
            payload: Held::none(),
            text_len: 0,
            json: false,
            gaps: None,
        },
        _ => Content::Python,
    }
}

/// A query's slot of a kept row as a file's row (its tree built: Program.trees).
pub fn slot_content(slot: QuerySlot, stored: &[u8], nodes: usize, labels: &mut Labels) -> Content {
    match slot {
        QuerySlot::Read(outcome) => content(outcome, stored, nodes, labels),
        QuerySlot::Null => Content::Null,
        QuerySlot::Undecodable(code) if code == ViewKind::NoFormat as u8 => Content::Read {
            kind: ViewKind::NoFormat,
            label: None,
            payload: Held::none(),
            text_len: 0,
            json: false,
            gaps: None,
        },
        _ => Content::Python,
    }
}

/// How the file spells a text or record payload (output/spellings.py): JSON Lines (a JSON text
/// without its insignificant whitespace, a plain text as a JSON string, a record as json.dumps
/// writes it) or CSV (the text itself, a record as json.dumps writes it). None for other rows.
pub fn payload_text(content: &Content, json: bool) -> Option<String> {
    let mut out = String::new();
    payload_text_into(content, json, &mut out).then_some(out)
}

/// payload_text written at the end of `out` (false, nothing written, for the rows it has none).
pub fn payload_text_into(content: &Content, json: bool, out: &mut String) -> bool {
    let Content::Read { kind, payload, text_len, json: container, gaps, .. } = content else { return false };
    let src = &payload.src[..];
    match kind {
        ViewKind::Text => {
            let bytes = &src[..*text_len];
            debug_assert!(std::str::from_utf8(bytes).is_ok());
            // SAFETY: a text's payload[..text_len] is UTF-8: the engine reads a value as text only
            // where text.rs found it so (stored_text, as_text: from_utf8), text_len that prefix's length
            let text = unsafe { std::str::from_utf8_unchecked(bytes) };
            if !json {
                out.push_str(text);
            } else if *container {
                match gaps {
                    Some(gaps) => without_gaps(text, gaps, out),
                    None => minified_into(text, out),
                }
            } else {
                out.reserve(text.len() + 2);
                crate::columns::json_string(text, out);
            }
            true
        }
        ViewKind::Record => {
            crate::columns::json_text(&payload.node, src, out);
            true
        }
        _ => false,
    }
}

/// A JSON text's minified spelling from its whitespace runs outside strings (`gaps`, (start,
/// end) pairs in order, as json::json_paths_gaps found them while validating it): the text
/// between the runs copied whole, no byte looked at again. Runs that do not fit the text (never
/// from the validation) leave it to minified_into.
fn without_gaps(text: &str, gaps: &[u32], out: &mut String) {
    let mark = out.len();
    out.reserve(text.len());
    let mut at = 0usize;
    for pair in gaps.chunks_exact(2) {
        let (from, to) = (pair[0] as usize, pair[1] as usize);
        match text.get(at..from) {
            Some(run) if to >= from => out.push_str(run),
            _ => {
                out.truncate(mark);
                return minified_into(text, out);
            }
        }
        at = to;
    }
    match text.get(at..) {
        Some(run) => out.push_str(run),
        None => {
            out.truncate(mark);
            minified_into(text, out);
        }
    }
}

/// A JSON text without the whitespace between its tokens (spellings._minified: its strings kept
/// as they are written, escapes included).
pub fn minified(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    minified_into(text, &mut out);
    out
}

/// minified() written at the end of `out`: 64 bytes at a time where it can (scan.rs
/// minify_blocks: the whitespace outside strings found from the block's bit masks), the rest a
/// byte at a time from where the blocks stopped (minified_from).
pub fn minified_into(text: &str, out: &mut String) {
    out.reserve(text.len());
    let state = crate::scan::minify_blocks(text, out);
    minified_from(text, state, out);
}

/// The byte loop of minified_into from `state` on: the runs between whitespace copied whole, a
/// string's body found by its closing quote (memchr), not byte by byte.
fn minified_from(text: &str, state: crate::scan::Minifying, out: &mut String) {
    let bytes = text.as_bytes();
    let crate::scan::Minifying { at: mut i, mut run, inside, escaped } = state;
    let mut inside = inside;
    if escaped {
        i += 1; // the escaped byte inside a string
    }
    loop {
        if inside {
            // the rest of a string: up to its closing quote, an escape skipping the byte after it
            loop {
                match memchr::memchr2(b'"', b'\\', &bytes[i.min(bytes.len())..]) {
                    None => {
                        i = bytes.len();
                        break;
                    }
                    Some(at) if bytes[i + at] == b'\\' => i += at + 2,
                    Some(at) => {
                        i += at + 1;
                        break;
                    }
                }
            }
            i = i.min(bytes.len());
            inside = false;
        }
        while i < bytes.len() {
            match bytes[i] {
                b'"' => {
                    i += 1;
                    inside = true;
                    break;
                }
                b' ' | b'\t' | b'\n' | b'\r' => {
                    out.push_str(&text[run..i]);
                    i += 1;
                    run = i;
                }
                _ => i += 1,
            }
        }
        if !inside {
            break;
        }
    }
    out.push_str(&text[run..]);
}

// ------------------------------------------------------------------------------ fitting a kind

/// An integer node's value when within 128 bits (bool is not an integer here).
fn int_of(node: &Node) -> Option<i128> {
    match node {
        Node::Int(i) => Some(*i as i128),
        Node::Wide(i) => Some(*i),
        Node::BigInt(text) => text.parse::<i128>().ok(),
        _ => None,
    }
}

fn int_bounds(bits: u32) -> (i128, i128) {
    match bits {
        53 => (-EXACT_IN_DOUBLE, EXACT_IN_DOUBLE),
        64 => (i64::MIN as i128, i64::MAX as i128),
        _ => (1 - 10i128.pow(DECIMAL_DIGITS), 10i128.pow(DECIMAL_DIGITS) - 1),
    }
}

fn digit_count(value: i128) -> u32 {
    let mut magnitude = value.unsigned_abs();
    let mut digits = 1;
    while magnitude >= 10 {
        magnitude /= 10;
        digits += 1;
    }
    digits
}

/// Whether the kind's converter takes the value (compile_kind's converters raise Misfit where
/// this says no). A null fits every kind.
pub fn fits(kind: &Kind, node: &Node, src: &[u8]) -> bool {
    if matches!(node, Node::Null) {
        return true;
    }
    match kind {
        Kind::Null => false,
        Kind::Bool => matches!(node, Node::Bool(_)),
        Kind::Int(bits) => {
            let (low, high) = int_bounds(*bits);
            int_of(node).is_some_and(|v| low <= v && v <= high)
        }
        Kind::Float => match node {
            Node::Float(_) => true,
            other => int_of(other).is_some_and(|v| v.unsigned_abs() <= EXACT_IN_DOUBLE as u128),
        },
        Kind::Dec { digits, .. } => match int_of(node) {
            // arrow_types._int_bits: None at 10**38 and past
            Some(v) => v.unsigned_abs() < 10u128.pow(DECIMAL_DIGITS) && digit_count(v) <= *digits,
            None => false,
        },
        Kind::Str => matches!(node, Node::Str(_)),
        Kind::Json => true,
        Kind::List(item) => match node {
            Node::List(items) => items.iter().all(|v| fits(item, v, src)),
            _ => false,
        },
        Kind::Struct(fields) => match node {
            Node::Map(entries) => entries.iter().enumerate().all(|(place, (k, v))| match k {
                Node::Str(name) => {
                    let name = name.bytes(src);
                    match fields.get(place) {
                        Some((field, kind)) if field.as_bytes() == name => fits(kind, v, src),
                        _ => {
                            fields.iter().any(|(field, kind)| field.as_bytes() == name && fits(kind, v, src))
                        }
                    }
                }
                _ => false,
            }),
            _ => false,
        },
    }
}

// ------------------------------------------------------------------------------ JSON text

/// Whether JsonSpelling.found_column's spelling of the Python value a held path value is (by its
/// exact type, _FOUND_SPELLINGS) is found_text_into's: an int (str), a str (json.encoder's
/// encode_basestring), a bool, None, a float (jsonenc.float_text). The rest (an integer past 128
/// bits, containers, bytes) the Python side spells (found_column's `other`).
pub fn found_by_core(node: &Node) -> bool {
    matches!(node, Node::Null | Node::Bool(_) | Node::Int(_) | Node::Wide(_) | Node::Float(_) | Node::Str(_))
}

/// A value found_by_core takes, as found_column spells it, written at the end of `out`: the
/// scalars' spellings are json_text's.
pub fn found_text_into(node: &Node, src: &[u8], out: &mut String) {
    if found_by_core(node) {
        json_text(node, src, out);
    }
}

/// arrow_types.json_text: a JSON-able value's JSON text, compact (no spaces), floats as
/// jsonenc.float_text spells them (NaN and the infinities as strings), strings as json.dumps.
pub fn json_text(node: &Node, src: &[u8], out: &mut String) {
    match node {
        Node::Null | Node::Ext => out.push_str("null"),
        Node::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Node::Int(i) => crate::columns::push_int(*i, out),
        Node::Wide(i) => {
            let _ = write!(out, "{i}");
        }
        Node::BigInt(text) => out.push_str(text),
        Node::Float(f) => {
            if f.is_finite() {
                py_float_repr(*f, out);
            } else {
                out.push_str(if f.is_nan() {
                    "\"NaN\""
                } else if *f > 0.0 {
                    "\"Infinity\""
                } else {
                    "\"-Infinity\""
                });
            }
        }
        Node::Str(s) => crate::columns::json_string(s.get(src), out),
        // (not held: a value with bytes stays Python's)
        Node::Bytes(..) | Node::BigBytes(..) => out.push_str("null"),
        Node::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json_text(item, src, out);
            }
            out.push(']');
        }
        Node::Map(entries) => {
            out.push('{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                match k {
                    Node::Str(s) => crate::columns::json_string(s.get(src), out),
                    other => {
                        let mut text = String::new();
                        json_text(other, src, &mut text);
                        crate::columns::json_string(&text, out);
                    }
                }
                out.push(':');
                json_text(v, src, out);
            }
            out.push('}');
        }
    }
}

// ------------------------------------------------------------------------------ arrays

/// One slot of a column being built: a value and its bytes, or null.
pub type Slot<'a> = Option<(&'a Node, &'a [u8])>;

/// Why a column could not be laid out: a value does not fit (its slot), or the column's bytes
/// pass 32-bit offsets (the Python side writes it).
#[derive(Debug, PartialEq, Eq)]
pub enum Unlaid {
    Misfits(Vec<usize>),
    TooLarge,
}

/// The slots of `values` that do not fit `kind`.
pub fn misfits(kind: &Kind, values: &[Slot<'_>]) -> Vec<usize> {
    values
        .iter()
        .enumerate()
        .filter(|(_, slot)| matches!(slot, Some((node, src)) if !fits(kind, node, src)))
        .map(|(i, _)| i)
        .collect()
}

fn present<'a>(slot: &Slot<'a>) -> Option<(&'a Node, &'a [u8])> {
    match slot {
        Some((Node::Null, _)) | None => None,
        Some(pair) => Some(*pair),
    }
}

struct Variable {
    offsets: Vec<i32>,
    data: DataBytes,
    valid: Vec<bool>,
}

impl Variable {
    /// For `n` values of `bytes` bytes in all (the data grows past them if more are pushed).
    fn new(n: usize, bytes: usize) -> Variable {
        let mut offsets = Vec::with_capacity(n + 1);
        offsets.push(0);
        Variable { offsets, data: DataBytes::for_bytes(bytes), valid: Vec::with_capacity(n) }
    }

    fn push(&mut self, bytes: Option<&[u8]>) -> Result<(), Halt> {
        if let Some(bytes) = bytes {
            self.data.extend_from_slice(bytes);
        }
        self.valid.push(bytes.is_some());
        let end = i32::try_from(self.data.len()).map_err(|_| Halt::TooLarge)?;
        self.offsets.push(end);
        Ok(())
    }

    fn array(self, format: &str, name: &str) -> Array {
        variable_array_of(format, name, &self.offsets, self.data, &self.valid)
    }
}

/// A string slot's bytes (none for a null); Halt::Misfit for another node (fits' Kind::Str).
fn str_bytes<'a>(slot: &Slot<'a>) -> Result<Option<&'a [u8]>, Halt> {
    match present(slot) {
        None => Ok(None),
        Some((Node::Str(s), src)) => Ok(Some(s.bytes(src))),
        Some(_) => Err(Halt::Misfit),
    }
}

/// An integer slot's value where it fits `kind` (fits' Kind::Int, Kind::Dec and Kind::Float for
/// an integer node; none for a null); Halt::Misfit where it does not.
fn int_fitting(kind: &Kind, slot: &Slot<'_>) -> Result<Option<i128>, Halt> {
    let Some((node, _)) = present(slot) else { return Ok(None) };
    let fitting = match (kind, int_of(node)) {
        (Kind::Int(bits), Some(v)) => {
            let (low, high) = int_bounds(*bits);
            low <= v && v <= high
        }
        (Kind::Dec { digits, .. }, Some(v)) => {
            v.unsigned_abs() < 10u128.pow(DECIMAL_DIGITS) && digit_count(v) <= *digits
        }
        (Kind::Float, Some(v)) => v.unsigned_abs() <= EXACT_IN_DOUBLE as u128,
        _ => false,
    };
    if fitting {
        Ok(int_of(node))
    } else {
        Err(Halt::Misfit)
    }
}

/// The field of `fields` named `key`: the entry's own place first (documents of one shape keep
/// their keys in one order), else looked up (`index` for many fields).
fn field_at(
    fields: &[(String, Kind)],
    key: &[u8],
    place: usize,
    index: Option<&HashMap<&[u8], usize>>,
) -> Option<usize> {
    if fields.get(place).is_some_and(|(field, _)| field.as_bytes() == key) {
        return Some(place);
    }
    match index {
        Some(index) => index.get(key).copied(),
        None => fields.iter().position(|(field, _)| field.as_bytes() == key),
    }
}

/// The Arrow format of a kind (arrow_types.arrow_type, as the C data interface spells it).
pub fn format(kind: &Kind) -> String {
    match kind {
        Kind::Null | Kind::Str | Kind::Json => "u".to_owned(),
        Kind::Bool => "b".to_owned(),
        Kind::Int(bits) if *bits <= 64 => "l".to_owned(),
        Kind::Int(_) => format!("d:{DECIMAL_DIGITS},0"),
        Kind::Float => "g".to_owned(),
        Kind::Dec { scale, .. } => format!("d:{DECIMAL_DIGITS},{scale}"),
        Kind::List(_) => "+l".to_owned(),
        Kind::Struct(_) => "+s".to_owned(),
    }
}

/// Why laid() stopped: a value that does not fit its kind (as fits() says), or a column past
/// 32-bit offsets.
#[derive(Debug, PartialEq, Eq)]
enum Halt {
    Misfit,
    TooLarge,
}

/// The values as an Arrow array of `kind` (named `name`), converted as the kind's converter
/// converts them; Err: the slots that do not fit, or a column too large for 32-bit offsets.
/// One walk of the trees: laid() checks each value as fits() would while laying it out; only
/// where it stops are the slots that misfit looked for (misfits(), the misfits before a column
/// too large as when they were looked for first).
pub fn array(kind: &Kind, name: &str, values: &[Slot<'_>]) -> Result<Array, Unlaid> {
    match laid(kind, name, values) {
        Ok(array) => Ok(array),
        Err(_) => {
            let wrong = misfits(kind, values);
            if wrong.is_empty() {
                // a column too large (or, were laid()'s checks and fits() ever to disagree, a
                // column the Python side writes, as it writes one too large)
                Err(Unlaid::TooLarge)
            } else {
                Err(Unlaid::Misfits(wrong))
            }
        }
    }
}

/// array() in one walk: Halt::Misfit at the first value that does not fit (fits()' checks made
/// where the value is laid out).
fn laid(kind: &Kind, name: &str, values: &[Slot<'_>]) -> Result<Array, Halt> {
    let n = values.len();
    Ok(match kind {
        Kind::Null => {
            let mut out = Variable::new(n, 0);
            for slot in values {
                if present(slot).is_some() {
                    return Err(Halt::Misfit);
                }
                out.push(None)?;
            }
            out.array("u", name)
        }
        Kind::Str => {
            let mut bytes = 0;
            for slot in values {
                bytes += str_bytes(slot)?.map_or(0, <[u8]>::len);
            }
            let mut out = Variable::new(n, bytes);
            for slot in values {
                out.push(str_bytes(slot)?)?;
            }
            out.array("u", name)
        }
        Kind::Json => {
            let mut out = Variable::new(n, 0);
            let mut text = String::new();
            for slot in values {
                match present(slot) {
                    Some((node, src)) => {
                        text.clear();
                        json_text(node, src, &mut text);
                        out.push(Some(text.as_bytes()))?;
                    }
                    None => out.push(None)?,
                }
            }
            out.array("u", name)
        }
        Kind::Bool => {
            let mut bits = vec![0u8; n.div_ceil(8)];
            let mut valid = Vec::with_capacity(n);
            for (i, slot) in values.iter().enumerate() {
                let value = match present(slot) {
                    None => None,
                    Some((Node::Bool(b), _)) => Some(*b),
                    Some(_) => return Err(Halt::Misfit),
                };
                if value == Some(true) {
                    bits[i / 8] |= 1 << (i % 8);
                }
                valid.push(value.is_some());
            }
            fixed_array("b", name, &bits, &valid)
        }
        Kind::Int(bits) if *bits <= 64 => {
            let mut data: Vec<u8> = Vec::with_capacity(n * 8);
            let mut valid = Vec::with_capacity(n);
            for slot in values {
                let value = int_fitting(kind, slot)?;
                data.extend_from_slice(&(value.unwrap_or(0) as i64).to_le_bytes());
                valid.push(value.is_some());
            }
            fixed_array("l", name, &data, &valid)
        }
        Kind::Int(_) | Kind::Dec { .. } => {
            let scale = if let Kind::Dec { scale, .. } = kind { *scale } else { 0 };
            let factor = 10i128.pow(scale);
            let mut data: Vec<u8> = Vec::with_capacity(n * 16);
            let mut valid = Vec::with_capacity(n);
            for slot in values {
                let value = int_fitting(kind, slot)?.map(|v| v * factor);
                data.extend_from_slice(&value.unwrap_or(0).to_le_bytes());
                valid.push(value.is_some());
            }
            fixed_array(&format(kind), name, &data, &valid)
        }
        Kind::Float => {
            let mut data: Vec<u8> = Vec::with_capacity(n * 8);
            let mut valid = Vec::with_capacity(n);
            for slot in values {
                let value = match present(slot) {
                    Some((Node::Float(f), _)) => Some(*f),
                    _ => int_fitting(kind, slot)?.map(|v| v as f64),
                };
                data.extend_from_slice(&value.unwrap_or(0.0).to_le_bytes());
                valid.push(value.is_some());
            }
            fixed_array("g", name, &data, &valid)
        }
        Kind::List(item) => {
            let mut offsets: Vec<i32> = Vec::with_capacity(n + 1);
            offsets.push(0);
            let mut valid = Vec::with_capacity(n);
            let mut children: Vec<Slot<'_>> = Vec::new();
            for slot in values {
                match present(slot) {
                    Some((Node::List(items), src)) => {
                        children.extend(items.iter().map(|v| Some((v, src))));
                        valid.push(true);
                    }
                    Some(_) => return Err(Halt::Misfit),
                    None => valid.push(false),
                }
                offsets.push(i32::try_from(children.len()).map_err(|_| Halt::TooLarge)?);
            }
            list_array(name, &offsets, &valid, laid(item, "item", &children)?)
        }
        Kind::Struct(fields) => {
            let mut valid = Vec::with_capacity(n);
            let mut columns: Vec<Vec<Slot<'_>>> = fields.iter().map(|_| Vec::with_capacity(n)).collect();
            let index: Option<HashMap<&[u8], usize>> = (fields.len() > 16)
                .then(|| fields.iter().enumerate().map(|(i, (name, _))| (name.as_bytes(), i)).collect());
            for slot in values {
                for column in columns.iter_mut() {
                    column.push(None);
                }
                match present(slot) {
                    Some((Node::Map(entries), src)) => {
                        let row = valid.len();
                        for (place, (k, v)) in entries.iter().enumerate() {
                            // fits': every key a string naming a field
                            let Node::Str(key) = k else { return Err(Halt::Misfit) };
                            let Some(at) = field_at(fields, key.bytes(src), place, index.as_ref()) else {
                                return Err(Halt::Misfit);
                            };
                            // a key met twice: the value laid out is the last, the one it replaces
                            // checked here (fits checks every entry's)
                            if let Some((before, _)) = columns[at][row] {
                                if !fits(&fields[at].1, before, src) {
                                    return Err(Halt::Misfit);
                                }
                            }
                            columns[at][row] = Some((v, src));
                        }
                        valid.push(true);
                    }
                    Some(_) => return Err(Halt::Misfit),
                    None => valid.push(false),
                }
            }
            let children = fields
                .iter()
                .zip(&columns)
                .map(|((field, kind), column)| laid(kind, field, column))
                .collect::<Result<Vec<_>, _>>()?;
            nullable_struct_array(name, &valid, children)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Node {
        Node::Str(Str::Owned(text.into()))
    }

    #[test]
    fn json_text_is_compact_as_arrow_types_spells_it() {
        let node = Node::Map(vec![
            (s("a"), Node::List(vec![Node::Int(1), Node::Float(2.5), Node::Null])),
            (s("b\"q"), Node::Float(f64::NAN)),
            (s("c"), Node::BigInt("123456789012345678901234567890123456789012".into())),
        ]);
        let mut out = String::new();
        json_text(&node, &[], &mut out);
        assert_eq!(out, r#"{"a":[1,2.5,null],"b\"q":"NaN","c":123456789012345678901234567890123456789012}"#);
    }

    #[test]
    fn minified_keeps_strings_as_written() {
        assert_eq!(
            minified("{ \"a b\" :\t[1, 2 ],\r\n\"c\\\" d\": \"é \\\\\" }"),
            "{\"a b\":[1,2],\"c\\\" d\":\"é \\\\\"}"
        );
        assert_eq!(minified(" [ \"x y"), "[\"x y");
        assert_eq!(minified("[\"\\"), "[\"\\");
        let mut out = String::from("head ");
        minified_into("{ }", &mut out);
        assert_eq!(out, "head {}");
    }

    /// minified_into a byte at a time, as it was before the block scan: the reference.
    fn minified_bytewise(text: &str) -> String {
        let bytes = text.as_bytes();
        let mut out = String::new();
        let (mut i, mut run) = (0, 0);
        while i < bytes.len() {
            match bytes[i] {
                b'"' => {
                    i += 1;
                    while i < bytes.len() && bytes[i] != b'"' {
                        i += if bytes[i] == b'\\' { 2 } else { 1 };
                    }
                    i = (i + 1).min(bytes.len());
                }
                b' ' | b'\t' | b'\n' | b'\r' => {
                    out.push_str(&text[run..i]);
                    i += 1;
                    run = i;
                }
                _ => i += 1,
            }
        }
        out.push_str(&text[run..]);
        out
    }

    /// A JSON text (valid) with whitespace runs put at random between its tokens, before and
    /// after it, and inside its strings (with escapes of quotes and backslashes).
    fn spaced_json(next: &mut impl FnMut() -> u64, depth: u32, out: &mut String) {
        let space = |next: &mut dyn FnMut() -> u64, out: &mut String| {
            let r = next();
            if r % 3 == 0 {
                for _ in 0..1 + (r >> 8) % 3 {
                    out.push([' ', '\t', '\n', '\r'][((r >> 16) % 4) as usize]);
                }
            }
        };
        let string = |next: &mut dyn FnMut() -> u64, out: &mut String| {
            out.push('"');
            for _ in 0..next() % 6 {
                out.push_str(["a", " ", "\\\"", "\\\\", "\\n", "é", "  ", "\\u00e9"][(next() % 8) as usize]);
            }
            out.push('"');
        };
        let kind = if depth == 0 { next() % 2 } else { next() % 6 };
        match kind {
            0 | 1 => {
                let (open, close) = if kind == 0 { ('{', '}') } else { ('[', ']') };
                out.push(open);
                space(next, out);
                for i in 0..next() % 4 {
                    if i > 0 {
                        out.push(',');
                        space(next, out);
                    }
                    if kind == 0 {
                        string(next, out);
                        space(next, out);
                        out.push(':');
                        space(next, out);
                    }
                    spaced_json(next, depth + 1, out);
                    space(next, out);
                }
                out.push(close);
            }
            2 => string(next, out),
            3 => out.push_str(["1", "-2.5e3", "0"][(next() % 3) as usize]),
            _ => out.push_str(["true", "null", "false"][(next() % 3) as usize]),
        }
    }

    #[test]
    fn the_validation_s_whitespace_runs_give_the_minified_text() {
        // whitespace only inside strings, only between tokens, before and after the text, none
        let fixed = [
            "{\"a b\":\"c\\\" d\",\"e\":[1,2]}",
            "{ \"a\" : [ 1 , 2 ] }",
            "{\"a\":1}  \n",
            " \t[\"x\"]",
            "{\"a\":1,\"b\":[true,null]}",
        ];
        let check = |text: &str| {
            let read = crate::json::json_paths_gaps(text.as_bytes(), 0, text.len(), 1 << 20, &[], true);
            let Ok(Some((_, Some(gaps)))) = read else { panic!("not read with its runs: {text:?}") };
            let mut out = String::from("head ");
            without_gaps(text, &gaps, &mut out);
            assert_eq!(out, format!("head {}", minified_bytewise(text)), "{text:?}");
        };
        for text in fixed {
            check(text);
        }
        assert_eq!(
            crate::json::json_paths_gaps(fixed[0].as_bytes(), 0, fixed[0].len(), 1 << 20, &[], true)
                .ok()
                .flatten()
                .and_then(|(_, gaps)| gaps),
            Some(Vec::new())
        );
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..5_000 {
            let mut text = String::new();
            if next() % 4 == 0 {
                text.push_str(" \n");
            }
            spaced_json(&mut next, 0, &mut text);
            if next() % 4 == 0 {
                text.push_str("\r\n ");
            }
            check(&text);
        }
        // past MAX_GAPS runs none are noted (the text minified as without them); asked for
        // none, none either
        let many = format!("[{}1]", "1 ,".repeat(300));
        let read = crate::json::json_paths_gaps(many.as_bytes(), 0, many.len(), 1 << 20, &[], true);
        assert!(matches!(read, Ok(Some((_, None)))));
        let read = crate::json::json_paths_gaps(fixed[1].as_bytes(), 0, fixed[1].len(), 1 << 20, &[], false);
        assert!(matches!(read, Ok(Some((_, None)))));
        // runs that do not fit the text leave it to minified_into
        let mut out = String::new();
        without_gaps(fixed[1], &[5, 2, 9, 400], &mut out);
        assert_eq!(out, minified_bytewise(fixed[1]));
    }

    #[test]
    fn minified_by_blocks_is_the_byte_loop_s() {
        // texts of JSON's bytes in every order (valid JSON or not: backslashes outside strings,
        // strings left open, runs of backslashes across the 64-byte blocks' edges), and long
        // JSON documents with escaped quotes, whitespace inside and outside strings
        let alphabet: [&str; 12] = ["\"", "\\", " ", "\t", "\n", "\r", "a", "{", ":", ",", "é", "\\\""];
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..20_000 {
            let len = (next() % if round % 10 == 0 { 600 } else { 200 }) as usize;
            let mut text = String::new();
            // mostly plain bytes, now and then a special one (quotes and backslashes in runs)
            let plain = next() % 4;
            while text.len() < len {
                let r = next();
                text.push_str(if r % 8 < plain { "x" } else { alphabet[(r >> 8) as usize % alphabet.len()] });
            }
            assert_eq!(minified(&text), minified_bytewise(&text), "{text:?}");
            let mut out = String::from("head ");
            minified_into(&text, &mut out);
            assert_eq!(out, format!("head {}", minified_bytewise(&text)));
        }
        let note = "C hub \\\",\\\"category\\\": \\\"ELECTRONICS\\\", \\\\ \\\\\\\" x ".repeat(40);
        let doc = format!("{{\"order-id\": \"ORD-1\", \"items\": [{{\"sku\": \"S0\", \"qty\": 1}}],\n \"note\": \"{note}\"}}");
        for cut in 0..doc.len().min(400) {
            if doc.is_char_boundary(cut) {
                let text = &doc[cut..];
                assert_eq!(minified(text), minified_bytewise(text), "{text:?}");
            }
        }
    }

    /// array() lays out in one walk, checking as it goes: it must refuse exactly the values fits()
    /// refuses (Misfits: those slots, in order), and lay out the same array as before otherwise.
    #[test]
    fn one_walk_refuses_what_fits_refuses() {
        let m = |entries: Vec<(Node, Node)>| Node::Map(entries);
        let nodes = vec![
            Node::Null,
            Node::Bool(true),
            Node::Int(0),
            Node::Int(-999),
            Node::Int(1000),
            Node::Int(1 << 53),
            Node::Int((1 << 53) + 1),
            Node::Int(i64::MAX),
            Node::Wide(i64::MAX as i128 + 1),
            Node::Wide(10i128.pow(38)),
            Node::BigInt("100000000000000000000000000000000000000".into()),
            Node::Float(2.5),
            s("x"),
            Node::List(vec![Node::Int(1), Node::Null]),
            Node::List(vec![Node::Int(1), s("y")]),
            m(vec![(s("a"), Node::Int(1))]),
            m(vec![(s("a"), Node::Int(1)), (s("b"), s("t"))]),
            m(vec![(s("b"), s("t")), (s("a"), Node::Null)]),
            m(vec![(s("a"), Node::Int(1)), (s("c"), Node::Int(1))]),
            m(vec![(s("a"), s("no")), (s("a"), Node::Int(2))]),
            m(vec![(s("a"), Node::Int(2)), (s("a"), s("no"))]),
            m(vec![(Node::Int(1), Node::Int(1))]),
            m(vec![(s("l"), Node::List(vec![Node::Float(1.0), Node::Int(3)]))]),
            m(vec![(s("l"), Node::List(vec![Node::Bool(false)]))]),
        ];
        let record = Kind::Struct(vec![
            ("a".into(), Kind::Int(53)),
            ("b".into(), Kind::Str),
            ("l".into(), Kind::List(Box::new(Kind::Float))),
        ]);
        let kinds = vec![
            Kind::Null,
            Kind::Bool,
            Kind::Int(53),
            Kind::Int(64),
            Kind::Int(128),
            Kind::Float,
            Kind::Dec { scale: 2, digits: 3 },
            Kind::Str,
            Kind::Json,
            Kind::List(Box::new(Kind::Int(64))),
            record.clone(),
            Kind::List(Box::new(record)),
        ];
        let src: &[u8] = &[];
        for kind in &kinds {
            for node in &nodes {
                let slot: Slot<'_> = Some((node, src));
                assert_eq!(array(kind, "p", &[slot]).is_ok(), fits(kind, node, src), "{kind:?} {node:?}");
            }
            // a column of them all: the misfits are fits' (in order), and with those taken out
            // the one walk lays out what the two walks did
            let slots: Vec<Slot<'_>> = nodes.iter().map(|node| Some((node, src))).chain([None]).collect();
            let wrong = misfits(kind, &slots);
            match array(kind, "p", &slots) {
                Err(Unlaid::Misfits(rows)) => assert_eq!(rows, wrong),
                other => assert!(wrong.is_empty() && other.is_ok(), "{kind:?}"),
            }
            let fitting: Vec<Slot<'_>> =
                slots.iter().enumerate().filter(|(i, _)| !wrong.contains(i)).map(|(_, s)| *s).collect();
            assert!(array(kind, "p", &fitting).is_ok(), "{kind:?}");
        }
    }

    #[test]
    fn kinds_take_what_their_converters_take() {
        let src: &[u8] = &[];
        assert!(fits(&Kind::Float, &Node::Int(1 << 53), src));
        assert!(!fits(&Kind::Float, &Node::Int((1 << 53) + 1), src));
        assert!(!fits(&Kind::Float, &Node::Bool(true), src));
        assert!(!fits(&Kind::Int(53), &Node::Int((1 << 53) + 1), src));
        assert!(fits(&Kind::Int(64), &Node::Int(i64::MAX), src));
        assert!(!fits(&Kind::Int(64), &Node::Wide(i64::MAX as i128 + 1), src));
        assert!(fits(&Kind::Int(128), &Node::Wide(10i128.pow(38) - 1), src));
        assert!(!fits(&Kind::Int(128), &Node::BigInt("100000000000000000000000000000000000000".into()), src));
        assert!(fits(&Kind::Dec { scale: 2, digits: 3 }, &Node::Int(-999), src));
        assert!(!fits(&Kind::Dec { scale: 2, digits: 3 }, &Node::Int(1000), src));
        assert!(!fits(&Kind::Dec { scale: 2, digits: 3 }, &Node::Float(1.0), src));
        let record = Node::Map(vec![(s("a"), Node::Int(1))]);
        let kind = Kind::Struct(vec![("a".into(), Kind::Int(53)), ("b".into(), Kind::Str)]);
        assert!(fits(&kind, &record, src));
        assert!(!fits(&Kind::Struct(vec![("b".into(), Kind::Str)]), &record, src));
        assert!(fits(&Kind::Null, &Node::Null, src) && !fits(&Kind::Null, &Node::Int(0), src));
    }

    #[test]
    fn plain_is_parquet_columns_is_plain() {
        assert!(plain(&Node::Map(vec![(s("a"), Node::Float(1.0))]), 100));
        assert!(!plain(&Node::Map(vec![(s("a"), Node::Float(f64::INFINITY))]), 100));
        assert!(!plain(&Node::Map(vec![(Node::Int(1), Node::Null)]), 100));
        assert!(!plain(&Node::List(vec![Node::List(vec![]), Node::List(vec![])]), 2));
        let mut deep = Node::List(vec![]);
        for _ in 0..33 {
            deep = Node::List(vec![deep]);
        }
        assert!(!plain(&deep, 1000));
    }

    #[test]
    fn a_struct_of_lists_is_laid_out_with_nulls() {
        let a = Node::Map(vec![(s("x"), Node::List(vec![s("p"), s("q")]))]);
        let b = Node::Null;
        let c = Node::Map(vec![]);
        let kind = Kind::Struct(vec![("x".into(), Kind::List(Box::new(Kind::Str)))]);
        let values: Vec<Slot<'_>> = vec![Some((&a, &[])), Some((&b, &[])), Some((&c, &[])), None];
        let array = array(&kind, "payload", &values).expect("fits");
        assert_eq!(array.field.format, "+s");
        assert_eq!((array.data.length, array.data.null_count), (4, 2));
        let list = &array.data.children[0];
        assert_eq!((list.length, list.null_count, list.children[0].length), (4, 3, 2));
        assert_eq!(array.field.children[0].children[0].name, "item");
        let wrong = Node::Map(vec![(s("y"), Node::Null)]);
        assert_eq!(super::array(&kind, "p", &[Some((&wrong, &[]))]).err(), Some(Unlaid::Misfits(vec![0])));
    }
}
