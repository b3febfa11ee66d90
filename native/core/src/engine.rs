//! One stored value, walked as payload/unwrap.py walks it in auto mode (outer_layer →
//! registry.decode_auto, contained → _payload, read_payload → _text_or_binary / stored_text /
//! _structured), with the detection order, dispatch table and thresholds the Python registry
//! gave at configure time. Any doubt: the value is handed back (Err(HandBack)).

use crate::common::{clip, DErr, Decoded};
use crate::formats::{self, Env, Fmt};
use crate::tree::{child, has_ext, keys_of_node, Node, PathRead, Step, Str};
use crate::{cbor, json, msgpack, text};

/// The record formats auto-detection knows (payload/formats, their `auto` FORMATs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record {
    Avro,
    Smile,
    Pickle,
    Bson,
    Msgpack,
    Cbor,
    Thrift,
}

impl Record {
    /// Whether the core reads the format's values itself (the others are recognised by their
    /// first bytes and handed back).
    pub fn read_here(self) -> bool {
        matches!(self, Record::Msgpack | Record::Cbor)
    }

    pub fn by_name(name: &str) -> Option<Record> {
        Some(match name {
            "avro" => Record::Avro,
            "smile" => Record::Smile,
            "pickle" => Record::Pickle,
            "bson" => Record::Bson,
            "msgpack" => Record::Msgpack,
            "cbor" => Record::Cbor,
            "thrift" => Record::Thrift,
            _ => return None,
        })
    }
}

/// A container of the registry's tables: one the core reads (its format and grade), or one it
/// lacks (a label it does not know, or a grade it was not written for): a value whose detection
/// reaches it is handed back, and only that value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    Known(Fmt, char),
    Lacked,
}

/// What the Python registry and payload modules hold as data, given at configure time.
pub struct Config {
    pub dispatch: Vec<Vec<Entry>>,
    /// The orders of the signature-less containers (None: one the core lacks).
    pub early: Vec<Option<Fmt>>,
    pub trial: Vec<Option<Fmt>>,
    pub trial_zero: Vec<Option<Fmt>>,
    pub min_auto_length: usize,
    pub trial_min_cap: usize,
    pub walk_depth: usize,
    pub min_text_length: usize,
    pub short_text: usize,
    pub min_structured_length: usize,
    pub default_cap: usize,
    pub max_nodes: usize,
    pub min_nodes: usize,
    pub tree_depth: usize,
    pub msgpack_min_length: usize,
    pub stream_magics: Vec<Vec<u8>>,
    /// The record formats auto-detection tries, in order (None: one the core lacks).
    pub records: Vec<Option<Record>>,
    pub env: Env,
    /// The containers and record formats the registry names that the core lacks (their values
    /// are handed back), sorted.
    pub lacked: Vec<String>,
}

impl Config {
    /// budget.Budget.for_cap(cap).nodes.
    pub fn nodes_for(&self, cap: usize) -> usize {
        if cap == self.default_cap {
            return self.max_nodes;
        }
        let scaled = (self.max_nodes as u128 * cap as u128 / self.default_cap as u128) as usize;
        scaled.max(self.min_nodes)
    }

    fn stream(&self, data: &[u8]) -> bool {
        self.stream_magics.iter().any(|m| data.starts_with(m))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Text = 0,
    Record = 1,
    Binary = 2,
    NoFormat = 3,
    Failed = 4,
    HandedBack = 5,
}

/// Where a value's payload bytes are: the stored value itself, or decoded bytes.
pub enum Payload {
    Stored,
    Owned(Vec<u8>),
}

/// Layers a label holds at the most (configure refuses a deeper walk).
pub const MAX_LAYERS: usize = 8;

/// A value's label, kept as its parts until the page's answer spells it (once per label).
#[derive(Clone, Copy, Hash)]
#[allow(clippy::derived_hash_with_manual_eq)] // eq below is the derived one, spelt faster
pub struct Label {
    layers: [Option<Fmt>; MAX_LAYERS],
    reading: &'static str,
}

/// Equal parts (as the derived one; Hash agrees). Readers compare a value's label with the page's
/// labels so far once a value (STATS' chains, DESCRIBE's encodings, spelt labels): the readings
/// are a few literals, mostly the very same one, and are compared here without the call to
/// memcmp the derived `str` equality makes even for "" (a tenth of STATS' page call).
impl PartialEq for Label {
    #[inline]
    fn eq(&self, other: &Label) -> bool {
        let (a, b) = (self.reading.as_bytes(), other.reading.as_bytes());
        self.layers == other.layers
            && a.len() == b.len()
            && (std::ptr::eq(a.as_ptr(), b.as_ptr()) || a.iter().zip(b).all(|(x, y)| x == y))
    }
}

impl Eq for Label {}

impl Label {
    pub fn new(chain: &[Fmt], reading: &'static str) -> Label {
        let mut layers = [None; MAX_LAYERS];
        for (slot, fmt) in layers.iter_mut().zip(chain) {
            *slot = Some(*fmt);
        }
        Label { layers, reading }
    }

    /// The same layers without the payload's reading (COMPRESSION STATS' chain).
    pub fn layers_only(&self) -> Label {
        Label { layers: self.layers, reading: "" }
    }

    /// The payload's reading ("json", "text", a record's format; "" for no known format).
    pub fn reading(&self) -> &'static str {
        self.reading
    }

    /// No layer was peeled: the value reads as it is stored.
    pub fn is_bare(&self) -> bool {
        self.layers[0].is_none()
    }

    /// The containers' labels, outer first.
    pub fn chain(&self) -> Vec<&'static str> {
        self.layers.iter().flatten().map(|f| f.label()).collect()
    }

    /// The chain's labels and the reading joined by ">" ("" for no known format).
    pub fn spell(&self) -> String {
        let mut parts: Vec<&str> = self.layers.iter().flatten().map(|f| f.label()).collect();
        if !self.reading.is_empty() {
            parts.push(self.reading);
        }
        parts.join(">")
    }
}

/// What a page wants of each value beside its kind, label and sizes.
pub struct Want<'a> {
    pub paths: &'a [Vec<Step>],
    pub tree: bool,
    /// With `tree`, a text's JSON container is built too; false: a text's JSON is read as without
    /// `tree` (its label's reading says whether it is a JSON container, its paths read), its text
    /// alone kept (a file of text writes a payload from its text: held.rs), a record's tree built.
    pub text_tree: bool,
    /// With `tree` and no `text_tree`: a JSON container's whitespace runs outside strings are
    /// noted as its JSON is checked (Outcome.gaps: JSON Lines writes the text minified from
    /// them); false: not noted (CSV writes the text as it is).
    pub gaps: bool,
    /// With `tree` and no `text_tree`: a JSON container's text stands for its value (a file's
    /// typed columns are laid out from it, held.rs's Place::Text): checked as its tree would be
    /// read (a lone surrogate hands the value back) and, where it cannot be read in one pass (a
    /// key met twice in an object, a key with escapes), its tree built as with `text_tree`.
    pub text_values: bool,
    /// COMPRESSION STATS' measure: the containers only. A contained payload is not read (its
    /// kind is given as Binary, its label's reading "binary"): the measure never looks at it.
    pub measure: bool,
    /// A text's JSON is read (its label's reading, its tree, its paths); false: the text alone,
    /// its reading "text" JSON or not (a reader that needs neither: the display's cells).
    pub json: bool,
    /// A query's needles: a text none of whose needles can hold is not parsed (Outcome.rejected).
    pub needles: &'a [Needle],
}

/// What a condition on a path needs to find in a JSON text, verbatim: any of the strings (=, IN)
/// or all of them (LIKE's literal parts). A text where it cannot be found cannot meet the
/// condition, so its JSON need not be read.
pub struct Needle {
    pub any: bool,
    pub strings: Vec<Vec<u8>>,
}

impl Needle {
    /// Whether the text certainly cannot hold what the needle asks for. Exact: a JSON string
    /// spells its characters verbatim except those it escapes; with no `\\u` escape in the
    /// text, only a quote, a backslash, a slash and control characters can be escaped, and a
    /// needle holding none of those is found verbatim wherever a string holds it.
    pub fn rejects(&self, text: &[u8]) -> bool {
        if self.strings.is_empty()
            || self
                .strings
                .iter()
                .any(|s| s.iter().any(|&b| b == b'"' || b == b'\\' || b == b'/' || b < 0x20))
            || memchr::memmem::find(text, b"\\u").is_some()
        {
            return false;
        }
        let found = |s: &Vec<u8>| memchr::memmem::find(text, s).is_some();
        if self.any {
            !self.strings.iter().any(found)
        } else {
            !self.strings.iter().all(found)
        }
    }
}

pub struct Outcome {
    pub kind: Kind,
    pub label: Label,
    pub stored: usize,
    pub decoded: usize,
    pub cut: bool,
    pub payload: Payload,
    /// Text: the text is payload[..text_len] (as_text may drop a character the cap cut).
    pub text_len: usize,
    /// With want.tree: a text's JSON container, if any; a record.
    pub tree: Option<Node>,
    /// A readable value (text or record, not cut): what each path reads in it.
    pub reads: Vec<PathRead>,
    /// A text a needle rejected (Want.needles): its JSON was not read, no path was.
    pub rejected: bool,
    /// A JSON container's text read for a file of text (want.tree and want.gaps, without
    /// text_tree): its whitespace outside strings, as json::json_check found it (held.rs writes the text
    /// without those runs as its minified spelling); None elsewhere.
    pub gaps: Option<Vec<u32>>,
    /// A JSON container's text read for its value (want.text_values): each value's mark, where
    /// held.rs reads it in place (None where its tree was built instead, or not asked).
    pub marks: Option<Vec<json::Mark>>,
    /// A value handed back after its containers were peeled (kind HandedBack, its record format
    /// one only Python reads): each layer's output size, in the chain's order (the label's
    /// layers), its payload the last one's output. Empty elsewhere.
    pub sizes: Vec<usize>,
}

impl Outcome {
    pub fn bytes<'a>(&'a self, stored: &'a [u8]) -> &'a [u8] {
        match &self.payload {
            Payload::Stored => stored,
            Payload::Owned(data) => data,
        }
    }

    fn plain(kind: Kind, label: Label, stored: usize) -> Outcome {
        Outcome {
            kind,
            label,
            stored,
            decoded: stored,
            cut: false,
            payload: Payload::Stored,
            text_len: 0,
            tree: None,
            reads: Vec::new(),
            rejected: false,
            gaps: None,
            marks: None,
            sizes: Vec::new(),
        }
    }
}

enum Auto {
    Nothing,
    Failed(Fmt),
    Found(Fmt, Decoded),
}

/// registry.decode_auto (the value is at least min_auto_length long).
fn decode_auto(cfg: &Config, data: &[u8], cap: usize) -> Result<Auto, DErr> {
    let env = &cfg.env;
    let trial_cap = cap.max(cfg.trial_min_cap);
    for &entry in &cfg.dispatch[data[0] as usize] {
        let Entry::Known(fmt, grade) = entry else { return Err(DErr::HandBack) };
        if !formats::matches(fmt, data) {
            continue;
        }
        if grade == 'A' {
            return match formats::decode(fmt, data, cap, env) {
                Ok(dec) => Ok(Auto::Found(fmt, dec)),
                Err(DErr::HandBack) => Err(DErr::HandBack),
                Err(_) => Ok(Auto::Failed(fmt)),
            };
        }
        match formats::trial(fmt, data, trial_cap, env) {
            Ok(Some(dec)) => return Ok(Auto::Found(fmt, clip(dec, cap))),
            Ok(None) | Err(DErr::Fail) => continue,
            Err(DErr::Undecodable) => return Ok(Auto::Failed(fmt)),
            Err(DErr::HandBack) => return Err(DErr::HandBack),
        }
    }
    for &fmt in &cfg.early {
        let Some(fmt) = fmt else { return Err(DErr::HandBack) };
        if formats::early(fmt, data) {
            match formats::trial(fmt, data, trial_cap, env) {
                Ok(Some(dec)) => return Ok(Auto::Found(fmt, clip(dec, cap))),
                Ok(None) => {}
                Err(DErr::Undecodable) => return Ok(Auto::Failed(fmt)),
                Err(_) => return Err(DErr::HandBack),
            }
        }
    }
    let order = if data[0] == 0 { &cfg.trial_zero } else { &cfg.trial };
    for &fmt in order {
        let Some(fmt) = fmt else { return Err(DErr::HandBack) };
        if formats::ruled_out(fmt, data) {
            continue;
        }
        match formats::trial(fmt, data, trial_cap, env) {
            Ok(Some(dec)) => return Ok(Auto::Found(fmt, clip(dec, cap))),
            Ok(None) | Err(DErr::Fail) => continue,
            Err(DErr::Undecodable) => return Ok(Auto::Failed(fmt)),
            Err(DErr::HandBack) => return Err(DErr::HandBack),
        }
    }
    Ok(Auto::Nothing)
}

/// registry.detect(data, signatures_only=True): the format of a nested layer.
fn detect_signature(cfg: &Config, data: &[u8]) -> Result<Option<Fmt>, DErr> {
    if data.len() < cfg.min_auto_length {
        return Ok(None);
    }
    for &entry in &cfg.dispatch[data[0] as usize] {
        let Entry::Known(fmt, grade) = entry else { return Err(DErr::HandBack) };
        if grade == 'A' {
            if formats::matches(fmt, data) {
                return Ok(Some(fmt));
            }
            continue;
        }
        if grade == 'B' && !formats::matches(fmt, data) {
            continue;
        }
        match formats::trial(fmt, data, cfg.default_cap, &cfg.env) {
            Ok(Some(_)) | Err(DErr::Undecodable) => return Ok(Some(fmt)),
            Err(DErr::HandBack) => return Err(DErr::HandBack),
            Ok(None) | Err(DErr::Fail) => continue,
        }
    }
    Ok(None)
}

/// formats.detect: the first auto-detected record format whose reader takes all of
/// payload[start..end]. Formats read only on the Python side are ruled out by their cheap
/// look (`maybe`), or the value is handed back.
fn record(
    cfg: &Config,
    payload: &[u8],
    start: usize,
    end: usize,
    nodes: usize,
) -> Result<Option<(Node, &'static str)>, DErr> {
    let data = &payload[start..end];
    let n = data.len();
    for &fmt in &cfg.records {
        let Some(fmt) = fmt else { return Err(DErr::HandBack) };
        match fmt {
            Record::Avro => {
                if data.starts_with(b"Obj\x01") {
                    return Err(DErr::HandBack);
                }
            }
            Record::Smile => {
                if data.starts_with(b":)\n") {
                    return Err(DErr::HandBack);
                }
            }
            Record::Pickle => {
                if n >= 3 && data[0] == 0x80 && (2..=5).contains(&data[1]) && data[n - 1] == b'.' {
                    return Err(DErr::HandBack);
                }
            }
            Record::Bson => {
                if n >= 5 && data[n - 1] == 0 {
                    let declared = i32::from_le_bytes([data[0], data[1], data[2], data[3]]) as i64;
                    if declared == n as i64 {
                        return Err(DErr::HandBack);
                    }
                }
            }
            Record::Msgpack => {
                let lead = data[0];
                if n >= cfg.msgpack_min_length
                    && ((0x80..0xa0).contains(&lead) || (0xdc..=0xdf).contains(&lead))
                {
                    if let Some(tree) = msgpack::detect(payload, start, end, nodes, &cfg.env.printable)? {
                        return Ok(Some((tree, "msgpack")));
                    }
                }
            }
            Record::Thrift => {
                // thrift._maybe (a struct read only on the Python side): a field's first byte,
                // the STOP byte last, MIN_LENGTH (8) bytes at least
                if n >= 8 && data[n - 1] == 0 && thrift_lead(data[0]) {
                    return Err(DErr::HandBack);
                }
            }
            Record::Cbor => {
                if data.starts_with(cbor::SELF_DESCRIBE) || (n >= 8 && (0x80..0xc0).contains(&data[0])) {
                    if let Some(tree) =
                        cbor::detect(payload, start, end, nodes, cfg.tree_depth, &cfg.env.printable)?
                    {
                        return Ok(Some((tree, "cbor")));
                    }
                }
            }
        }
    }
    Ok(None)
}

/// thrift._LEADS: a binary protocol field's type (2, 3, 4, 6, 8, 10-16), a compact protocol
/// field header (a type 1-13, after a field id delta of 1-15 in the high nibble, or alone).
fn thrift_lead(b: u8) -> bool {
    matches!(b, 2 | 3 | 4 | 6 | 8 | 10..=16) || (1..=13).contains(&(b & 0x0F))
}

/// What the paths read in a tree built here.
fn reads_in(tree: &Node, paths: &[Vec<Step>], src: &[u8]) -> Vec<PathRead> {
    paths
        .iter()
        .map(|steps| {
            let mut node = tree;
            for (depth, step) in steps.iter().enumerate() {
                match child(node, step, src) {
                    Some(next) => node = next,
                    None => return PathRead::Missing { depth, keys: keys_of_node(node, src, 200) },
                }
            }
            PathRead::Node(node.clone())
        })
        .collect()
}

/// A text reading of payload[..text_len]: json or text, its JSON container (want.tree and
/// want.text_tree) and the
/// paths' reads (a text that is no JSON container is its own tree: a str).
#[allow(clippy::too_many_arguments)]
fn text_outcome(
    layers: &[Fmt],
    payload: Payload,
    bytes: &[u8],
    text_len: usize,
    stored: usize,
    cut: bool,
    nodes: usize,
    want: &Want,
) -> Result<Outcome, DErr> {
    if want.measure || !want.json {
        // COMPRESSION STATS counts a text as text, JSON or not: its JSON is not read (nor by a
        // reader that reads the text alone)
        return Ok(Outcome {
            kind: Kind::Text,
            label: Label::new(layers, "text"),
            stored,
            decoded: bytes.len(),
            cut,
            payload,
            text_len,
            tree: None,
            reads: Vec::new(),
            rejected: false,
            gaps: None,
            marks: None,
            sizes: Vec::new(),
        });
    }
    if !cut && want.needles.iter().any(|needle| needle.rejects(&bytes[..text_len])) {
        return Ok(Outcome {
            kind: Kind::Text,
            label: Label::new(layers, "text"),
            stored,
            decoded: bytes.len(),
            cut,
            payload,
            text_len,
            tree: None,
            reads: Vec::new(),
            rejected: true,
            gaps: None,
            marks: None,
            sizes: Vec::new(),
        });
    }
    let (json, tree, mut reads, gaps, marks) = if want.tree && want.text_tree {
        let tree = json::json_container(bytes, 0, text_len, nodes)?;
        let reads = match (&tree, cut) {
            (Some(tree), false) => reads_in(tree, want.paths, bytes),
            _ => Vec::new(),
        };
        (tree.is_some(), tree, reads, None, None)
    } else {
        // JSON Lines (want.tree and want.gaps, no text tree) writes a JSON text minified: its
        // whitespace outside strings noted by the validation's walk; a typed file's columns are
        // laid out from the text (want.text_values), checked for that as it is validated
        let paths = if cut { &[] } else { want.paths };
        let check = json::Check {
            gaps: want.tree && want.gaps && !cut,
            values: want.tree && want.text_values && !cut,
        };
        match json::json_check(bytes, 0, text_len, nodes, paths, check)? {
            Some(checked) if checked.tree_needed => {
                (true, json::json_container(bytes, 0, text_len, nodes)?, checked.reads, None, None)
            }
            Some(checked) => (true, None, checked.reads, checked.gaps, checked.marks),
            None => (false, None, Vec::new(), None, None),
        }
    };
    if !json && !cut {
        let text = Node::Str(Str::Span(0, text_len as u32));
        reads = want
            .paths
            .iter()
            .map(|steps| {
                if steps.is_empty() {
                    PathRead::Node(text.clone())
                } else {
                    PathRead::Missing { depth: 0, keys: Vec::new() }
                }
            })
            .collect();
    }
    if cut {
        reads.clear();
    }
    Ok(Outcome {
        kind: Kind::Text,
        label: Label::new(layers, if json { "json" } else { "text" }),
        stored,
        decoded: bytes.len(),
        cut,
        payload,
        text_len,
        tree,
        reads,
        rejected: false,
        gaps,
        marks,
        sizes: Vec::new(),
    })
}

#[allow(clippy::too_many_arguments)]
fn record_outcome(
    layers: &[Fmt],
    payload: Payload,
    bytes: &[u8],
    tree: Node,
    name: &'static str,
    stored: usize,
    decoded: usize,
    want: &Want,
) -> Result<Outcome, DErr> {
    if has_ext(&tree) {
        return Err(DErr::HandBack); // a Tagged value: built by the Python side
    }
    let reads = reads_in(&tree, want.paths, bytes);
    Ok(Outcome {
        kind: Kind::Record,
        label: Label::new(layers, name),
        stored,
        decoded,
        cut: false,
        payload,
        text_len: 0,
        tree: if want.tree { Some(tree) } else { None },
        reads,
        rejected: false,
        gaps: None,
        marks: None,
        sizes: Vec::new(),
    })
}

/// read_payload of a value no container was found around (RAW with a quiet reason).
fn uncontained(cfg: &Config, value: &[u8], nodes: usize, want: &Want) -> Result<Outcome, DErr> {
    let n = value.len();
    if let Some(found) = text::stored_text(value, cfg.min_text_length, cfg.short_text)? {
        return text_outcome(&[], Payload::Stored, value, found.len, n, false, nodes, want);
    }
    if n >= cfg.min_structured_length {
        if let Some((tree, name)) = record(cfg, value, 0, n, nodes)? {
            return record_outcome(&[], Payload::Stored, value, tree, name, n, n, want);
        }
    }
    Ok(Outcome::plain(Kind::NoFormat, Label::new(&[], ""), n))
}

/// A value handed back with its containers peeled (not cut): the chain, each layer's output size
/// and the last one's output, for the Python engine to read the payload from (payload.engine).
fn peeled(layers: &[Fmt], sizes: Vec<usize>, data: Vec<u8>, stored: usize) -> Outcome {
    Outcome {
        decoded: data.len(),
        payload: Payload::Owned(data),
        sizes,
        ..Outcome::plain(Kind::HandedBack, Label::new(layers, ""), stored)
    }
}

/// One value, as unwrap(value, "auto", cap) reads it.
pub fn decode_value(cfg: &Config, value: &[u8], cap: usize, want: &Want) -> Result<Outcome, DErr> {
    let n = value.len();
    if n > (u32::MAX >> 1) as usize || cap > (u32::MAX >> 1) as usize {
        return Err(DErr::HandBack); // spans are 32-bit
    }
    let nodes = cfg.nodes_for(cap);
    if n < cfg.min_auto_length {
        if n == 0 {
            return Ok(Outcome::plain(Kind::NoFormat, Label::new(&[], ""), 0));
        }
        return uncontained(cfg, value, nodes, want);
    }
    let (fmt, dec) = match decode_auto(cfg, value, cap)? {
        Auto::Nothing => {
            if cfg.stream(value) {
                return Err(DErr::HandBack); // a serialization stream stored as is
            }
            return uncontained(cfg, value, nodes, want);
        }
        Auto::Failed(fmt) => return Ok(Outcome::plain(Kind::Failed, Label::new(&[fmt], ""), n)),
        Auto::Found(fmt, dec) => (fmt, dec),
    };
    // contained + _payload: the layers inside, while depth and budget allow
    let mut layers = vec![fmt];
    let mut sizes = vec![dec.data.len()];
    let mut cut = dec.truncated;
    let mut data = dec.data;
    let mut budget = cap as i64 - data.len() as i64;
    while layers.len() < cfg.walk_depth {
        if cfg.stream(&data) {
            return Err(DErr::HandBack);
        }
        let Some(inner) = detect_signature(cfg, &data)? else { break };
        if budget <= 0 {
            return Err(DErr::HandBack); // "inner layer not decoded: output cap reached"
        }
        match formats::decode(inner, &data, budget as usize, &cfg.env) {
            Ok(next) => {
                layers.push(inner);
                sizes.push(next.data.len());
                cut |= next.truncated;
                budget -= next.data.len() as i64;
                data = next.data;
            }
            Err(_) => return Err(DErr::HandBack), // a reason on the view
        }
    }
    // _text_or_binary
    let size = data.len();
    if want.measure {
        return Ok(Outcome {
            kind: Kind::Binary,
            label: Label::new(&layers, "binary"),
            stored: n,
            decoded: size,
            cut,
            payload: Payload::Stored,
            text_len: 0,
            tree: None,
            reads: Vec::new(),
            rejected: false,
            gaps: None,
            marks: None,
            sizes: Vec::new(),
        });
    }
    if let Some(found) = text::as_text(&data, cut) {
        let outcome = text_outcome(&layers, Payload::Stored, &data, found.len, n, cut, nodes, want)?;
        return Ok(Outcome { payload: Payload::Owned(data), ..outcome });
    }
    if !cut && size >= cfg.min_structured_length {
        let found = record(cfg, &data, 0, size, nodes).and_then(|found| match found {
            Some((tree, name)) => {
                record_outcome(&layers, Payload::Stored, &data, tree, name, n, size, want).map(Some)
            }
            None => Ok(None),
        });
        match found {
            Ok(Some(outcome)) => return Ok(Outcome { payload: Payload::Owned(data), ..outcome }),
            Ok(None) => {}
            // a record format only Python reads (or a record it builds): handed back with what was
            // decompressed, so that Python reads the payload and never the stored bytes again
            Err(DErr::HandBack) => return Ok(peeled(&layers, sizes, data, n)),
            Err(err) => return Err(err),
        }
    }
    Ok(Outcome {
        decoded: size,
        cut,
        payload: Payload::Owned(data),
        ..Outcome::plain(Kind::Binary, Label::new(&layers, "binary"), n)
    })
}

#[cfg(test)]
mod tests {
    use std::hash::BuildHasher;

    use super::{Fmt, Label};

    #[test]
    fn labels_are_equal_by_their_parts_wherever_their_reading_is() {
        let text: &'static str = Box::leak(String::from("text").into_boxed_str());
        assert!(Label::new(&[Fmt::Zstd], "text") == Label::new(&[Fmt::Zstd], text));
        assert!(Label::new(&[Fmt::Zstd], "text") != Label::new(&[Fmt::Zstd], "json"));
        assert!(Label::new(&[Fmt::Zstd], "") != Label::new(&[Fmt::Gzip], ""));
        assert!(Label::new(&[Fmt::Zstd], "") != Label::new(&[Fmt::Zstd, Fmt::Gzip], ""));
        assert!(Label::new(&[], "") != Label::new(&[], "text"));
        let hasher = std::collections::hash_map::RandomState::new();
        let (a, b) = (Label::new(&[Fmt::Zstd], "text"), Label::new(&[Fmt::Zstd], text));
        assert_eq!(hasher.hash_one(a), hasher.hash_one(b));
    }
}
