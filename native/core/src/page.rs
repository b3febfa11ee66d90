//! The engine's page read: a page of one column's values decoded (engine.rs, each value at its
//! boundary), what each keeps for the answer bounded over the page, and per path whether some
//! value had it and the deepest miss before the first that had it (payload.pages: the engine's
//! Page.found and Page.missed).

use std::collections::HashSet;

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
    /// COMPRESSION STATS' measure: the containers only (engine::Want.measure).
    pub measure: bool,
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
/// its summary.
pub struct PageAnswer {
    pub outcomes: Vec<Option<Outcome>>,
    pub paths: Vec<PathSummary>,
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
pub fn decode_one(cfg: &Config, value: &[u8], cap: usize, want: &Want) -> Option<Outcome> {
    match crate::panics::guarded(|| decode_value(cfg, value, cap, want)) {
        Some(Ok(outcome)) => Some(outcome),
        Some(Err(DErr::HandBack)) | Some(Err(_)) | None => None,
    }
}

/// A page of one column's values (None: not a blob, handed back), as the engine's read_page
/// reads it. Nothing here touches Python: the caller releases the GIL around it.
pub fn decode_page(cfg: &Config, values: &[Option<&[u8]>], cap: usize, want: &PageWant) -> PageAnswer {
    let engine_want =
        Want { paths: want.paths, tree: want.tree && !want.measure, measure: want.measure, needles: &[] };
    let mut retained = 0usize;
    let outcomes: Vec<Option<Outcome>> = values
        .iter()
        .map(|value| {
            let value = (*value)?;
            if retained > RETAINED {
                return None;
            }
            let mut outcome = decode_one(cfg, value, cap, &engine_want)?;
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
    PageAnswer { outcomes, paths }
}

/// A value's text (a TEXT outcome's text, else None) from its outcome and stored bytes.
pub fn text_of<'a>(outcome: &'a Outcome, stored: &'a [u8]) -> Option<&'a str> {
    if outcome.kind != Kind::Text {
        return None;
    }
    let src = outcome.bytes(stored);
    Some(std::str::from_utf8(&src[..outcome.text_len]).unwrap_or(""))
}
