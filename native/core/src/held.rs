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
use crate::json::Mark;
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
/// The digits of an integer Python reads at most (common/long_int.py PYTHON_DIGITS).
const PYTHON_DIGITS: usize = 4300;
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

// ------------------------------------------------------------------------------ places

/// Where a held value is read from: a tree's node (and the bytes its spans point into), or a
/// checked JSON text's value in place (the payload's bytes, the text's marks, the value's mark:
/// Content::Read's marks), read as its tree would be (json::in_place), or marks that are not
/// the text's (never, but for a bug: it fits no kind, and is no value's tree).
#[derive(Clone, Copy, Debug)]
pub enum Place<'a> {
    Node(&'a Node, &'a [u8]),
    Text(&'a [u8], &'a [Mark], u32),
    Unchecked,
}

/// A place's value: a scalar as the tree holds it, a list's items or an object's members as
/// places (its key as the tree holds it), or nothing readable (Place::Unchecked).
pub enum Read<'a> {
    Scalar(std::borrow::Cow<'a, Node>, &'a [u8]),
    List(Items<'a>),
    Map(Entries<'a>),
    Unchecked,
}

/// A list's items as places.
pub enum Items<'a> {
    Nodes(std::slice::Iter<'a, Node>, &'a [u8]),
    Text(crate::json::Inside<'a>, &'a [u8], &'a [Mark]),
}

impl<'a> Iterator for Items<'a> {
    type Item = Place<'a>;

    fn next(&mut self) -> Option<Place<'a>> {
        match self {
            Items::Nodes(items, src) => items.next().map(|node| Place::Node(node, src)),
            Items::Text(inside, src, marks) => inside.next().map(|at| Place::Text(src, marks, at as u32)),
        }
    }
}

/// An object's members: each key (as the tree holds it) and its value's place.
pub enum Entries<'a> {
    Nodes(std::slice::Iter<'a, (Node, Node)>, &'a [u8]),
    Text(crate::json::Inside<'a>, &'a [u8], &'a [Mark]),
}

impl<'a> Iterator for Entries<'a> {
    type Item = (std::borrow::Cow<'a, Node>, Place<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        use std::borrow::Cow;
        match self {
            Entries::Nodes(entries, src) => {
                entries.next().map(|(k, v)| (Cow::Borrowed(k), Place::Node(v, src)))
            }
            Entries::Text(inside, src, marks) => {
                let key = inside.next()?;
                let Some(value) = inside.next() else {
                    return Some((Cow::Owned(Node::Null), Place::Unchecked));
                };
                match crate::json::string_at(src, &marks[key]) {
                    Some(key) => Some((Cow::Owned(Node::Str(key)), Place::Text(src, marks, value as u32))),
                    None => Some((Cow::Owned(Node::Null), Place::Unchecked)),
                }
            }
        }
    }
}

impl<'a> Place<'a> {
    /// The place's value (a scalar read from a text made a node, a container's parts as places).
    pub fn read(self) -> Read<'a> {
        use std::borrow::Cow;
        match self {
            Place::Node(Node::List(items), src) => Read::List(Items::Nodes(items.iter(), src)),
            Place::Node(Node::Map(entries), src) => Read::Map(Entries::Nodes(entries.iter(), src)),
            Place::Node(node, src) => Read::Scalar(Cow::Borrowed(node), src),
            Place::Text(src, marks, at) => match crate::json::in_place(src, marks, at as usize) {
                Some(crate::json::InPlace::Scalar(node)) => Read::Scalar(Cow::Owned(node), src),
                Some(crate::json::InPlace::List) => {
                    Read::List(Items::Text(crate::json::inside(marks, at as usize), src, marks))
                }
                Some(crate::json::InPlace::Map) => {
                    Read::Map(Entries::Text(crate::json::inside(marks, at as usize), src, marks))
                }
                None => Read::Unchecked,
            },
            Place::Unchecked => Read::Unchecked,
        }
    }

    /// A null (JSON null, a tree's Null), told without reading the value.
    fn is_null(self) -> bool {
        match self {
            Place::Node(node, _) => matches!(node, Node::Null),
            Place::Text(src, marks, at) => {
                marks.get(at as usize).is_some_and(|m| src.get(m.start as usize) == Some(&b'n'))
            }
            Place::Unchecked => false,
        }
    }

    /// The value's tree: a node's own (copied), a text's built (json_container over its span, no
    /// budget: the text was checked within it); None for no tree to give (Place::Unchecked).
    pub fn tree(self) -> Option<(std::borrow::Cow<'a, Node>, &'a [u8])> {
        use std::borrow::Cow;
        match self {
            Place::Node(node, src) => Some((Cow::Borrowed(node), src)),
            Place::Text(src, marks, at) => {
                let mark = marks.get(at as usize)?;
                let (at, end) = (mark.start as usize, mark.end as usize);
                match crate::json::json_container(src, at, end.saturating_sub(at), usize::MAX >> 2) {
                    Ok(Some(tree)) => Some((Cow::Owned(tree), src)),
                    _ => match self.read() {
                        Read::Scalar(node, src) => Some((Cow::Owned(node.into_owned()), src)),
                        _ => None,
                    },
                }
            }
            Place::Unchecked => None,
        }
    }
}

impl Content {
    /// The payload's place (None for a row with none: a null blob, a Python row, no known
    /// format's Node::Null is a place of Null): a text held for its value (marks) is read
    /// from its text, every other payload from its tree.
    pub fn place(&self) -> Option<Place<'_>> {
        match self {
            Content::Read { payload, marks: Some(marks), .. } => Some(Place::Text(&payload.src, marks, 0)),
            Content::Read { payload, .. } => Some(Place::Node(&payload.node, &payload.src)),
            _ => None,
        }
    }
}

// ------------------------------------------------------------------------------ shapes

/// What a value's kind (arrow_types.kind_of) is read from, as bytes: its types, its records' keys,
/// its integers' class by `bounds` (the magnitudes arrow_types reads integers by: exact in a
/// double, int64, 38 digits), a list's items' shapes once each in the order met. Two values of one
/// shape have one kind, so a sample's kinds are read from one value of each shape (merging a kind
/// met before changes nothing). (A text read in place that holds a key twice would have a shape
/// of its own, its kind its tree's: the check builds the tree of such a text, Checked.tree_needed.)
pub fn shape(place: Place<'_>, bounds: &[i128; 3], out: &mut Vec<u8>) {
    match place.read() {
        Read::Scalar(node, src) => scalar_shape(&node, src, bounds, out),
        Read::Unchecked => out.push(b'x'),
        Read::List(items) => {
            out.push(b'[');
            let mut seen: Vec<Vec<u8>> = Vec::new();
            let mut one = Vec::new();
            for item in items {
                one.clear();
                shape(item, bounds, &mut one);
                if !seen.contains(&one) {
                    out.extend_from_slice(&one);
                    seen.push(one.clone());
                }
            }
            out.push(b']');
        }
        Read::Map(entries) => {
            out.push(b'{');
            for (k, v) in entries {
                let src = place_src(v);
                match &*k {
                    Node::Str(key) => {
                        let key = key.bytes(src);
                        out.push(b'k');
                        out.extend_from_slice(&(key.len() as u32).to_le_bytes());
                        out.extend_from_slice(key);
                    }
                    other => {
                        out.push(b'?');
                        shape(Place::Node(other, src), bounds, out);
                    }
                }
                shape(v, bounds, out);
            }
            out.push(b'}');
        }
    }
}

fn scalar_shape(node: &Node, src: &[u8], bounds: &[i128; 3], out: &mut Vec<u8>) {
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
        // (containers are read as places: shape())
        Node::List(_) | Node::Map(_) => out.push(b'x'),
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
            Some(place) => shape(*place, bounds, &mut buffer),
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
    /// `marks`: a JSON container's text held for its value, without its tree (engine's
    /// Want.text_values): its values' marks, where its columns are laid out from (its tree built
    /// where asked: Content::place).
    Read {
        kind: ViewKind,
        label: Option<Arc<str>>,
        payload: Held,
        text_len: usize,
        json: bool,
        gaps: Option<Vec<u32>>,
        marks: Option<Arc<Vec<Mark>>>,
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
/// stored bytes); `nodes`: the budget's nodes (a record within them is written as it is). A
/// JSON text the engine read for its value without its tree (Want.text_values) is held with
/// its marks.
pub fn content(outcome: Outcome, stored: &[u8], nodes: usize, labels: &mut Labels) -> Content {
    if outcome.cut {
        return Content::Python;
    }
    match outcome.kind {
        ViewKind::Text => {
            let src = payload_bytes(outcome.payload, stored);
            // a JSON container's text is held with its marks where a reader needs its value
            // (Parquet's struct columns, laid out from them: Want.text_values), its tree where it
            // cannot be read in place; a file of text reads it without either (its label's
            // reading, "json", says it is one)
            let (payload, json) = match outcome.tree {
                Some(tree) => {
                    let json = matches!(tree, Node::Map(_) | Node::List(_));
                    (tree, json)
                }
                None => (Node::Str(Str::Span(0, outcome.text_len as u32)), outcome.label.reading() == "json"),
            };
            let text_len = outcome.text_len;
            let marks = match (&payload, outcome.marks) {
                (Node::Str(_), Some(marks)) if json => Some(Arc::new(marks)),
                _ => None,
            };
            Content::Read {
                kind: ViewKind::Text,
                label: Some(labels.spell(outcome.label)),
                payload: Held { node: payload, src },
                text_len,
                json,
                gaps: if json { outcome.gaps } else { None },
                marks,
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
                marks: None,
            }
        }
        ViewKind::NoFormat => Content::Read {
            kind: ViewKind::NoFormat,
            label: None,
            payload: Held::none(),
            text_len: 0,
            json: false,
            gaps: None,
            marks: None,
        },
        _ => Content::Python,
    }
}

/// A query's slot of a kept row as a file's row (its tree built, or its text read for its value:
/// Program.trees, Program.text_trees).
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
            marks: None,
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
                let mark = out.len();
                match gaps {
                    Some(gaps) => without_gaps(text, gaps, out),
                    None => minified_into(text, out),
                }
                crate::columns::escape_line_breaks_from(out, mark);
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
    fits_at(kind, Place::Node(node, src))
}

/// fits() of the value at a place.
pub fn fits_at(kind: &Kind, place: Place<'_>) -> bool {
    if place.is_null() {
        return true;
    }
    match place.read() {
        Read::Unchecked => false,
        Read::Scalar(node, _) => scalar_fits(kind, &node),
        Read::List(items) => match kind {
            Kind::Json => true,
            Kind::List(item) => items.into_iter().all(|v| fits_at(item, v)),
            _ => false,
        },
        Read::Map(entries) => match kind {
            Kind::Json => true,
            Kind::Struct(fields) => entries.enumerate().all(|(place, (k, v))| match &*k {
                Node::Str(name) => {
                    let name = name.bytes(place_src(v));
                    match fields.get(place) {
                        Some((field, kind)) if field.as_bytes() == name => fits_at(kind, v),
                        _ => fields.iter().any(|(field, kind)| field.as_bytes() == name && fits_at(kind, v)),
                    }
                }
                _ => false,
            }),
            _ => false,
        },
    }
}

/// The bytes a place's spans point into.
fn place_src<'a>(place: Place<'a>) -> &'a [u8] {
    match place {
        Place::Node(_, src) | Place::Text(src, _, _) => src,
        Place::Unchecked => &[],
    }
}

/// fits() of a scalar (a container here is no scalar: it fits JSON text alone).
fn scalar_fits(kind: &Kind, node: &Node) -> bool {
    match kind {
        Kind::Null => matches!(node, Node::Null),
        Kind::Bool => matches!(node, Node::Null | Node::Bool(_)),
        Kind::Int(bits) => {
            let (low, high) = int_bounds(*bits);
            matches!(node, Node::Null) || int_of(node).is_some_and(|v| low <= v && v <= high)
        }
        Kind::Float => match node {
            Node::Null | Node::Float(_) => true,
            other => int_of(other).is_some_and(|v| v.unsigned_abs() <= EXACT_IN_DOUBLE as u128),
        },
        Kind::Dec { digits, .. } => match int_of(node) {
            // arrow_types._int_bits: None at 10**38 and past
            Some(v) => v.unsigned_abs() < 10u128.pow(DECIMAL_DIGITS) && digit_count(v) <= *digits,
            None => matches!(node, Node::Null),
        },
        Kind::Str => matches!(node, Node::Null | Node::Str(_)),
        Kind::Json => true,
        Kind::List(_) | Kind::Struct(_) => matches!(node, Node::Null),
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
            let alike = crate::columns::keys_alike(entries, src);
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                match k {
                    Node::Str(s) if !alike => crate::columns::json_string(s.get(src), out),
                    other => {
                        let mut text = String::new();
                        if alike {
                            crate::columns::key_json_text(other, src, &mut text);
                        } else {
                            json_text(other, src, &mut text);
                        }
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

/// json_text() of the value at a place (a text read in place spelt as its tree would be).
pub fn json_text_at(place: Place<'_>, out: &mut String) {
    if let Place::Node(node @ Node::Map(entries), src) = place {
        if crate::columns::keys_alike(entries, src) {
            return json_text(node, src, out); // (a map of a text has keys of text only)
        }
    }
    match place.read() {
        Read::Scalar(node, src) => json_text(&node, src, out),
        Read::Unchecked => out.push_str("null"),
        Read::List(items) => {
            out.push('[');
            for (i, item) in items.enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json_text_at(item, out);
            }
            out.push(']');
        }
        Read::Map(entries) => {
            out.push('{');
            for (i, (k, v)) in entries.enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let src = place_src(v);
                match &*k {
                    Node::Str(s) => crate::columns::json_string(s.get(src), out),
                    other => {
                        let mut text = String::new();
                        json_text(other, src, &mut text);
                        crate::columns::json_string(&text, out);
                    }
                }
                out.push(':');
                json_text_at(v, out);
            }
            out.push('}');
        }
    }
}

/// What an MCP answer cuts inside a value (mcp_server/sizing.cut_value): a string of more than
/// `chars` characters, a list or an object of more than `items` entries.
#[derive(Clone, Copy, Debug)]
pub struct AnswerCut {
    pub chars: usize,
    pub items: usize,
}

impl AnswerCut {
    /// Whether a string is within the cut (its characters, counted only past `chars` bytes).
    pub fn keeps(&self, text: &str) -> bool {
        text.len() <= self.chars || text.chars().count() <= self.chars
    }
}

/// columns::dumps_string, a string with nothing to escape (no quote, backslash or control
/// character: most of a document's) copied whole rather than a character at a time.
fn answer_string(text: &str, out: &mut String) {
    if text.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
        crate::columns::dumps_string(text, out);
    } else {
        out.reserve(text.len() + 2);
        out.push('"');
        out.push_str(text);
        out.push('"');
    }
}

/// json_text_at() of a value an MCP answer holds whole, or false (what was written is to be
/// thrown away: the Python side spells the row) where the answer's spelling differs from it: a
/// value `cut` changes (mcp_server/sizing.cut_value), a float JSON cannot hold (sizing.spelt's
/// name), an integer of more digits than Python reads (sizing.spelt's string), bytes, a tag or a
/// key no string (the Python side's spellings), a value not checked.
pub fn answer_text_at(place: Place<'_>, cut: AnswerCut, out: &mut String) -> bool {
    match place.read() {
        Read::Scalar(node, src) => match &*node {
            Node::Str(s) => {
                let text = s.get(src);
                cut.keeps(text) && {
                    answer_string(text, out);
                    true
                }
            }
            Node::Float(f) if !f.is_finite() => false,
            Node::BigInt(text) if text.trim_start_matches('-').len() > PYTHON_DIGITS => false,
            Node::Bytes(..) | Node::BigBytes(..) | Node::Ext | Node::List(_) | Node::Map(_) => false,
            other => {
                json_text(other, src, out);
                true
            }
        },
        Read::Unchecked => false,
        Read::List(items) => {
            out.push('[');
            for (i, item) in items.enumerate() {
                if i >= cut.items {
                    return false;
                }
                if i > 0 {
                    out.push(',');
                }
                if !answer_text_at(item, cut, out) {
                    return false;
                }
            }
            out.push(']');
            true
        }
        Read::Map(entries) => {
            out.push('{');
            for (i, (k, v)) in entries.enumerate() {
                if i >= cut.items {
                    return false;
                }
                if i > 0 {
                    out.push(',');
                }
                let Node::Str(key) = &*k else { return false };
                answer_string(key.get(place_src(v)), out);
                out.push(':');
                if !answer_text_at(v, cut, out) {
                    return false;
                }
            }
            out.push('}');
            true
        }
    }
}

// ------------------------------------------------------------------------------ arrays

/// One slot of a column being built: a value's place, or null.
pub type Slot<'a> = Option<Place<'a>>;

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
        .filter(|(_, slot)| matches!(slot, Some(place) if !fits_at(kind, *place)))
        .map(|(i, _)| i)
        .collect()
}

fn present<'a>(slot: &Slot<'a>) -> Option<Place<'a>> {
    match slot {
        Some(place) if !place.is_null() => Some(*place),
        _ => None,
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

    /// A marked string's characters pushed: its body's bytes, escapes decoded into the data as
    /// they are read (no string made).
    fn push_string(&mut self, src: &[u8], mark: &Mark) -> Result<(), Halt> {
        let (start, close) = (mark.start as usize + 1, (mark.end as usize).saturating_sub(1));
        if close < start || src.get(close) != Some(&b'"') {
            return Err(Halt::Misfit); // (not the text's mark)
        }
        if !mark.escaped {
            return self.push(Some(&src[start..close]));
        }
        let room = self.data.spare(close - start + crate::json::UNESCAPE_SLACK);
        let written = crate::json::unescape_to(src, start, close, room);
        self.data.commit(written);
        self.valid.push(true);
        let end = i32::try_from(self.data.len()).map_err(|_| Halt::TooLarge)?;
        self.offsets.push(end);
        Ok(())
    }

    fn array(self, format: &str, name: &str) -> Array {
        variable_array_of(format, name, &self.offsets, self.data, &self.valid)
    }
}

/// A text place's mark, where it is one (None for another place, or marks not the text's).
fn text_mark<'a>(place: Place<'a>) -> Option<(&'a [u8], &'a [Mark], usize, &'a Mark)> {
    match place {
        Place::Text(src, marks, at) => marks.get(at as usize).map(|m| (src, marks, at as usize, m)),
        _ => None,
    }
}

/// The lead byte of a text place's value ('{', '[', '"', a digit, ...), 0 for another place.
fn text_lead(place: Place<'_>) -> u8 {
    text_mark(place).and_then(|(src, _, _, m)| src.get(m.start as usize).copied()).unwrap_or(0)
}

/// A string slot's size in bytes as far as it can be told without reading it (a text's string:
/// its body's, at least its value's once its escapes are read), 0 for a null; Halt::Misfit for a
/// value that is no string (fits' Kind::Str).
fn str_size(slot: &Slot<'_>) -> Result<usize, Halt> {
    match present(slot) {
        None => Ok(0),
        Some(Place::Node(Node::Str(s), src)) => Ok(s.bytes(src).len()),
        Some(Place::Text(src, marks, at)) => match marks.get(at as usize) {
            Some(m) if src.get(m.start as usize) == Some(&b'"') => {
                Ok((m.end - m.start).saturating_sub(2) as usize)
            }
            _ => Err(Halt::Misfit),
        },
        Some(_) => Err(Halt::Misfit),
    }
}

/// A string slot's value pushed (a null's none); Halt::Misfit for another value.
fn push_str(out: &mut Variable, slot: &Slot<'_>) -> Result<(), Halt> {
    match present(slot) {
        None => out.push(None),
        Some(Place::Node(Node::Str(s), src)) => out.push(Some(s.bytes(src))),
        Some(place) if text_lead(place) == b'"' => {
            let (src, _, _, mark) = text_mark(place).expect("a text place");
            out.push_string(src, mark)
        }
        Some(place) => match place.read() {
            Read::Scalar(node, src) => match &*node {
                Node::Str(s) => out.push(Some(s.bytes(src))),
                _ => Err(Halt::Misfit),
            },
            _ => Err(Halt::Misfit),
        },
    }
}

/// A scalar's node as a place reads it, and the bytes its spans point into.
type Scalar<'a> = (std::borrow::Cow<'a, Node>, &'a [u8]);

/// A scalar slot's node (None for a null); Halt::Misfit for a container (no scalar kind holds one).
fn scalar<'a>(slot: &Slot<'a>) -> Result<Option<Scalar<'a>>, Halt> {
    match present(slot) {
        None => Ok(None),
        Some(place) => match place.read() {
            Read::Scalar(node, src) => Ok(Some((node, src))),
            _ => Err(Halt::Misfit),
        },
    }
}

/// An integer slot's value where it fits `kind` (fits' Kind::Int, Kind::Dec and Kind::Float for
/// an integer node; none for a null); Halt::Misfit where it does not.
fn int_fitting(kind: &Kind, node: Option<&Node>) -> Result<Option<i128>, Halt> {
    let Some(node) = node else { return Ok(None) };
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
/// One walk of the values: laid() checks each value as fits() would while laying it out; only
/// where it stops are the slots that misfit looked for (misfits(), the misfits before a column
/// too large as when they were looked for first). A text held for its value is laid out from
/// its text as it is read (Place::Text): no tree.
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
                bytes += str_size(slot)?;
            }
            let mut out = Variable::new(n, bytes);
            for slot in values {
                push_str(&mut out, slot)?;
            }
            out.array("u", name)
        }
        Kind::Json => {
            let mut out = Variable::new(n, 0);
            let mut text = String::new();
            for slot in values {
                match present(slot) {
                    Some(place) => {
                        text.clear();
                        json_text_at(place, &mut text);
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
                let value = match scalar(slot)? {
                    None => None,
                    Some((node, _)) => match &*node {
                        Node::Bool(b) => Some(*b),
                        _ => return Err(Halt::Misfit),
                    },
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
                let value = int_fitting(kind, scalar(slot)?.as_ref().map(|(node, _)| &**node))?;
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
                let value =
                    int_fitting(kind, scalar(slot)?.as_ref().map(|(node, _)| &**node))?.map(|v| v * factor);
                data.extend_from_slice(&value.unwrap_or(0).to_le_bytes());
                valid.push(value.is_some());
            }
            fixed_array(&format(kind), name, &data, &valid)
        }
        Kind::Float => {
            let mut data: Vec<u8> = Vec::with_capacity(n * 8);
            let mut valid = Vec::with_capacity(n);
            for slot in values {
                let value = match scalar(slot)? {
                    Some((node, _)) => match &*node {
                        Node::Float(f) => Some(*f),
                        other => int_fitting(kind, Some(other))?.map(|v| v as f64),
                    },
                    None => None,
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
                let present = present(slot);
                if let Some((src, marks, at, _)) =
                    present.filter(|p| text_lead(*p) == b'[').and_then(text_mark)
                {
                    // a text's list: its items' places from its marks
                    children.extend(
                        crate::json::inside(marks, at).map(|i| Some(Place::Text(src, marks, i as u32))),
                    );
                    valid.push(true);
                    offsets.push(i32::try_from(children.len()).map_err(|_| Halt::TooLarge)?);
                    continue;
                }
                match present.map(Place::read) {
                    Some(Read::List(items)) => {
                        for item in items {
                            if matches!(item, Place::Unchecked) {
                                return Err(Halt::Misfit);
                            }
                            children.push(Some(item));
                        }
                        valid.push(true);
                    }
                    Some(_) => return Err(Halt::Misfit),
                    None => valid.push(false),
                }
                offsets.push(i32::try_from(children.len()).map_err(|_| Halt::TooLarge)?);
            }
            list_array(name, &offsets, &valid, laid(item, "item", &children)?)
        }
        Kind::Struct(fields) => laid_struct(fields, name, values)?,
    })
}

/// A record's member (its `place` among the members of row `row`) sorted into the column of the
/// field its key names.
fn sort_member<'a>(
    fields: &[(String, Kind)],
    index: Option<&HashMap<&[u8], usize>>,
    (row, place): (usize, usize),
    key: &[u8],
    value: Place<'a>,
    columns: &mut [Vec<Slot<'a>>],
) -> Result<(), Halt> {
    // fits': every key a string naming a field
    let Some(at) = field_at(fields, key, place, index) else { return Err(Halt::Misfit) };
    // a key met twice: the value laid out is the last, the one it replaces checked here (fits
    // checks every entry's)
    if let Some(before) = columns[at][row] {
        if !fits_at(&fields[at].1, before) {
            return Err(Halt::Misfit);
        }
    }
    if matches!(value, Place::Unchecked) {
        return Err(Halt::Misfit);
    }
    columns[at][row] = Some(value);
    Ok(())
}

/// laid() of a struct kind: each value's members sorted into its fields' columns, then each
/// column laid out.
fn laid_struct<'a>(fields: &[(String, Kind)], name: &str, values: &[Slot<'a>]) -> Result<Array, Halt> {
    let n = values.len();
    let mut valid = Vec::with_capacity(n);
    let mut columns: Vec<Vec<Slot<'a>>> = fields.iter().map(|_| Vec::with_capacity(n)).collect();
    let index: Option<HashMap<&[u8], usize>> = (fields.len() > 16)
        .then(|| fields.iter().enumerate().map(|(i, (name, _))| (name.as_bytes(), i)).collect());
    for slot in values {
        for column in columns.iter_mut() {
            column.push(None);
        }
        let row = valid.len();
        let member = |place: usize, key: &[u8], value: Place<'a>, columns: &mut [Vec<Slot<'a>>]| {
            sort_member(fields, index.as_ref(), (row, place), key, value, columns)
        };
        let present = present(slot);
        if let Some((src, marks, at, _)) = present.filter(|p| text_lead(*p) == b'{').and_then(text_mark) {
            // a text's object: its members from its marks, each key a string (a key with
            // escapes read as its characters)
            let mut inside = crate::json::inside(marks, at);
            let mut place = 0;
            while let Some(k) = inside.next() {
                let Some(v) = inside.next() else { return Err(Halt::Misfit) };
                let mark = &marks[k];
                let value = Place::Text(src, marks, v as u32);
                if mark.escaped {
                    let Some(key) = crate::json::string_at(src, mark) else { return Err(Halt::Misfit) };
                    member(place, key.bytes(src), value, &mut columns)?;
                } else {
                    let key = src.get(mark.start as usize + 1..(mark.end as usize).saturating_sub(1));
                    member(place, key.ok_or(Halt::Misfit)?, value, &mut columns)?;
                }
                place += 1;
            }
            valid.push(true);
            continue;
        }
        match present.map(Place::read) {
            Some(Read::Map(entries)) => {
                for (place, (k, v)) in entries.enumerate() {
                    let Node::Str(key) = &*k else { return Err(Halt::Misfit) };
                    member(place, key.bytes(place_src(v)), v, &mut columns)?;
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
    Ok(nullable_struct_array(name, &valid, children))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Node {
        Node::Str(Str::Owned(text.into()))
    }

    fn gaps_only() -> crate::json::Check {
        crate::json::Check { gaps: true, values: false }
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
            let read = crate::json::json_check(text.as_bytes(), 0, text.len(), 1 << 20, &[], gaps_only());
            let Ok(Some(crate::json::Checked { gaps: Some(gaps), .. })) = read else {
                panic!("not read with its runs: {text:?}")
            };
            let mut out = String::from("head ");
            without_gaps(text, &gaps, &mut out);
            assert_eq!(out, format!("head {}", minified_bytewise(text)), "{text:?}");
        };
        for text in fixed {
            check(text);
        }
        assert_eq!(
            crate::json::json_check(fixed[0].as_bytes(), 0, fixed[0].len(), 1 << 20, &[], gaps_only())
                .ok()
                .flatten()
                .and_then(|checked| checked.gaps),
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
        let read = crate::json::json_check(many.as_bytes(), 0, many.len(), 1 << 20, &[], gaps_only());
        assert!(matches!(read, Ok(Some(crate::json::Checked { gaps: None, .. }))));
        let read =
            crate::json::json_check(fixed[1].as_bytes(), 0, fixed[1].len(), 1 << 20, &[], Default::default());
        assert!(matches!(read, Ok(Some(crate::json::Checked { gaps: None, .. }))));
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
                let slot: Slot<'_> = Some(Place::Node(node, src));
                assert_eq!(array(kind, "p", &[slot]).is_ok(), fits(kind, node, src), "{kind:?} {node:?}");
            }
            // a column of them all: the misfits are fits' (in order), and with those taken out
            // the one walk lays out what the two walks did
            let slots: Vec<Slot<'_>> =
                nodes.iter().map(|node| Some(Place::Node(node, src))).chain([None]).collect();
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
        let values: Vec<Slot<'_>> =
            vec![Some(Place::Node(&a, &[])), Some(Place::Node(&b, &[])), Some(Place::Node(&c, &[])), None];
        let array = array(&kind, "payload", &values).expect("fits");
        assert_eq!(array.field.format, "+s");
        assert_eq!((array.data.length, array.data.null_count), (4, 2));
        let list = &array.data.children[0];
        assert_eq!((list.length, list.null_count, list.children[0].length), (4, 3, 2));
        assert_eq!(array.field.children[0].children[0].name, "item");
        let wrong = Node::Map(vec![(s("y"), Node::Null)]);
        assert_eq!(
            super::array(&kind, "p", &[Some(Place::Node(&wrong, &[]))]).err(),
            Some(Unlaid::Misfits(vec![0]))
        );
    }

    /// A random JSON text for the in-place reading: objects keyed from a few names (a key now and
    /// then twice, or with an escape), lists, strings with and without escapes, integers of every
    /// size the kinds tell apart, floats, NaN, literals, whitespace between tokens.
    fn value_text(next: &mut impl FnMut() -> u64, depth: u32, out: &mut String) {
        let pick = |next: &mut dyn FnMut() -> u64, items: &[&str]| {
            items[(next() % items.len() as u64) as usize].to_owned()
        };
        let space = |next: &mut dyn FnMut() -> u64, out: &mut String| {
            if next() % 4 == 0 {
                out.push_str([" ", "\n  ", "\t"][(next() % 3) as usize]);
            }
        };
        let kind = if depth == 0 {
            next() % 2
        } else if depth > 4 {
            2 + next() % 5
        } else {
            next() % 7
        };
        match kind {
            0 => {
                out.push('{');
                space(next, out);
                let keys = next() % 6;
                for i in 0..keys {
                    if i > 0 {
                        out.push(',');
                        space(next, out);
                    }
                    let key = if next() % 40 == 0 {
                        pick(next, &["\\u0061", "b\\\"c"]) // an escaped key ("a" spelt so, a quote)
                    } else {
                        pick(next, &["a", "b", "c", "d", "e", "f", "gg", "hé"])
                    };
                    out.push('"');
                    out.push_str(&key);
                    out.push_str("\":");
                    space(next, out);
                    value_text(next, depth + 1, out);
                }
                space(next, out);
                out.push('}');
            }
            1 => {
                out.push('[');
                for i in 0..next() % 5 {
                    if i > 0 {
                        out.push(',');
                    }
                    space(next, out);
                    value_text(next, depth + 1, out);
                }
                out.push(']');
            }
            2 => {
                out.push('"');
                for _ in 0..next() % 8 {
                    out.push_str(&pick(
                        next,
                        &["x", "yz", "é", " ", "\\\"", "\\\\", "\\n", "\\u00e9", "\\ud83d\\ude00", "\\/"],
                    ));
                }
                out.push('"');
            }
            3 => out.push_str(&pick(
                next,
                &[
                    "0",
                    "-0",
                    "7",
                    "-12",
                    "999",
                    "9007199254740992",
                    "9007199254740993",
                    "-9223372036854775808",
                    "9223372036854775808",
                    "123456789012345678",
                    "1234567890123456789",
                    "99999999999999999999999999999999999999",
                    "100000000000000000000000000000000000000",
                    "123456789012345678901234567890123456789012345",
                ],
            )),
            4 => out.push_str(&pick(next, &["1.5", "-2.5e3", "1e400", "0.1", "3E-7", "NaN", "-Infinity"])),
            5 => out.push_str(&pick(next, &["true", "false"])),
            _ => out.push_str("null"),
        }
    }

    /// A kind the value fits (records' fields, lists' first items), to lay it out rather than
    /// only refuse it.
    fn kind_like(node: &Node, src: &[u8]) -> Kind {
        match node {
            Node::Null => Kind::Null,
            Node::Bool(_) => Kind::Bool,
            Node::Int(_) => Kind::Int(64),
            Node::Wide(_) => Kind::Int(128),
            Node::Float(_) => Kind::Float,
            Node::Str(_) => Kind::Str,
            Node::List(items) => {
                Kind::List(Box::new(items.first().map_or(Kind::Json, |i| kind_like(i, src))))
            }
            Node::Map(entries) => Kind::Struct(
                entries
                    .iter()
                    .map(|(k, v)| {
                        let Node::Str(key) = k else { unreachable!("a JSON key is a string") };
                        (key.get(src).to_owned(), kind_like(v, src))
                    })
                    .collect(),
            ),
            _ => Kind::Json,
        }
    }

    /// The same array: its type, lengths, nulls and every buffer's bytes (their spare room apart).
    fn same_data(a: &crate::columns::Data, b: &crate::columns::Data) -> bool {
        a.length == b.length
            && a.null_count == b.null_count
            && a.buffers.len() == b.buffers.len()
            && a.buffers
                .iter()
                .zip(&b.buffers)
                .all(|(x, y)| x.as_ref().map(|x| x.bytes()) == y.as_ref().map(|y| y.bytes()))
            && a.children.len() == b.children.len()
            && a.children.iter().zip(&b.children).all(|(x, y)| same_data(x, y))
    }

    fn same(a: &Result<Array, Unlaid>, b: &Result<Array, Unlaid>) -> bool {
        match (a, b) {
            (Ok(a), Ok(b)) => {
                format!("{:?}", a.field) == format!("{:?}", b.field) && same_data(&a.data, &b.data)
            }
            (Err(a), Err(b)) => a == b,
            _ => false,
        }
    }

    /// A JSON text held for its value is read in place from the marks its check made exactly as
    /// its tree is: the same arrays (or the same misfits) of every kind, the same shape, fits,
    /// JSON spelling and tree; a text the check says needs its tree holds a key twice or a key with
    /// escapes, and a lone surrogate hands the value back as the tree's reading does.
    #[test]
    fn a_text_read_in_place_is_its_tree() {
        let mut seed: u64 = 0x5851_f42d_4c95_7f2d;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let bounds: [i128; 3] = [1 << 53, 1 << 63, 10i128.pow(38)];
        let fixed = vec![
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
            Kind::Struct(vec![("a".into(), Kind::Str), ("b".into(), Kind::Json), ("c".into(), Kind::Float)]),
        ];
        let (mut in_place, mut with_tree, mut laid) = (0, 0, 0);
        for round in 0..6_000 {
            // a column of a few texts, read in place and as trees
            let mut texts = Vec::new();
            for _ in 0..1 + next() % 4 {
                let mut text = String::new();
                value_text(&mut next, 0, &mut text);
                texts.push(text);
            }
            let mut read: Vec<(Vec<u8>, Vec<Mark>, Node)> = Vec::new();
            for text in &texts {
                let src = text.as_bytes();
                let tree =
                    crate::json::json_container(src, 0, src.len(), 1 << 20).expect("no hand-back here");
                let check = crate::json::Check { gaps: false, values: true };
                let checked = crate::json::json_check(src, 0, src.len(), 1 << 20, &[], check)
                    .expect("no hand-back here")
                    .expect("a JSON container");
                let tree = tree.expect("a JSON container");
                if checked.tree_needed {
                    with_tree += 1;
                    assert!(checked.marks.is_none());
                    // (a key twice, or escaped: the generator's keys are one of those or plain)
                    assert!(
                        text.contains("\\u0061")
                            || text.contains("b\\\"c")
                            || has_repeated_key(&tree, src, text)
                    );
                    continue;
                }
                in_place += 1;
                read.push((src.to_vec(), checked.marks.expect("marks"), tree));
            }
            let places: Vec<Slot<'_>> =
                read.iter().map(|(src, marks, _)| Some(Place::Text(src, marks, 0))).collect();
            let nodes: Vec<Slot<'_>> =
                read.iter().map(|(src, _, tree)| Some(Place::Node(tree, src))).collect();
            let mut kinds = fixed.clone();
            kinds.extend(read.iter().map(|(src, _, tree)| kind_like(tree, src)));
            for kind in &kinds {
                let (a, b) = (array(kind, "p", &places), array(kind, "p", &nodes));
                assert!(same(&a, &b), "round {round}: {kind:?} of {texts:?}: {a:?} / {b:?}");
                laid += a.is_ok() as usize;
            }
            for ((text_place, node_place), (src, _, tree)) in places.iter().zip(&nodes).zip(&read) {
                let (text_place, node_place) = (text_place.expect("a place"), node_place.expect("a place"));
                let (mut x, mut y) = (Vec::new(), Vec::new());
                shape(text_place, &bounds, &mut x);
                shape(node_place, &bounds, &mut y);
                assert_eq!(x, y);
                let (mut x, mut y) = (String::new(), String::new());
                json_text_at(text_place, &mut x);
                json_text(tree, src, &mut y);
                assert_eq!(x, y);
                let (built, built_src) = text_place.tree().expect("its tree");
                let mut z = String::new();
                json_text(&built, built_src, &mut z);
                assert_eq!(z, y);
                for kind in &kinds {
                    assert_eq!(fits_at(kind, text_place), fits(kind, tree, src), "{kind:?}");
                }
            }
        }
        assert!(in_place > 10_000 && with_tree > 100 && laid > 10_000, "{in_place} {with_tree} {laid}");
        // a lone surrogate: handed back as the tree's reading hands it back (a file of text's
        // check, which reads no value, keeps the text)
        for text in [r#"{"a": "\ud800"}"#, r#"{"\udc00": 1}"#, r#"[["x", "\ud83d"]]"#] {
            let src = text.as_bytes();
            assert!(crate::json::json_container(src, 0, src.len(), 1 << 20).is_err());
            let values = crate::json::Check { gaps: false, values: true };
            assert!(crate::json::json_check(src, 0, src.len(), 1 << 20, &[], values).is_err());
            assert!(matches!(
                crate::json::json_check(src, 0, src.len(), 1 << 20, &[], Default::default()),
                Ok(Some(_))
            ));
        }
    }

    /// Whether the text holds an object with a key twice (the tree keeps one of them: an object
    /// of the tree with fewer members than its text names).
    fn has_repeated_key(tree: &Node, src: &[u8], text: &str) -> bool {
        fn members(node: &Node) -> usize {
            match node {
                Node::Map(entries) => entries.len() + entries.iter().map(|(_, v)| members(v)).sum::<usize>(),
                Node::List(items) => items.iter().map(members).sum(),
                _ => 0,
            }
        }
        let _ = src;
        // each member of the text is a key followed by a colon outside strings: count them
        let (mut count, mut inside, mut escaped) = (0, false, false);
        for b in text.bytes() {
            match (inside, escaped, b) {
                (true, true, _) => escaped = false,
                (true, false, b'\\') => escaped = true,
                (_, false, b'"') => inside = !inside,
                (false, _, b':') => count += 1,
                _ => {}
            }
        }
        count > members(tree)
    }
}
