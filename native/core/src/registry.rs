//! What the Python registry holds as data, given at configure time (cqlsh_ext/payload/native.py
//! builds it; native/core/tests/registry.txt is a copy the core's own tests read): the containers'
//! labels and grades, the dispatch table and detection orders, the thresholds and budgets, the
//! record formats auto-detection tries, the releases of the C libraries the Python side decodes
//! with, and what COMPRESSION STATS' measure needs. `configure` turns it into the core's `Config`.

use std::collections::BTreeSet;

use crate::engine::{Config, Entry, Record, MAX_LAYERS};
use crate::formats::{Env, Fmt};
use crate::stats::{StatsConfig, StatsWords};

/// The Python registry's data (payload/native.py `_config`), by name.
#[derive(Clone, Debug, Default)]
pub struct Registry {
    /// Each container's label and grade (A: a signature decides, B: a signature and a trial,
    /// C: a trial only).
    pub grades: Vec<(String, String)>,
    /// Per first byte, the containers detection tries, in order.
    pub dispatch: Vec<Vec<String>>,
    pub early: Vec<String>,
    pub trial: Vec<String>,
    pub trial_zero: Vec<String>,
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
    /// The record formats auto-detection tries, in order.
    pub records: Vec<String>,
    pub lz4block_checksums: bool,
    pub zlib_version: String,
    pub lz4_version: i64,
    pub zstd_version: i64,
    /// str.isprintable of each character of the Basic Multilingual Plane (1 or 0).
    pub printable_bmp: Vec<u8>,
    pub stats: StatsRegistry,
}

/// What measuring a value needs (payload.engine's measure).
#[derive(Clone, Debug, Default)]
pub struct StatsRegistry {
    /// The formats sized from their headers: (their magic's first byte, label, from size).
    pub header_sized: Vec<(u8, String, usize)>,
    pub stream_leads: Vec<u8>,
    pub peek: usize,
    pub statuses: Vec<String>,
    pub reasons: Vec<String>,
}

/// The core configured: the engine's data, the measure's, the words of its answers, and what it
/// reads of the formats the registry names.
pub struct Configured {
    pub config: Config,
    pub stats: StatsConfig,
    pub words: StatsWords,
    /// The containers auto-detection tries and the record formats whose values the core reads, in
    /// the registry's order.
    pub reads: Vec<String>,
    /// Those whose values it hands back to the Python engine (recognised and left, or lacked).
    pub hands_back: Vec<String>,
}

impl Registry {
    fn grade_of(&self, label: &str) -> Option<&str> {
        self.grades.iter().find(|(l, _)| l == label).map(|(_, g)| g.as_str())
    }
}

/// Reads the registry's names, noting those the core lacks.
struct Names<'a> {
    registry: &'a Registry,
    lacked: BTreeSet<String>,
}

impl Names<'_> {
    /// A container by its label: Known when the core has it at the registry's grade.
    fn entry(&mut self, label: &str) -> Entry {
        if let Some((fmt, grade)) = Fmt::by_label(label) {
            let given = self.registry.grade_of(label).unwrap_or("");
            if given.len() == 1 && given.starts_with(grade) {
                return Entry::Known(fmt, grade);
            }
        }
        self.lacked.insert(label.to_owned());
        Entry::Lacked
    }

    fn fmt(&mut self, label: &str) -> Option<Fmt> {
        match self.entry(label) {
            Entry::Known(fmt, _) => Some(fmt),
            Entry::Lacked => None,
        }
    }

    fn fmts(&mut self, labels: &[String]) -> Vec<Option<Fmt>> {
        labels.iter().map(|l| self.fmt(l)).collect()
    }

    fn record(&mut self, name: &str) -> Option<Record> {
        let found = Record::by_name(name);
        if found.is_none() {
            self.lacked.insert(name.to_owned());
        }
        found
    }
}

/// The core's configuration from the registry's data. A container or record format the core
/// lacks is no error: the values whose detection reaches it are handed back (Config.lacked names
/// them). Err: a registry the core cannot take at all (the Python engine then runs alone).
pub fn configure(registry: &Registry) -> Result<Configured, String> {
    if registry.dispatch.len() != 256 {
        return Err("the dispatch table has 256 rows".to_owned());
    }
    let mut names = Names { registry, lacked: BTreeSet::new() };
    let dispatch: Vec<Vec<Entry>> =
        registry.dispatch.iter().map(|row| row.iter().map(|l| names.entry(l)).collect()).collect();
    let records = registry.records.iter().map(|name| names.record(name)).collect();
    let (early, trial, trial_zero) =
        (names.fmts(&registry.early), names.fmts(&registry.trial), names.fmts(&registry.trial_zero));
    let header_sized: Vec<(u8, Option<Fmt>, usize)> = registry
        .stats
        .header_sized
        .iter()
        .map(|(lead, label, from)| (*lead, names.fmt(label), *from))
        .collect();
    let config = Config {
        dispatch,
        early,
        trial,
        trial_zero,
        min_auto_length: registry.min_auto_length,
        trial_min_cap: registry.trial_min_cap,
        walk_depth: registry.walk_depth,
        min_text_length: registry.min_text_length,
        short_text: registry.short_text,
        min_structured_length: registry.min_structured_length,
        default_cap: registry.default_cap,
        max_nodes: registry.max_nodes,
        min_nodes: registry.min_nodes,
        tree_depth: registry.tree_depth,
        msgpack_min_length: registry.msgpack_min_length,
        stream_magics: registry.stream_magics.clone(),
        records,
        env: Env {
            lz4block_checksums: registry.lz4block_checksums,
            deflate_ok: crate::deflate::version().is_some_and(|now| now == registry.zlib_version),
            lz4_ok: registry.lz4_version == crate::lz4::version(),
            zstd_ok: registry.zstd_version == crate::zstd::version(),
            printable: registry.printable_bmp.clone(),
        },
        lacked: names.lacked.into_iter().collect(),
    };
    if config.min_auto_length == 0 || config.default_cap == 0 {
        return Err("zero thresholds".to_owned());
    }
    if config.walk_depth > MAX_LAYERS {
        return Err(format!("a walk deeper than {MAX_LAYERS} layers"));
    }
    let stats = &registry.stats;
    if stats.statuses.len() != 4 || stats.reasons.len() != 3 {
        return Err("stats needs 4 statuses and 3 reasons".to_owned());
    }
    let (mut reads, mut hands_back) = (Vec::new(), Vec::new());
    // the containers auto-detection tries (the others are only read by name, never on the core)
    let detected: BTreeSet<&String> = registry
        .dispatch
        .iter()
        .flatten()
        .chain(&registry.early)
        .chain(&registry.trial)
        .chain(&registry.trial_zero)
        .collect();
    for (label, _) in registry.grades.iter().filter(|(label, _)| detected.contains(label)) {
        let read = matches!(Fmt::by_label(label), Some((fmt, _)) if !config.lacked.contains(label)
            && crate::formats::reads(fmt, &config.env));
        if read {
            reads.push(label.clone())
        } else {
            hands_back.push(label.clone())
        }
    }
    for name in &registry.records {
        let read = matches!(Record::by_name(name), Some(record) if record.read_here());
        if read {
            reads.push(name.clone())
        } else {
            hands_back.push(name.clone())
        }
    }
    Ok(Configured {
        reads,
        hands_back,
        config,
        stats: StatsConfig { header_sized, stream_leads: stats.stream_leads.clone(), peek: stats.peek },
        words: StatsWords { statuses: stats.statuses.clone(), reasons: stats.reasons.clone() },
    })
}
