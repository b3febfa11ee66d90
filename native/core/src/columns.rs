//! A page's answer as columns: Arrow arrays, laid out by hand and handed over through the Arrow
//! C data interface (ArrowSchema, ArrowArray, ArrowArrayStream: a few C structs whose release
//! callbacks free what this file allocated), so that any Arrow library takes them without a copy
//! and without an object per value. The bindings wrap the structs in PyCapsules
//! (`__arrow_c_array__`, `__arrow_c_stream__`: pyarrow.array(), pyarrow.record_batch()).
//!
//! A path's column is typed by what the page's values hold there (docs/architecture.md, "A page's
//! columns"): one Arrow type when every value present is of one kind (null where the value is
//! JSON null, lacks the path or was not read), a dense union when they mix, its children in a
//! fixed order of type codes (null, bool, int64, float64, utf8, a big integer's decimal text,
//! binary, JSON text), only those met present. An object or array at a path is its JSON text
//! (`json.dumps(value, ensure_ascii=False)` of the Python object the engine builds, bytes spelt
//! "0x..." as the JSON output spells them, U+0085, U+2028 and U+2029 escaped as jsonenc.line_safe
//! does, a map whose keys would be one name twice named by their JSON texts as
//! formats/tree.jsonable does), on a field marked with the `arrow.json` extension.

use std::ffi::{c_char, c_void, CString};
use std::fmt::Write;

use crate::tree::Node;

// ------------------------------------------------------------------------------ values

/// One value of a column (what a path reads in one value of the page).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// JSON null, a path missing, a value not read: no value.
    Null,
    Bool(bool),
    Int(i64),
    /// An integer past 64 bits: its decimal text.
    Big(String),
    Float(f64),
    Str(String),
    Bytes(Vec<u8>),
    /// An object or an array: its JSON text.
    Json(String),
}

/// The type codes of a path column's union (fixed: two pages' unions of the same kinds agree).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(i8)]
pub enum Tag {
    Null = 0,
    Bool = 1,
    Int = 2,
    Float = 3,
    Str = 4,
    Big = 5,
    Bytes = 6,
    Json = 7,
}

const TAGS: [Tag; 8] =
    [Tag::Null, Tag::Bool, Tag::Int, Tag::Float, Tag::Str, Tag::Big, Tag::Bytes, Tag::Json];

impl Value {
    pub fn tag(&self) -> Tag {
        match self {
            Value::Null => Tag::Null,
            Value::Bool(_) => Tag::Bool,
            Value::Int(_) => Tag::Int,
            Value::Big(_) => Tag::Big,
            Value::Float(_) => Tag::Float,
            Value::Str(_) => Tag::Str,
            Value::Bytes(_) => Tag::Bytes,
            Value::Json(_) => Tag::Json,
        }
    }
}

/// A tree's node as a column value.
pub fn value_of(node: &Node, src: &[u8]) -> Value {
    match node {
        Node::Null => Value::Null,
        Node::Bool(b) => Value::Bool(*b),
        Node::Int(i) => Value::Int(*i),
        Node::Wide(i) => match i64::try_from(*i) {
            Ok(small) => Value::Int(small),
            Err(_) => Value::Big(i.to_string()),
        },
        Node::BigInt(text) => Value::Big(text.to_string()),
        Node::BigBytes(..) => Value::Big(big_text(node, src)),
        Node::Float(f) => Value::Float(*f),
        Node::Str(s) => Value::Str(s.get(src).to_owned()),
        Node::Bytes(a, n) => Value::Bytes(src[*a as usize..(*a + *n) as usize].to_vec()),
        Node::List(_) | Node::Map(_) | Node::Ext => {
            let mut out = String::new();
            json_text(node, src, &mut out);
            Value::Json(out)
        }
    }
}

/// A CBOR bignum's decimal text (base 10 by repeated division of its magnitude).
pub fn big_text(node: &Node, src: &[u8]) -> String {
    let Node::BigBytes(a, n, negative) = node else { return String::new() };
    let mut magnitude: Vec<u8> = src[*a as usize..(*a + *n) as usize].to_vec();
    if *negative {
        // -1 - n: add one to the magnitude
        let mut carry = true;
        for byte in magnitude.iter_mut().rev() {
            if !carry {
                break;
            }
            let (sum, over) = byte.overflowing_add(1);
            *byte = sum;
            carry = over;
        }
        if carry {
            magnitude.insert(0, 1);
        }
    }
    let mut digits: Vec<u8> = Vec::new();
    while magnitude.iter().any(|&b| b != 0) {
        let mut rest = 0u32;
        for byte in magnitude.iter_mut() {
            let acc = (rest << 8) | *byte as u32;
            *byte = (acc / 10) as u8;
            rest = acc % 10;
        }
        digits.push(b'0' + rest as u8);
    }
    if digits.is_empty() {
        digits.push(b'0');
    }
    if *negative {
        digits.push(b'-');
    }
    digits.reverse();
    String::from_utf8(digits).unwrap_or_default()
}

/// A float as Python's repr spells it: the shortest digits that read back the same, in fixed
/// notation for exponents from -4 to 15, else scientific (`1e+16`, `1.5e-07`).
pub fn py_float_repr(f: f64, out: &mut String) {
    if f.is_nan() {
        out.push_str("NaN");
        return;
    }
    if f.is_infinite() {
        out.push_str(if f > 0.0 { "Infinity" } else { "-Infinity" });
        return;
    }
    // Rust's {:e} gives the shortest round-trip digits: "d.ddde<exp>", written into a buffer on
    // the stack (no String a value: a JSON text column of floats spells one a row)
    let mut sci = Spelt::default();
    if write!(sci, "{f:e}").is_err() {
        // (never: a finite f64's {:e} is at most 24 bytes) the same spelling, allocated
        py_float_repr_from(&format!("{f:e}"), out);
        return;
    }
    py_float_repr_from(sci.text(), out);
}

/// A finite float's {:e} text as Python's repr spells it.
fn py_float_repr_from(sci: &str, out: &mut String) {
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    // the mantissa's digits, its sign and point left out (at most 17 for an f64)
    let mut held = [0u8; 32];
    let mut count = 0;
    for &b in mantissa.as_bytes() {
        if b.is_ascii_digit() && count < held.len() {
            held[count] = b;
            count += 1;
        }
    }
    let digits = std::str::from_utf8(&held[..count]).unwrap_or("0");
    if negative {
        out.push('-');
    }
    if (-4..16).contains(&exp) {
        if exp < 0 {
            out.push_str("0.");
            for _ in 0..(-exp - 1) {
                out.push('0');
            }
            out.push_str(digits);
        } else {
            let point = exp as usize + 1;
            if digits.len() <= point {
                out.push_str(digits);
                for _ in digits.len()..point {
                    out.push('0');
                }
                out.push_str(".0");
            } else {
                out.push_str(&digits[..point]);
                out.push('.');
                out.push_str(&digits[point..]);
            }
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let exp = exp.unsigned_abs();
        if exp >= 100 {
            out.push(char::from(b'0' + (exp / 100) as u8));
        }
        out.push(char::from(b'0' + (exp / 10 % 10) as u8));
        out.push(char::from(b'0' + (exp % 10) as u8));
    }
}

/// An integer in decimal, as `{i}` spells it (and Python's str of an int), without the
/// formatting machinery: a JSON text column of integers spells one a row.
pub fn push_int(i: i64, out: &mut String) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = i.unsigned_abs();
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if i < 0 {
        out.push('-');
    }
    out.push_str(std::str::from_utf8(&digits[at..]).unwrap_or("0"));
}

/// A short text written on the stack (py_float_repr's {:e}); a write past its room fails.
#[derive(Default)]
struct Spelt {
    bytes: [u8; 32],
    len: usize,
}

impl Spelt {
    fn text(&self) -> &str {
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or("")
    }
}

impl Write for Spelt {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        if end > self.bytes.len() {
            return Err(std::fmt::Error);
        }
        self.bytes[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// A string as jsonenc.string spells it: json.dumps(..., ensure_ascii=False), with the
/// characters str.splitlines() and line-oriented tools take for a line's end escaped (jsonenc
/// LINE_BREAKS: U+0085, U+2028, U+2029), so a JSON Lines row stays one line.
pub fn json_string(text: &str, out: &mut String) {
    string_escaped(text, true, out);
}

/// A string as json.dumps(..., ensure_ascii=False) itself spells it (line breaks as they are):
/// an MCP answer's, which mcp_server/answers spells so.
pub fn dumps_string(text: &str, out: &mut String) {
    string_escaped(text, false, out);
}

fn string_escaped(text: &str, line_safe: bool, out: &mut String) {
    out.push('"');
    for c in text.chars() {
        match c {
            '\u{85}' if line_safe => out.push_str("\\u0085"),
            '\u{2028}' if line_safe => out.push_str("\\u2028"),
            '\u{2029}' if line_safe => out.push_str("\\u2029"),
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Whether a JSON text holds a character json_string escapes as a line's end (U+0085: C2 85;
/// U+2028, U+2029: E2 80 A8, E2 80 A9), which in JSON text can only be inside a string.
fn holds_line_breaks(bytes: &[u8]) -> bool {
    memchr::memchr2_iter(0xC2, 0xE2, bytes)
        .any(|at| matches!(&bytes[at..], [0xC2, 0x85, ..] | [0xE2, 0x80, 0xA8 | 0xA9, ..]))
}

/// The JSON text written in `out` from `mark` on (a stored JSON text, minified) with its
/// strings' U+0085, U+2028 and U+2029 escaped as json_string escapes them (jsonenc.line_safe):
/// the same JSON value, on one line for line-oriented readers.
pub fn escape_line_breaks_from(out: &mut String, mark: usize) {
    if !holds_line_breaks(&out.as_bytes()[mark..]) {
        return;
    }
    let tail = out.split_off(mark);
    for c in tail.chars() {
        match c {
            '\u{85}' => out.push_str("\\u0085"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
}

fn hex_text(bytes: &[u8]) -> String {
    let mut text = String::with_capacity(2 + bytes.len() * 2);
    text.push_str("0x");
    for b in bytes {
        let _ = write!(text, "{b:02x}");
    }
    text
}

/// A dict key as json.dumps spells it (a str as it is, a number or a constant as its text).
fn json_key(key: &Node, src: &[u8], out: &mut String) {
    match key {
        Node::Str(s) => json_string(s.get(src), out),
        Node::Bytes(a, n) => json_string(&hex_text(&src[*a as usize..(*a + *n) as usize]), out),
        Node::Null => out.push_str("\"null\""),
        Node::Bool(b) => out.push_str(if *b { "\"true\"" } else { "\"false\"" }),
        other => {
            let mut text = String::new();
            json_text(other, src, &mut text);
            json_string(&text, out);
        }
    }
}

/// A map key as a JSON object's name (payload/formats/tree._name): a text key as it is,
/// another as json_key writes it, without its quotes.
fn key_name(key: &Node, src: &[u8]) -> String {
    match key {
        Node::Str(s) => s.get(src).to_string(),
        Node::Bytes(a, n) => hex_text(&src[*a as usize..(*a + *n) as usize]),
        Node::Null => "null".to_string(),
        Node::Bool(b) => (if *b { "true" } else { "false" }).to_string(),
        other => {
            let mut text = String::new();
            json_text(other, src, &mut text);
            text
        }
    }
}

/// Whether two keys of a map would be the same name in a JSON object (tree.alike_key_texts: the
/// integer 1 and the text "1" in one MessagePack or CBOR map): its keys are then written as their
/// own JSON text (key_json_text), so no value is lost.
pub fn keys_alike(entries: &[(Node, Node)], src: &[u8]) -> bool {
    if entries.iter().all(|(k, _)| matches!(k, Node::Str(_))) {
        return false;
    }
    let mut names = std::collections::HashSet::with_capacity(entries.len());
    entries.iter().any(|(k, _)| !names.insert(key_name(k, src)))
}

/// A map key as its own JSON text, which says its type (tree.key_json_text): a text key in its
/// quotes, a number, true, false or null bare, NaN and the infinities by their bare names, bytes
/// as 0x....
pub fn key_json_text(key: &Node, src: &[u8], out: &mut String) {
    match key {
        Node::Str(s) => json_string(s.get(src), out),
        Node::Bytes(a, n) => out.push_str(&hex_text(&src[*a as usize..(*a + *n) as usize])),
        Node::Float(f) if !f.is_finite() => out.push_str(if f.is_nan() {
            "NaN"
        } else if *f > 0.0 {
            "Infinity"
        } else {
            "-Infinity"
        }),
        other => json_text(other, src, out),
    }
}

/// A tree as json.dumps(value, ensure_ascii=False) spells the Python object the engine builds
/// for it (bytes spelt "0x..." as a string; a map whose keys would be one name twice with its
/// keys as their own JSON text, as payload/formats/tree.jsonable gives it).
pub fn json_text(node: &Node, src: &[u8], out: &mut String) {
    match node {
        Node::Null | Node::Ext => out.push_str("null"),
        Node::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Node::Int(i) => push_int(*i, out),
        Node::Wide(i) => {
            let _ = write!(out, "{i}");
        }
        Node::BigInt(text) => out.push_str(text),
        Node::BigBytes(..) => out.push_str(&big_text(node, src)),
        Node::Float(f) => py_float_repr(*f, out),
        Node::Str(s) => json_string(s.get(src), out),
        Node::Bytes(a, n) => json_string(&hex_text(&src[*a as usize..(*a + *n) as usize]), out),
        Node::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                json_text(item, src, out);
            }
            out.push(']');
        }
        Node::Map(entries) => {
            out.push('{');
            let alike = keys_alike(entries, src);
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                if alike {
                    let mut text = String::new();
                    key_json_text(k, src, &mut text);
                    json_string(&text, out);
                } else {
                    json_key(k, src, out);
                }
                out.push_str(": ");
                json_text(v, src, out);
            }
            out.push('}');
        }
    }
}

// ------------------------------------------------------------------------------ arrays

/// A buffer kept 8-byte aligned (Arrow asks for it). Its words are shared, never changed once
/// made: a clone of an array's data (each `__arrow_c_array__` exports one) copies no bytes.
#[derive(Clone, Debug, Default)]
pub struct Buffer {
    words: std::sync::Arc<Vec<u64>>,
    len: usize,
}

impl Buffer {
    fn from_bytes(bytes: &[u8]) -> Buffer {
        let mut words = vec![0u64; bytes.len().div_ceil(8).max(1)];
        // SAFETY-free copy: a u64 slice seen as bytes
        let view: &mut [u8] = bytemuck_bytes(&mut words);
        view[..bytes.len()].copy_from_slice(bytes);
        Buffer { words: std::sync::Arc::new(words), len: bytes.len() }
    }

    pub fn bytes(&self) -> &[u8] {
        let all: &[u8] =
            unsafe { std::slice::from_raw_parts(self.words.as_ptr().cast::<u8>(), self.words.len() * 8) };
        &all[..self.len]
    }
}

/// A variable-width array's data written straight into its Arrow buffer (8-byte aligned words,
/// made zeroed for the bytes it is told it will hold, grown if it is given more): the array takes
/// it as it is (variable_array_of), no copy of the data.
pub struct DataBytes {
    words: Vec<u64>,
    len: usize,
}

impl DataBytes {
    pub fn for_bytes(bytes: usize) -> DataBytes {
        DataBytes { words: vec![0u64; bytes.div_ceil(8).max(1)], len: 0 }
    }

    pub fn extend_from_slice(&mut self, bytes: &[u8]) {
        let end = self.len + bytes.len();
        if end > self.words.len() * 8 {
            let need = end.div_ceil(8).max(self.words.len() * 2);
            self.words.resize(need, 0);
        }
        bytemuck_bytes(&mut self.words)[self.len..end].copy_from_slice(bytes);
        self.len = end;
    }

    /// Room for `n` bytes past the data (zeroed, or bytes written there before and not kept):
    /// written by the caller, then kept by `commit`.
    pub fn spare(&mut self, n: usize) -> &mut [u8] {
        let end = self.len + n;
        if end > self.words.len() * 8 {
            let need = end.div_ceil(8).max(self.words.len() * 2);
            self.words.resize(need, 0);
        }
        &mut bytemuck_bytes(&mut self.words)[self.len..end]
    }

    /// The first `n` bytes of the room `spare` gave kept as data.
    pub fn commit(&mut self, n: usize) {
        self.len = (self.len + n).min(self.words.len() * 8);
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// variable_array of data written in place (DataBytes).
pub fn variable_array_of(
    format: &str,
    name: &str,
    offsets: &[i32],
    data: DataBytes,
    valid: &[bool],
) -> Array {
    let (bitmap, nulls) = validity(valid);
    let data = Buffer { words: std::sync::Arc::new(data.words), len: data.len };
    Array {
        field: field(format, name),
        data: Data {
            length: valid.len(),
            null_count: nulls,
            buffers: vec![bitmap, Some(Buffer::from_bytes(as_bytes_i32(offsets))), Some(data)],
            children: Vec::new(),
        },
    }
}

fn bytemuck_bytes(words: &mut [u64]) -> &mut [u8] {
    // SAFETY: u8 has no alignment or validity requirement; the slice covers the same memory.
    unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), words.len() * 8) }
}

/// An Arrow field: its type's format string, name, metadata, whether it may hold nulls, children.
#[derive(Clone, Debug)]
pub struct Field {
    pub format: String,
    pub name: String,
    pub metadata: Option<Vec<u8>>,
    pub nullable: bool,
    pub children: Vec<Field>,
}

/// An Arrow array's data: its length, nulls, buffers (None: absent, a null pointer) and children.
#[derive(Clone, Debug)]
pub struct Data {
    pub length: usize,
    pub null_count: usize,
    pub buffers: Vec<Option<Buffer>>,
    pub children: Vec<Data>,
}

/// An array: its field and its data.
#[derive(Clone, Debug)]
pub struct Array {
    pub field: Field,
    pub data: Data,
}

impl Array {
    pub fn len(&self) -> usize {
        self.data.length
    }

    pub fn is_empty(&self) -> bool {
        self.data.length == 0
    }

    pub fn renamed(mut self, name: &str) -> Array {
        self.field.name = name.to_owned();
        self
    }
}

fn field(format: &str, name: &str) -> Field {
    Field {
        format: format.to_owned(),
        name: name.to_owned(),
        metadata: None,
        nullable: true,
        children: Vec::new(),
    }
}

/// A validity bitmap from each slot's presence (None when every slot is valid).
fn validity(valid: &[bool]) -> (Option<Buffer>, usize) {
    let nulls = valid.iter().filter(|v| !**v).count();
    if nulls == 0 {
        return (None, 0);
    }
    (Some(Buffer::from_bytes(&bits(valid))), nulls)
}

fn bits(flags: &[bool]) -> Vec<u8> {
    let mut out = vec![0u8; flags.len().div_ceil(8)];
    for (i, &flag) in flags.iter().enumerate() {
        if flag {
            out[i / 8] |= 1 << (i % 8);
        }
    }
    out
}

/// A utf8 array ("u").
pub fn utf8_array<'a>(name: &str, values: impl IntoIterator<Item = Option<&'a str>>) -> Array {
    variable("u", name, values.into_iter().map(|v| v.map(str::as_bytes)))
}

/// A binary array ("z").
pub fn binary_array<'a>(name: &str, values: impl IntoIterator<Item = Option<&'a [u8]>>) -> Array {
    variable("z", name, values.into_iter())
}

/// A variable-length array ("u" utf8, "z" binary) from its parts: `offsets` (one more than the
/// slots), the bytes, each slot's presence.
pub fn variable_array(format: &str, name: &str, offsets: &[i32], data: &[u8], valid: &[bool]) -> Array {
    let (bitmap, nulls) = validity(valid);
    Array {
        field: field(format, name),
        data: Data {
            length: valid.len(),
            null_count: nulls,
            buffers: vec![
                bitmap,
                Some(Buffer::from_bytes(as_bytes_i32(offsets))),
                Some(Buffer::from_bytes(data)),
            ],
            children: Vec::new(),
        },
    }
}

fn as_bytes_i32(values: &[i32]) -> &[u8] {
    // SAFETY: i32 has no padding; the slice covers the same memory, read as bytes (little-endian
    // on the targets the core builds for, as Arrow's buffers are)
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values)) }
}

/// A fixed-width array (`width` bytes a slot) from its bytes and each slot's presence.
pub fn fixed_array(format: &str, name: &str, data: &[u8], valid: &[bool]) -> Array {
    let (bitmap, nulls) = validity(valid);
    Array {
        field: field(format, name),
        data: Data {
            length: valid.len(),
            null_count: nulls,
            buffers: vec![bitmap, Some(Buffer::from_bytes(data))],
            children: Vec::new(),
        },
    }
}

/// A list array ("+l": its child named "item") from the offsets into its child.
pub fn list_array(name: &str, offsets: &[i32], valid: &[bool], child: Array) -> Array {
    let (bitmap, nulls) = validity(valid);
    let child = child.renamed("item");
    Array {
        field: Field {
            format: "+l".to_owned(),
            name: name.to_owned(),
            metadata: None,
            nullable: true,
            children: vec![child.field],
        },
        data: Data {
            length: valid.len(),
            null_count: nulls,
            buffers: vec![bitmap, Some(Buffer::from_bytes(as_bytes_i32(offsets)))],
            children: vec![child.data],
        },
    }
}

/// A struct array ("+s") whose slots may be null, from its children (one slot each a row).
pub fn nullable_struct_array(name: &str, valid: &[bool], children: Vec<Array>) -> Array {
    let (bitmap, nulls) = validity(valid);
    let (fields, data): (Vec<Field>, Vec<Data>) = children.into_iter().map(|c| (c.field, c.data)).unzip();
    Array {
        field: Field {
            format: "+s".to_owned(),
            name: name.to_owned(),
            metadata: None,
            nullable: true,
            children: fields,
        },
        data: Data { length: valid.len(), null_count: nulls, buffers: vec![bitmap], children: data },
    }
}

fn variable<'a>(format: &str, name: &str, values: impl Iterator<Item = Option<&'a [u8]>>) -> Array {
    let mut offsets: Vec<i32> = vec![0];
    let mut data: Vec<u8> = Vec::new();
    let mut valid: Vec<bool> = Vec::new();
    for value in values {
        if let Some(bytes) = value {
            data.extend_from_slice(bytes);
        }
        valid.push(value.is_some());
        offsets.push(data.len() as i32);
    }
    let (bitmap, nulls) = validity(&valid);
    let offset_bytes: Vec<u8> = offsets.iter().flat_map(|o| o.to_le_bytes()).collect();
    Array {
        field: field(format, name),
        data: Data {
            length: valid.len(),
            null_count: nulls,
            buffers: vec![bitmap, Some(Buffer::from_bytes(&offset_bytes)), Some(Buffer::from_bytes(&data))],
            children: Vec::new(),
        },
    }
}

fn fixed<T: Copy + Default>(
    format: &str,
    name: &str,
    values: impl IntoIterator<Item = Option<T>>,
    bytes: fn(T) -> [u8; 8],
) -> Array {
    let mut data: Vec<u8> = Vec::new();
    let mut valid: Vec<bool> = Vec::new();
    for value in values {
        data.extend_from_slice(&bytes(value.unwrap_or_default()));
        valid.push(value.is_some());
    }
    let (bitmap, nulls) = validity(&valid);
    Array {
        field: field(format, name),
        data: Data {
            length: valid.len(),
            null_count: nulls,
            buffers: vec![bitmap, Some(Buffer::from_bytes(&data))],
            children: Vec::new(),
        },
    }
}

/// An int64 array ("l").
pub fn int64_array(name: &str, values: impl IntoIterator<Item = Option<i64>>) -> Array {
    fixed("l", name, values, i64::to_le_bytes)
}

/// A float64 array ("g").
pub fn float64_array(name: &str, values: impl IntoIterator<Item = Option<f64>>) -> Array {
    fixed("g", name, values, f64::to_le_bytes)
}

/// A bool array ("b").
pub fn bool_array(name: &str, values: impl IntoIterator<Item = Option<bool>>) -> Array {
    let mut flags: Vec<bool> = Vec::new();
    let mut valid: Vec<bool> = Vec::new();
    for value in values {
        flags.push(value.unwrap_or(false));
        valid.push(value.is_some());
    }
    let (bitmap, nulls) = validity(&valid);
    Array {
        field: field("b", name),
        data: Data {
            length: valid.len(),
            null_count: nulls,
            buffers: vec![bitmap, Some(Buffer::from_bytes(&bits(&flags)))],
            children: Vec::new(),
        },
    }
}

/// A null array ("n": no buffers).
pub fn null_array(name: &str, length: usize) -> Array {
    Array {
        field: field("n", name),
        data: Data { length, null_count: length, buffers: Vec::new(), children: Vec::new() },
    }
}

/// The `arrow.json` extension's field metadata (a JSON text in a utf8 column).
fn json_metadata() -> Vec<u8> {
    let mut out = Vec::new();
    let pairs: [(&str, &str); 2] = [("ARROW:extension:name", "arrow.json"), ("ARROW:extension:metadata", "")];
    out.extend_from_slice(&(pairs.len() as i32).to_le_bytes());
    for (key, value) in pairs {
        out.extend_from_slice(&(key.len() as i32).to_le_bytes());
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(&(value.len() as i32).to_le_bytes());
        out.extend_from_slice(value.as_bytes());
    }
    out
}

/// The array of one kind of values (None for the slots not of it: nulls).
fn array_of(tag: Tag, name: &str, values: &[&Value]) -> Array {
    match tag {
        Tag::Null => null_array(name, values.len()),
        Tag::Bool => {
            bool_array(name, values.iter().map(|v| if let Value::Bool(b) = v { Some(*b) } else { None }))
        }
        Tag::Int => {
            int64_array(name, values.iter().map(|v| if let Value::Int(i) = v { Some(*i) } else { None }))
        }
        Tag::Float => {
            float64_array(name, values.iter().map(|v| if let Value::Float(f) = v { Some(*f) } else { None }))
        }
        Tag::Str => utf8_array(
            name,
            values.iter().map(|v| if let Value::Str(s) = v { Some(s.as_str()) } else { None }),
        ),
        Tag::Big => utf8_array(
            name,
            values.iter().map(|v| if let Value::Big(s) = v { Some(s.as_str()) } else { None }),
        ),
        Tag::Bytes => binary_array(
            name,
            values.iter().map(|v| if let Value::Bytes(b) = v { Some(b.as_slice()) } else { None }),
        ),
        Tag::Json => {
            let mut array = utf8_array(
                name,
                values.iter().map(|v| if let Value::Json(s) = v { Some(s.as_str()) } else { None }),
            );
            array.field.metadata = Some(json_metadata());
            array
        }
    }
}

fn tag_name(tag: Tag) -> &'static str {
    match tag {
        Tag::Null => "null",
        Tag::Bool => "bool",
        Tag::Int => "int64",
        Tag::Float => "float64",
        Tag::Str => "string",
        Tag::Big => "big_integer",
        Tag::Bytes => "binary",
        Tag::Json => "json",
    }
}

/// A path's column: one type when the values present are of one kind (the others null), else a
/// dense union of the kinds met, in the fixed order of their type codes.
pub fn path_array(name: &str, values: &[Value]) -> Array {
    let mut met = [false; 8];
    for value in values {
        met[value.tag() as usize] = true;
    }
    let kinds: Vec<Tag> = TAGS.iter().copied().filter(|t| met[*t as usize] && *t != Tag::Null).collect();
    let all: Vec<&Value> = values.iter().collect();
    match kinds.as_slice() {
        [] => return null_array(name, values.len()),
        [one] => return array_of(*one, name, &all),
        _ => {}
    }
    // a dense union: each slot's type code and its offset in that kind's child
    let present: Vec<Tag> = TAGS.iter().copied().filter(|t| met[*t as usize]).collect();
    let mut type_ids: Vec<u8> = Vec::with_capacity(values.len());
    let mut offsets: Vec<u8> = Vec::with_capacity(values.len() * 4);
    let mut per_kind: Vec<Vec<&Value>> = vec![Vec::new(); 8];
    for value in values {
        let tag = value.tag();
        type_ids.push(tag as i8 as u8);
        offsets.extend_from_slice(&(per_kind[tag as usize].len() as i32).to_le_bytes());
        per_kind[tag as usize].push(value);
    }
    let children: Vec<Array> =
        present.iter().map(|t| array_of(*t, tag_name(*t), &per_kind[*t as usize])).collect();
    let codes: Vec<String> = present.iter().map(|t| (*t as i8).to_string()).collect();
    Array {
        field: Field {
            format: format!("+ud:{}", codes.join(",")),
            name: name.to_owned(),
            metadata: None,
            nullable: true,
            children: children.iter().map(|c| c.field.clone()).collect(),
        },
        data: Data {
            length: values.len(),
            null_count: 0,
            buffers: vec![Some(Buffer::from_bytes(&type_ids)), Some(Buffer::from_bytes(&offsets))],
            children: children.into_iter().map(|c| c.data).collect(),
        },
    }
}

/// A struct array of columns of one length (a record batch).
pub fn struct_array(name: &str, columns: Vec<Array>) -> Array {
    let length = columns.first().map_or(0, Array::len);
    assert!(columns.iter().all(|c| c.len() == length), "the columns of a batch have one length");
    let (fields, data): (Vec<Field>, Vec<Data>) = columns.into_iter().map(|c| (c.field, c.data)).unzip();
    Array {
        field: Field {
            format: "+s".to_owned(),
            name: name.to_owned(),
            metadata: None,
            nullable: false,
            children: fields,
        },
        data: Data { length, null_count: 0, buffers: vec![None], children: data },
    }
}

// ------------------------------------------------------------------------------ the C data interface

/// ArrowSchema, as the C data interface declares it.
#[repr(C)]
pub struct ArrowSchema {
    pub format: *const c_char,
    pub name: *const c_char,
    pub metadata: *const c_char,
    pub flags: i64,
    pub n_children: i64,
    pub children: *mut *mut ArrowSchema,
    pub dictionary: *mut ArrowSchema,
    pub release: Option<unsafe extern "C" fn(*mut ArrowSchema)>,
    pub private_data: *mut c_void,
}

/// ArrowArray, as the C data interface declares it.
#[repr(C)]
pub struct ArrowArray {
    pub length: i64,
    pub null_count: i64,
    pub offset: i64,
    pub n_buffers: i64,
    pub n_children: i64,
    pub buffers: *mut *const c_void,
    pub children: *mut *mut ArrowArray,
    pub dictionary: *mut ArrowArray,
    pub release: Option<unsafe extern "C" fn(*mut ArrowArray)>,
    pub private_data: *mut c_void,
}

/// ArrowArrayStream, as the C stream interface declares it.
#[repr(C)]
pub struct ArrowArrayStream {
    pub get_schema: Option<unsafe extern "C" fn(*mut ArrowArrayStream, *mut ArrowSchema) -> i32>,
    pub get_next: Option<unsafe extern "C" fn(*mut ArrowArrayStream, *mut ArrowArray) -> i32>,
    pub get_last_error: Option<unsafe extern "C" fn(*mut ArrowArrayStream) -> *const c_char>,
    pub release: Option<unsafe extern "C" fn(*mut ArrowArrayStream)>,
    pub private_data: *mut c_void,
}

/// ARROW_FLAG_NULLABLE.
const NULLABLE: i64 = 2;

struct SchemaPrivate {
    _format: CString,
    _name: CString,
    _metadata: Option<Vec<u8>>,
    children: Vec<*mut ArrowSchema>,
}

unsafe extern "C" fn release_schema(schema: *mut ArrowSchema) {
    if schema.is_null() || (*schema).release.is_none() {
        return;
    }
    let private = Box::from_raw((*schema).private_data.cast::<SchemaPrivate>());
    for child in private.children {
        if let Some(release) = (*child).release {
            release(child);
        }
        drop(Box::from_raw(child));
    }
    (*schema).release = None;
}

fn c_string(text: &str) -> CString {
    CString::new(text.replace('\0', "")).unwrap_or_default()
}

/// The schema of a field, exported (its release frees what it holds).
pub fn export_schema(field: &Field) -> ArrowSchema {
    let format = c_string(&field.format);
    let name = c_string(&field.name);
    let metadata = field.metadata.clone();
    let mut children: Vec<*mut ArrowSchema> =
        field.children.iter().map(|child| Box::into_raw(Box::new(export_schema(child)))).collect();
    let schema = ArrowSchema {
        format: format.as_ptr(),
        name: name.as_ptr(),
        metadata: metadata.as_ref().map_or(std::ptr::null(), |m| m.as_ptr().cast()),
        flags: if field.nullable { NULLABLE } else { 0 },
        n_children: children.len() as i64,
        children: if children.is_empty() { std::ptr::null_mut() } else { children.as_mut_ptr() },
        dictionary: std::ptr::null_mut(),
        release: Some(release_schema),
        private_data: std::ptr::null_mut(),
    };
    let private = Box::new(SchemaPrivate { _format: format, _name: name, _metadata: metadata, children });
    ArrowSchema { private_data: Box::into_raw(private).cast(), ..schema }
}

struct ArrayPrivate {
    _buffers: Vec<Option<Buffer>>,
    _pointers: Vec<*const c_void>,
    children: Vec<*mut ArrowArray>,
}

unsafe extern "C" fn release_array(array: *mut ArrowArray) {
    if array.is_null() || (*array).release.is_none() {
        return;
    }
    let private = Box::from_raw((*array).private_data.cast::<ArrayPrivate>());
    for child in private.children {
        if let Some(release) = (*child).release {
            release(child);
        }
        drop(Box::from_raw(child));
    }
    (*array).release = None;
}

/// An array's data, exported (its release frees the buffers).
pub fn export_data(data: Data) -> ArrowArray {
    let mut pointers: Vec<*const c_void> = data
        .buffers
        .iter()
        .map(|b| b.as_ref().map_or(std::ptr::null(), |b| b.words.as_ptr().cast()))
        .collect();
    let mut children: Vec<*mut ArrowArray> =
        data.children.into_iter().map(|child| Box::into_raw(Box::new(export_data(child)))).collect();
    let array = ArrowArray {
        length: data.length as i64,
        null_count: data.null_count as i64,
        offset: 0,
        n_buffers: pointers.len() as i64,
        n_children: children.len() as i64,
        buffers: if pointers.is_empty() { std::ptr::null_mut() } else { pointers.as_mut_ptr() },
        children: if children.is_empty() { std::ptr::null_mut() } else { children.as_mut_ptr() },
        dictionary: std::ptr::null_mut(),
        release: Some(release_array),
        private_data: std::ptr::null_mut(),
    };
    let private = Box::new(ArrayPrivate { _buffers: data.buffers, _pointers: pointers, children });
    ArrowArray { private_data: Box::into_raw(private).cast(), ..array }
}

struct StreamPrivate {
    field: Field,
    batch: Option<Data>,
}

unsafe extern "C" fn stream_schema(stream: *mut ArrowArrayStream, out: *mut ArrowSchema) -> i32 {
    let private = &*(*stream).private_data.cast::<StreamPrivate>();
    out.write(export_schema(&private.field));
    0
}

unsafe extern "C" fn stream_next(stream: *mut ArrowArrayStream, out: *mut ArrowArray) -> i32 {
    let private = &mut *(*stream).private_data.cast::<StreamPrivate>();
    match private.batch.take() {
        Some(data) => out.write(export_data(data)),
        // the end of the stream: a released array
        None => out.write(ArrowArray {
            length: 0,
            null_count: 0,
            offset: 0,
            n_buffers: 0,
            n_children: 0,
            buffers: std::ptr::null_mut(),
            children: std::ptr::null_mut(),
            dictionary: std::ptr::null_mut(),
            release: None,
            private_data: std::ptr::null_mut(),
        }),
    }
    0
}

unsafe extern "C" fn stream_error(_stream: *mut ArrowArrayStream) -> *const c_char {
    std::ptr::null()
}

unsafe extern "C" fn release_stream(stream: *mut ArrowArrayStream) {
    if stream.is_null() || (*stream).release.is_none() {
        return;
    }
    drop(Box::from_raw((*stream).private_data.cast::<StreamPrivate>()));
    (*stream).release = None;
}

/// A stream of one batch (a struct array), exported.
pub fn export_stream(batch: Array) -> ArrowArrayStream {
    let private = Box::new(StreamPrivate { field: batch.field, batch: Some(batch.data) });
    ArrowArrayStream {
        get_schema: Some(stream_schema),
        get_next: Some(stream_next),
        get_last_error: Some(stream_error),
        release: Some(release_stream),
        private_data: Box::into_raw(private).cast(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_are_spelt_as_python_spells_them() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (1.5, "1.5"),
            (0.1, "0.1"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (123456789012345.0, "123456789012345.0"),
            (1234567890123456.0, "1234567890123456.0"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.5e-7, "1.5e-07"),
            (-2.25, "-2.25"),
            (f64::MAX, "1.7976931348623157e+308"),
            (5e-324, "5e-324"),
        ];
        for (f, want) in cases {
            let mut got = String::new();
            py_float_repr(*f, &mut got);
            assert_eq!(&got, want, "{f:e}");
        }
    }

    #[test]
    fn integers_are_spelt_as_format_spells_them() {
        for i in [0, 1, -1, 9, 10, -10, 12345, i64::MAX, i64::MIN, i64::MIN + 1, 1 << 53, -(1 << 53)] {
            let mut got = String::new();
            push_int(i, &mut got);
            assert_eq!(got, format!("{i}"));
        }
    }

    #[test]
    fn a_column_of_one_kind_is_that_type_and_mixed_kinds_a_dense_union() {
        let one = path_array("n", &[Value::Int(1), Value::Null, Value::Int(3)]);
        assert_eq!((one.field.format.as_str(), one.data.null_count), ("l", 1));
        let mixed = path_array("n", &[Value::Int(1), Value::Str("a".into()), Value::Null, Value::Int(2)]);
        assert_eq!(mixed.field.format, "+ud:0,2,4");
        assert_eq!(mixed.data.children.iter().map(|c| c.length).collect::<Vec<_>>(), [1, 2, 1]);
        assert_eq!(mixed.data.buffers[0].as_ref().map(Buffer::bytes), Some(&[2u8, 4, 0, 2][..]));
        let none = path_array("n", &[Value::Null, Value::Null]);
        assert_eq!(none.field.format, "n");
    }

    #[test]
    fn exported_arrays_release_what_they_hold() {
        let batch = struct_array(
            "page",
            vec![
                utf8_array("label", [Some("zstd>json"), None]),
                path_array("n", &[Value::Int(1), Value::Float(2.5)]),
            ],
        );
        let mut schema = export_schema(&batch.field);
        let mut array = export_data(batch.data);
        assert_eq!((array.length, array.n_children, schema.n_children), (2, 2, 2));
        unsafe {
            (schema.release.expect("live"))(&mut schema);
            (array.release.expect("live"))(&mut array);
        }
        assert!(schema.release.is_none() && array.release.is_none());
    }
}
