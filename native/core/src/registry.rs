//! What the Python registry holds as data, given at configure time (cqlsh_ext/payload/native.py
//! builds it; native/core/tests/registry.txt is a copy the core's own tests read): the containers'
//! labels and grades, the dispatch table and detection orders, the thresholds and budgets, the
//! record formats auto-detection tries, the releases of the C libraries the Python side decodes
//! with, and what COMPRESSION STATS' measure needs. `configure` turns it into the core's `Config`.

use crate::engine::{Config, Record, MAX_LAYERS};
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

/// The core configured: the engine's data, the measure's, the words of its answers.
pub struct Configured {
    pub config: Config,
    pub stats: StatsConfig,
    pub words: StatsWords,
}

impl Registry {
    fn grade_of(&self, label: &str) -> Option<&str> {
        self.grades.iter().find(|(l, _)| l == label).map(|(_, g)| g.as_str())
    }

    fn fmt_of(&self, label: &str) -> Result<(Fmt, char), String> {
        let Some((fmt, grade)) = Fmt::by_label(label) else {
            return Err(format!("container {label:?} is not mirrored here"));
        };
        let given = self.grade_of(label).ok_or_else(|| format!("no grade for {label:?}"))?;
        if given.len() != 1 || !given.starts_with(grade) {
            return Err(format!("{label:?} is grade {given} in the registry, {grade} in the mirror"));
        }
        Ok((fmt, grade))
    }

    fn fmts(&self, labels: &[String]) -> Result<Vec<Fmt>, String> {
        labels.iter().map(|l| self.fmt_of(l).map(|(f, _)| f)).collect()
    }
}

/// The core's configuration from the registry's data. Err: what the core cannot take (the
/// Python engine then runs alone).
pub fn configure(registry: &Registry) -> Result<Configured, String> {
    if registry.dispatch.len() != 256 {
        return Err("the dispatch table has 256 rows".to_owned());
    }
    let mut dispatch = Vec::with_capacity(256);
    for row in &registry.dispatch {
        dispatch.push(row.iter().map(|l| registry.fmt_of(l)).collect::<Result<Vec<_>, _>>()?);
    }
    let mut records = Vec::new();
    for name in &registry.records {
        records.push(Record::by_name(name).ok_or_else(|| format!("record format {name:?} is not mirrored here"))?);
    }
    let config = Config {
        dispatch,
        early: registry.fmts(&registry.early)?,
        trial: registry.fmts(&registry.trial)?,
        trial_zero: registry.fmts(&registry.trial_zero)?,
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
            deflate_ok: registry.zlib_version == crate::deflate::version(),
            lz4_ok: registry.lz4_version == crate::lz4::version(),
            zstd_ok: registry.zstd_version == crate::zstd::version(),
            printable: registry.printable_bmp.clone(),
        },
    };
    if config.min_auto_length == 0 || config.default_cap == 0 {
        return Err("zero thresholds".to_owned());
    }
    if config.walk_depth > MAX_LAYERS {
        return Err(format!("a walk deeper than {MAX_LAYERS} layers"));
    }
    let stats = &registry.stats;
    let mut header_sized = Vec::new();
    for (lead, label, from) in &stats.header_sized {
        let (fmt, _) = Fmt::by_label(label).ok_or_else(|| format!("container {label:?} is not mirrored here"))?;
        header_sized.push((*lead, fmt, *from));
    }
    if stats.statuses.len() != 4 || stats.reasons.len() != 3 {
        return Err("stats needs 4 statuses and 3 reasons".to_owned());
    }
    Ok(Configured {
        config,
        stats: StatsConfig { header_sized, stream_leads: stats.stream_leads.clone(), peek: stats.peek },
        words: StatsWords { statuses: stats.statuses.clone(), reasons: stats.reasons.clone() },
    })
}
