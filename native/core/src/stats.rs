//! COMPRESSION STATS' page answer: each value measured as the Python engine's measure_page()
//! measures it (payload/engine.py `_measure`: the containers only, a value's size from its
//! header where the format allows, an uncompressed value's kind peeked at), and the page's
//! partial report built here (insight/stats.py ColumnStats and the rows' Capacity), which the
//! Python side merges once a page. Values the core cannot measure exactly as Python does (a
//! format that failed: its reason is Python's; a cut value; a serialization stream) are handed
//! back by index, and the rows holding one are left out of the capacity figures with their
//! partial sizes, for the Python side to finish.

use crate::common::DErr;
use crate::engine::{decode_value, Config, Entry, Kind, Label, Want};
use crate::formats::{self, Fmt};
use crate::{deflate, zstd};

/// What a measure found, in the order of the statuses the Python side gives at configure time
/// (payload.engine: COMPRESSED, STORED, UNKNOWN, FAILED).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Status {
    Compressed = 0,
    Stored = 1,
    Unknown = 2,
    /// Measured by Python (its reason is Python's): named here for the statuses' order.
    #[allow(dead_code)]
    Failed = 3,
}

/// The reasons a measure gives without Python (payload.engine FROM_HEADER, payload.view
/// TOO_SHORT and NOT_DETECTED), in the configured order; None is no reason.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Reason {
    FromHeader = 0,
    TooShort = 1,
    NotDetected = 2,
}

/// The data the Python side gives for measuring (configure's "stats" entry).
pub struct StatsConfig {
    /// Formats with the HeaderSized capability: (their magic's first byte, the format, the
    /// stored size from which they are sized from their headers).
    /// None: a format the core lacks (a value with its first byte is handed back).
    pub header_sized: Vec<(u8, Option<Fmt>, usize)>,
    /// The first bytes of the serialization streams' magics (measure leaves those to the walk).
    pub stream_leads: Vec<u8>,
    /// Decompressed bytes peeked at behind a declared size.
    pub peek: usize,
}

/// What the reader counts in (payload.measures.MeasureSpec), given with each call.
pub struct Spec {
    pub bucket_bounds: Vec<u64>,
    pub size_bounds: Vec<u64>,
    pub median_inv_step: f64,
    pub median_zero: i64,
    pub units: (u64, u64),
    pub row_quota: u64,
    pub near_bytes: f64,
}

pub struct Measured {
    pub status: Status,
    pub label: Label,
    pub size: usize,
    pub exact: bool,
    pub reason: Option<Reason>,
}

/// HeaderSized.declared_size of the formats the core sizes from their headers (None: not
/// trusted, or a format left to Python).
fn declared_size(fmt: Fmt, data: &[u8]) -> Option<u64> {
    match fmt {
        Fmt::Zstd => zstd::declared_size(data),
        Fmt::Gzip => deflate::gzip_declared_size(data),
        _ => None,
    }
}

/// HeaderSized.first_byte: the payload's first byte as the headers tell it (None: they do not).
fn first_byte(fmt: Fmt, data: &[u8]) -> Option<u8> {
    match fmt {
        Fmt::Zstd => zstd::first_byte(data),
        _ => None,
    }
}

/// engine._REMARKABLE: a first byte a serialization stream or a format with a signature (a
/// non-empty dispatch row: registry.signature_matches) may start with.
fn remarkable(cfg: &Config, stats: &StatsConfig, b: u8) -> bool {
    stats.stream_leads.contains(&b) || !cfg.dispatch[b as usize].is_empty()
}

/// HeaderSized.peek: Ok(None) where Python's peek returns None (its library raised).
fn peek(fmt: Fmt, data: &[u8], n: usize) -> Result<Option<Vec<u8>>, DErr> {
    match fmt {
        Fmt::Zstd => zstd::peek(data, n),
        Fmt::Gzip => deflate::gzip_peek(data, n),
        _ => Err(DErr::HandBack),
    }
}

/// registry.signature_matches: a format of the first byte's dispatch row matches the prefix
/// (Err: a format the core lacks is met first).
fn signature_matches(cfg: &Config, prefix: &[u8]) -> Result<bool, DErr> {
    if prefix.is_empty() {
        return Ok(false);
    }
    for &entry in &cfg.dispatch[prefix[0] as usize] {
        match entry {
            Entry::Known(fmt, _) if formats::matches(fmt, prefix) => return Ok(true),
            Entry::Known(..) => {}
            Entry::Lacked => return Err(DErr::HandBack),
        }
    }
    Ok(false)
}

/// The quiet reason of a value read as no known format: too short to detect, or nothing found.
fn unknown_reason(cfg: &Config, n: usize) -> Option<Reason> {
    if n == 0 {
        None
    } else if n < cfg.min_auto_length {
        Some(Reason::TooShort)
    } else {
        Some(Reason::NotDetected)
    }
}

/// One value, as ValueEngine._measure measures it (auto mode). Err(HandBack): Python measures it.
pub fn measure_value(
    cfg: &Config,
    stats: &StatsConfig,
    value: &[u8],
    cap: usize,
    from_headers: bool,
) -> Result<Measured, DErr> {
    let n = value.len();
    if from_headers && n >= cfg.min_auto_length {
        if let Some(&(_, fmt, from)) = stats.header_sized.iter().find(|(lead, _, _)| *lead == value[0]) {
            let Some(fmt) = fmt else { return Err(DErr::HandBack) };
            let matched = formats::matches(fmt, value);
            // a first byte nothing recognisable starts with settles it unseen, at any size
            let unseen = matched && first_byte(fmt, value).is_some_and(|b| !remarkable(cfg, stats, b));
            if matched && (unseen || n >= from) {
                if !matches!(fmt, Fmt::Zstd | Fmt::Gzip) {
                    return Err(DErr::HandBack);
                }
                if let Some(size) = declared_size(fmt, value) {
                    let from_header = || Measured {
                        status: Status::Compressed,
                        label: Label::new(&[fmt], ""),
                        size: size as usize,
                        exact: true,
                        reason: Some(Reason::FromHeader),
                    };
                    if size <= cap as u64 && unseen {
                        return Ok(from_header());
                    }
                    if size <= cap as u64 && n >= from {
                        if let Some(head) = peek(fmt, value, stats.peek)? {
                            let stream = head.first().is_some_and(|b| stats.stream_leads.contains(b));
                            if !stream && !signature_matches(cfg, &head)? {
                                return Ok(from_header());
                            }
                        }
                    }
                }
            }
        }
    }
    let want = Want {
        paths: &[],
        tree: false,
        text_tree: false,
        gaps: false,
        text_values: false,
        measure: true,
        json: false,
        needles: &[],
    };
    let outcome = decode_value(cfg, value, cap, &want)?;
    match outcome.kind {
        Kind::Binary => {
            // measure: a container was peeled (its payload is not read)
            if outcome.cut {
                return Err(DErr::HandBack); // its size may be the declared one: Python's
            }
            Ok(Measured {
                status: Status::Compressed,
                label: outcome.label.layers_only(),
                size: outcome.decoded,
                exact: true,
                reason: None,
            })
        }
        Kind::Text | Kind::Record => {
            if !outcome.label.is_bare() {
                return Err(DErr::HandBack); // a reading under layers: not the measure's road
            }
            Ok(Measured {
                status: Status::Stored,
                label: Label::new(&[], ""),
                size: n,
                exact: true,
                reason: None,
            })
        }
        Kind::NoFormat => Ok(Measured {
            status: Status::Unknown,
            label: Label::new(&[], ""),
            size: n,
            exact: true,
            reason: unknown_reason(cfg, n),
        }),
        Kind::Failed | Kind::HandedBack => Err(DErr::HandBack), // the reason is Python's
    }
}

/// insight.median's bin of a ratio.
fn median_bin(stats: &Spec, x: f64) -> i64 {
    if x > 0.0 {
        (x.ln() * stats.median_inv_step).floor() as i64
    } else {
        stats.median_zero
    }
}

/// bisect_left(bounds, size).
fn bucket(bounds: &[u64], size: u64) -> usize {
    bounds.partition_point(|&b| b < size)
}

/// scanning.capacity.Capacity over rows.
#[derive(Default, Clone, Debug)]
pub struct CapacityAgg {
    pub rows: u64,
    pub wcu: u64,
    pub rcu: u64,
    pub near_quota: u64,
    pub over_quota: u64,
    pub largest: u64,
}

impl CapacityAgg {
    fn add(&mut self, size: u64, stats: &Spec) {
        self.rows += 1;
        self.wcu += size.div_ceil(stats.units.0).max(1);
        self.rcu += size.div_ceil(stats.units.1).max(1);
        if size as f64 >= stats.near_bytes {
            if size > stats.row_quota {
                self.over_quota += 1;
            } else {
                self.near_quota += 1;
            }
        }
        self.largest = self.largest.max(size);
    }
}

/// One chain's counters: (status, label, values, stored bytes, decompressed bytes).
pub struct ChainAgg {
    pub status: Status,
    pub label: Label,
    pub values: u64,
    pub stored: u64,
    pub size: u64,
}

/// insight.stats.ColumnStats' counters over one page of one place.
pub struct ColumnAgg {
    pub values: u64,
    pub nulls: u64,
    pub stored: u64,
    pub size: u64,
    pub inexact: u64,
    pub from_headers: u64,
    pub chains: Vec<ChainAgg>,
    pub reasons: Vec<(Reason, u64)>,
    pub compressed: [u64; 3],
    pub buckets_before: Vec<u64>,
    pub buckets_after: Vec<u64>,
    pub sizes_before: Vec<u64>,
    pub sizes_after: Vec<u64>,
    /// The compressed values' ratios, in order (the median sketch's exact phase), or their bins.
    pub ratios: Vec<f64>,
    pub ratio_bins: Vec<(i64, u64)>,
    /// Each bin of `ratio_bins` with its place there, sorted by bin (found by a binary search;
    /// `ratio_bins` keeps the order bins are first met in, as the Python side's dict does).
    bin_places: Vec<(i64, usize)>,
    pub exact_ratios: bool,
    /// Indexes (in the place's values) of the values handed back to Python.
    pub handed_back: Vec<usize>,
}

impl ColumnAgg {
    pub fn new(stats: &Spec, exact_ratios: bool) -> ColumnAgg {
        ColumnAgg {
            values: 0,
            nulls: 0,
            stored: 0,
            size: 0,
            inexact: 0,
            from_headers: 0,
            chains: Vec::new(),
            reasons: Vec::new(),
            compressed: [0; 3],
            buckets_before: vec![0; stats.bucket_bounds.len() + 1],
            buckets_after: vec![0; stats.bucket_bounds.len() + 1],
            sizes_before: vec![0; stats.size_bounds.len() + 1],
            sizes_after: vec![0; stats.size_bounds.len() + 1],
            ratios: Vec::new(),
            ratio_bins: Vec::new(),
            bin_places: Vec::new(),
            exact_ratios,
            handed_back: Vec::new(),
        }
    }

    /// ColumnStats.add.
    pub fn add(&mut self, stats: &Spec, m: &Measured, stored: u64) {
        let size = m.size as u64;
        self.values += 1;
        self.stored += stored;
        self.size += size;
        if m.status == Status::Compressed {
            self.compressed[0] += 1;
            self.compressed[1] += stored;
            self.compressed[2] += size;
            let ratio = size as f64 / stored as f64;
            if self.exact_ratios {
                self.ratios.push(ratio);
            } else {
                let k = median_bin(stats, ratio);
                match self.bin_places.binary_search_by_key(&k, |&(b, _)| b) {
                    Ok(found) => self.ratio_bins[self.bin_places[found].1].1 += 1,
                    Err(place) => {
                        self.bin_places.insert(place, (k, self.ratio_bins.len()));
                        self.ratio_bins.push((k, 1));
                    }
                }
            }
            if !m.exact {
                self.inexact += 1;
            }
            if m.reason == Some(Reason::FromHeader) {
                self.from_headers += 1;
            }
        } else if let Some(reason) = m.reason {
            match self.reasons.iter_mut().find(|(r, _)| *r == reason) {
                Some(entry) => entry.1 += 1,
                None => self.reasons.push((reason, 1)),
            }
        }
        match self.chains.iter_mut().find(|c| c.status == m.status && c.label == m.label) {
            Some(c) => {
                c.values += 1;
                c.stored += stored;
                c.size += size;
            }
            None => self.chains.push(ChainAgg { status: m.status, label: m.label, values: 1, stored, size }),
        }
        self.buckets_before[bucket(&stats.bucket_bounds, size)] += 1;
        self.buckets_after[bucket(&stats.bucket_bounds, stored)] += 1;
        self.sizes_before[bucket(&stats.size_bounds, size)] += 1;
        self.sizes_after[bucket(&stats.size_bounds, stored)] += 1;
    }
}

/// A value of a place, as the page call reads it from Python (bytes, a str of a text column,
/// None, or anything else: handed back).
pub enum Cell<'a> {
    Null,
    Blob(&'a [u8]),
    Text(usize),
    Other,
}

/// The page's rows: capacity over the rows whose every value was measured here, and the partial
/// sizes (before, after) of the others (a value of theirs was handed back).
pub struct RowsAgg {
    pub before: CapacityAgg,
    pub after: CapacityAgg,
    pub left: Vec<(usize, u64, u64)>,
}

/// One place of the page: its cells, the row each is in, its counters.
pub struct PlaceIn<'a> {
    pub cells: Vec<Cell<'a>>,
    pub rows: Option<Vec<usize>>,
    pub agg: ColumnAgg,
}

/// Measures every place's values (GIL released by the caller: nothing here touches Python)
/// and the rows' capacity.
pub fn measure_places(
    cfg: &Config,
    stats: &StatsConfig,
    spec: &Spec,
    places: &mut [PlaceIn<'_>],
    rows: usize,
    cap: usize,
    from_headers: bool,
) -> RowsAgg {
    let mut before = vec![0u64; rows];
    let mut after = vec![0u64; rows];
    let mut left = vec![false; rows];
    for place in places.iter_mut() {
        for (i, cell) in place.cells.iter().enumerate() {
            let row = match &place.rows {
                Some(rows_of) => rows_of[i],
                None => i,
            };
            match cell {
                Cell::Null => place.agg.nulls += 1,
                Cell::Text(len) => {
                    let m = Measured {
                        status: Status::Stored,
                        label: Label::new(&[], "text"),
                        size: *len,
                        exact: true,
                        reason: None,
                    };
                    place.agg.add(spec, &m, *len as u64);
                    before[row] += *len as u64;
                    after[row] += *len as u64;
                }
                Cell::Blob(value) => {
                    match crate::panics::guarded(|| measure_value(cfg, stats, value, cap, from_headers)) {
                        Some(Ok(m)) => {
                            place.agg.add(spec, &m, value.len() as u64);
                            before[row] += m.size as u64;
                            after[row] += value.len() as u64;
                        }
                        _ => {
                            // Python measures it and adds it to its row's partial sizes
                            place.agg.handed_back.push(i);
                            left[row] = true;
                        }
                    }
                }
                Cell::Other => {
                    place.agg.handed_back.push(i);
                    left[row] = true;
                }
            }
        }
    }
    let mut out = RowsAgg { before: CapacityAgg::default(), after: CapacityAgg::default(), left: Vec::new() };
    for row in 0..rows {
        if left[row] {
            out.left.push((row, before[row], after[row]));
        } else {
            out.before.add(before[row], spec);
            out.after.add(after[row], spec);
        }
    }
    out
}

/// The words of the statuses and reasons (the registry's), kept beside the data.
pub struct StatsWords {
    pub statuses: Vec<String>,
    pub reasons: Vec<String>,
}

impl Spec {
    /// The MeasureSpec's fields, checked (a unit of zero bytes is refused).
    #[allow(clippy::too_many_arguments)] // MeasureSpec's fields, one each
    pub fn new(
        bucket_bounds: Vec<u64>,
        size_bounds: Vec<u64>,
        median_inv_step: f64,
        median_zero: i64,
        units: (u64, u64),
        row_quota: u64,
        near_share: f64,
    ) -> Result<Spec, String> {
        if units.0 == 0 || units.1 == 0 {
            return Err("a unit of zero bytes".to_owned());
        }
        Ok(Spec {
            bucket_bounds,
            size_bounds,
            median_inv_step,
            median_zero,
            units,
            row_quota,
            near_bytes: near_share * row_quota as f64,
        })
    }
}
