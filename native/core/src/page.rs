//! The engine's page read: a page of one column's values decoded (engine.rs, each value at its
//! boundary), what each keeps for the answer bounded over the page, and per path whether some
//! value had it and the deepest miss before the first that had it (payload.pages: the engine's
//! Page.found and Page.missed).

use std::collections::HashSet;

use crate::columns::{bool_array, int64_array, path_array, struct_array, utf8_array, value_of, Array, Value};
use crate::common::DErr;
use crate::engine::{decode_value, Config, Kind, Outcome, Payload, Want};
use crate::tree::{PathRead, Step};

/// Decoded bytes a page keeps for its answer at the most (then its other values go back): a
/// page of bombs must not hold a hundred outputs at the cap at once (the Python engine holds one).
const RETAINED: usize = 256 << 20;

/// payload.pages.MISS_KEYS: a mapping's string keys kept where a path stopped.
pub const MISS_KEYS: usize = 200;

/// What a page asks of each value beside its kind, label, sizes and cut.
pub struct PageWant<'a> {
    pub paths: &'a [Vec<Step>],
    /// A text value's text.
    pub text: bool,
    /// A text's JSON container or a record's tree.
    pub tree: bool,
    /// With `tree`, a text's JSON container built too (engine::Want.text_tree); false: a file of
    /// text, which writes a text's payload from its text (its record's tree still built).
    pub text_tree: bool,
    /// Without `text_tree`: a JSON text's whitespace runs noted as it is checked (engine::Want.gaps,
    /// JSON Lines writes it minified from them); false: not noted.
    pub gaps: bool,
    /// Without `text_tree`: a JSON text stands for its value, its tree built where it cannot be
    /// read in one pass (engine::Want.text_values: a typed file's columns are laid out from it).
    pub text_values: bool,
    /// COMPRESSION STATS' measure: the containers only (engine::Want.measure).
    pub measure: bool,
    /// A text's JSON read (engine::Want.json); false for a reader of texts alone.
    pub json: bool,
}

/// The deepest miss of a path over a page (depth, the step's index, the keys there).
pub struct Missed {
    pub depth: usize,
    pub step: usize,
    pub keys: Vec<String>,
    seen: HashSet<String>,
}

/// Per path: whether some value had it, and the deepest miss before the first that did.
pub struct PathSummary {
    pub found: bool,
    pub miss: Option<Missed>,
}

/// A page's answer: per value its outcome (None: handed back to the Python engine), per path
/// its summary, and the values handed back with their containers peeled (their index and
/// outcome: kind HandedBack, the chain in its label, each layer's size, the payload).
pub struct PageAnswer {
    pub outcomes: Vec<Option<Outcome>>,
    pub paths: Vec<PathSummary>,
    pub peeled: Vec<(usize, Outcome)>,
}

impl PageAnswer {
    /// The indexes of the values handed back.
    pub fn handed_back(&self) -> Vec<usize> {
        self.outcomes.iter().enumerate().filter(|(_, o)| o.is_none()).map(|(i, _)| i).collect()
    }
}

fn note(missed: &mut Option<Missed>, depth: usize, step: usize, keys: &[&str]) {
    match missed {
        Some(known) if depth < known.depth => {}
        Some(known) if depth == known.depth => {
            if known.keys.len() < MISS_KEYS {
                let room = MISS_KEYS - known.keys.len();
                for k in keys.iter().take(room) {
                    if known.seen.insert((*k).to_owned()) {
                        known.keys.push((*k).to_owned());
                    }
                }
            }
        }
        _ => {
            let mut fresh = Missed { depth, step, keys: Vec::new(), seen: HashSet::new() };
            for k in keys.iter().take(MISS_KEYS) {
                if fresh.seen.insert((*k).to_owned()) {
                    fresh.keys.push((*k).to_owned());
                }
            }
            *missed = Some(fresh);
        }
    }
}

/// One value at its boundary: its outcome, or None (handed back: the engine's doubt, a panic).
/// A value handed back with its containers peeled is an outcome of kind HandedBack.
pub fn decode_one(cfg: &Config, value: &[u8], cap: usize, want: &Want) -> Option<Outcome> {
    match crate::panics::guarded(|| decode_value(cfg, value, cap, want)) {
        Some(Ok(outcome)) => Some(outcome),
        Some(Err(DErr::HandBack)) | Some(Err(_)) | None => None,
    }
}

/// A page of one column's values (None: not a blob, handed back), as the engine's read_page
/// reads it. Nothing here touches Python: the caller releases the GIL around it.
pub fn decode_page(cfg: &Config, values: &[Option<&[u8]>], cap: usize, want: &PageWant) -> PageAnswer {
    let engine_want = Want {
        paths: want.paths,
        tree: want.tree && !want.measure,
        text_tree: want.text_tree,
        gaps: want.gaps,
        text_values: want.text_values,
        measure: want.measure,
        json: want.json,
        needles: &[],
    };
    let mut retained = 0usize;
    let mut peeled: Vec<(usize, Outcome)> = Vec::new();
    let outcomes: Vec<Option<Outcome>> = values
        .iter()
        .enumerate()
        .map(|(i, value)| {
            let value = (*value)?;
            if retained > RETAINED {
                return None;
            }
            let mut outcome = decode_one(cfg, value, cap, &engine_want)?;
            if outcome.kind == Kind::HandedBack {
                if let Payload::Owned(data) = &outcome.payload {
                    retained += data.len();
                }
                peeled.push((i, outcome));
                return None;
            }
            let needed = match outcome.kind {
                Kind::Text => want.text || want.tree || !outcome.reads.is_empty(),
                Kind::Record => want.tree || !outcome.reads.is_empty(),
                _ => false,
            };
            if !needed {
                outcome.payload = Payload::Stored; // nothing in the answer points into it
                outcome.text_len = 0;
            } else if let Payload::Owned(data) = &outcome.payload {
                retained += data.len();
            }
            Some(outcome)
        })
        .collect();
    let mut paths: Vec<PathSummary> =
        want.paths.iter().map(|_| PathSummary { found: false, miss: None }).collect();
    for (i, outcome) in outcomes.iter().enumerate() {
        let Some(outcome) = outcome else { continue };
        let src = outcome.bytes(values[i].unwrap_or(&[]));
        for (p, summary) in paths.iter_mut().enumerate() {
            match outcome.reads.get(p) {
                Some(PathRead::Node(_)) => summary.found = true,
                // noted only before the first value that had the path (as the engine's Page.missed)
                Some(PathRead::Missing { depth, keys }) if !summary.found => {
                    let keys: Vec<&str> = keys.iter().map(|k| k.get(src)).collect();
                    note(&mut summary.miss, *depth, *depth, &keys);
                }
                _ => {}
            }
        }
    }
    PageAnswer { outcomes, paths, peeled }
}

/// A text cut to at most `limit` characters (0: whole).
pub fn first_chars(text: &str, limit: usize) -> &str {
    if limit == 0 {
        return text;
    }
    match text.char_indices().nth(limit) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

/// A value's text (a TEXT outcome's text, else None) from its outcome and stored bytes.
pub fn text_of<'a>(outcome: &'a Outcome, stored: &'a [u8]) -> Option<&'a str> {
    if outcome.kind != Kind::Text {
        return None;
    }
    let src = outcome.bytes(stored);
    Some(std::str::from_utf8(&src[..outcome.text_len]).unwrap_or(""))
}

// ------------------------------------------------------------------------------ the page's columns

/// The view's kind of each engine kind code (payload.view.KINDS); a value handed back has none.
pub const KIND_NAMES: [&str; 5] = ["text", "record", "binary", "unknown", "failed"];

/// A value the core handed back, as the Python engine answered it (for the page's columns).
pub struct Filled {
    pub kind: Kind,
    pub label: String,
    pub decoded: usize,
    pub cut: bool,
    pub text: Option<String>,
    /// Per path, its value (Value::Null: missing, not read).
    pub values: Vec<Value>,
}

/// How a column of the page is typed: a fixed Arrow type, or by its values (a path's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Typed {
    Utf8,
    Int64,
    Bool,
    Path,
}

/// One column of the page's answer: its name, how it is typed, its values.
pub struct Column {
    pub name: String,
    pub typed: Typed,
    pub values: Vec<Value>,
}

impl Column {
    /// The column as an Arrow array.
    pub fn array(&self) -> Array {
        let values = &self.values;
        match self.typed {
            Typed::Utf8 => utf8_array(
                &self.name,
                values.iter().map(|v| if let Value::Str(s) = v { Some(s.as_str()) } else { None }),
            ),
            Typed::Int64 => int64_array(
                &self.name,
                values.iter().map(|v| if let Value::Int(i) = v { Some(*i) } else { None }),
            ),
            Typed::Bool => bool_array(
                &self.name,
                values.iter().map(|v| if let Value::Bool(b) = v { Some(*b) } else { None }),
            ),
            Typed::Path => path_array(&self.name, values),
        }
    }
}

/// The page's columns as one record batch (a struct array named "page").
pub fn batch(columns: &[Column]) -> Array {
    struct_array("page", columns.iter().map(Column::array).collect())
}

fn opt_str(text: Option<&str>) -> Value {
    text.map_or(Value::Null, |t| Value::Str(t.to_owned()))
}

/// The page's answer as columns: `kind` (the view's kind; null for a value handed back and not
/// filled), `label`, `stored`, `decoded`, `cut`, `text` (with `text`: a text value's text), then
/// a column per path named by `names` (columns.rs says how its values are typed). `filled[i]`:
/// the Python engine's answer for a value the core handed back.
pub fn page_columns(
    answer: &PageAnswer,
    values: &[Option<&[u8]>],
    names: &[String],
    text: bool,
    filled: &[Option<Filled>],
) -> Vec<Column> {
    let n = answer.outcomes.len();
    let fixed =
        |name: &str, typed: Typed| Column { name: name.to_owned(), typed, values: Vec::with_capacity(n) };
    let (mut kinds, mut labels, mut stored, mut decoded, mut cut, mut texts) = (
        fixed("kind", Typed::Utf8),
        fixed("label", Typed::Utf8),
        fixed("stored", Typed::Int64),
        fixed("decoded", Typed::Int64),
        fixed("cut", Typed::Bool),
        fixed("text", Typed::Utf8),
    );
    let mut paths: Vec<Column> = names.iter().map(|name| fixed(name, Typed::Path)).collect();
    let mut spelt: Vec<(crate::engine::Label, String)> = Vec::new();
    for (i, outcome) in answer.outcomes.iter().enumerate() {
        let value = values[i].unwrap_or(&[]);
        stored.values.push(values[i].map_or(Value::Null, |v| Value::Int(v.len() as i64)));
        match (outcome, filled.get(i).and_then(Option::as_ref)) {
            (Some(outcome), _) => {
                let label = match spelt.iter().find(|(l, _)| *l == outcome.label) {
                    Some((_, text)) => text.clone(),
                    None => {
                        let text = outcome.label.spell();
                        spelt.push((outcome.label, text.clone()));
                        text
                    }
                };
                kinds.values.push(opt_str(KIND_NAMES.get(outcome.kind as usize).copied()));
                labels.values.push(Value::Str(label));
                decoded.values.push(Value::Int(outcome.decoded as i64));
                cut.values.push(Value::Bool(outcome.cut));
                if text {
                    texts.values.push(opt_str(text_of(outcome, value)));
                }
                let src = outcome.bytes(value);
                for (p, column) in paths.iter_mut().enumerate() {
                    column.values.push(match outcome.reads.get(p) {
                        Some(PathRead::Node(node)) => value_of(node, src),
                        _ => Value::Null,
                    });
                }
            }
            (None, Some(answer)) => {
                kinds.values.push(opt_str(KIND_NAMES.get(answer.kind as usize).copied()));
                labels.values.push(Value::Str(answer.label.clone()));
                decoded.values.push(Value::Int(answer.decoded as i64));
                cut.values.push(Value::Bool(answer.cut));
                if text {
                    texts.values.push(opt_str(answer.text.as_deref()));
                }
                for (p, column) in paths.iter_mut().enumerate() {
                    column.values.push(answer.values.get(p).cloned().unwrap_or(Value::Null));
                }
            }
            (None, None) => {
                for column in [&mut kinds, &mut labels, &mut decoded, &mut cut] {
                    column.values.push(Value::Null);
                }
                if text {
                    texts.values.push(Value::Null);
                }
                for column in paths.iter_mut() {
                    column.values.push(Value::Null);
                }
            }
        }
    }
    let mut columns = vec![kinds, labels, stored, decoded, cut];
    if text {
        columns.push(texts);
    }
    columns.extend(paths);
    columns
}
