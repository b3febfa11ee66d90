//! What the core's tests share: the registry and corpus the Python side wrote (tests/native/
//! core_corpus.py), read with the core's own JSON reader.

#![allow(dead_code)] // each test file uses its part

use std::path::{Path, PathBuf};

use cqlsh_ext_core::json::json_container;
use cqlsh_ext_core::registry::{configure, Configured, Registry, StatsRegistry};
use cqlsh_ext_core::tree::Node;

pub fn here() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests")
}

/// The repository's tests/fuzzing/corpus (the seeds the corpus names by file).
pub fn seeds() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fuzzing/corpus")
}

/// A JSON document read whole, with the bytes its strings point into.
pub struct Doc {
    pub src: Vec<u8>,
    pub root: Node,
}

pub fn read_json(path: &Path) -> Doc {
    let src = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let root = json_container(&src, 0, src.len(), usize::MAX >> 2)
        .expect("a JSON document the core reads")
        .expect("a JSON object or array");
    Doc { src, root }
}

/// A JSON value's accessors (panicking on a shape the fixture does not have: a test's bug).
pub struct At<'a> {
    pub node: &'a Node,
    pub src: &'a [u8],
}

impl<'a> At<'a> {
    pub fn get(&self, key: &str) -> At<'a> {
        self.find(key).unwrap_or_else(|| panic!("no {key:?}"))
    }

    pub fn find(&self, key: &str) -> Option<At<'a>> {
        let Node::Map(entries) = self.node else { panic!("not an object") };
        entries
            .iter()
            .find(|(k, _)| matches!(k, Node::Str(s) if s.get(self.src) == key))
            .map(|(_, v)| At { node: v, src: self.src })
    }

    pub fn items(&self) -> Vec<At<'a>> {
        let Node::List(items) = self.node else { panic!("not an array") };
        items.iter().map(|v| At { node: v, src: self.src }).collect()
    }

    pub fn entries(&self) -> Vec<(String, At<'a>)> {
        let Node::Map(entries) = self.node else { panic!("not an object") };
        entries
            .iter()
            .map(|(k, v)| {
                let Node::Str(s) = k else { panic!("a key not a string") };
                (s.get(self.src).to_owned(), At { node: v, src: self.src })
            })
            .collect()
    }

    pub fn str(&self) -> String {
        let Node::Str(s) = self.node else { panic!("not a string: {:?}", self.node) };
        s.get(self.src).to_owned()
    }

    pub fn is_null(&self) -> bool {
        matches!(self.node, Node::Null)
    }

    pub fn int(&self) -> i64 {
        match self.node {
            Node::Int(i) => *i,
            other => panic!("not an integer: {other:?}"),
        }
    }

    pub fn usize(&self) -> usize {
        self.int() as usize
    }

    pub fn bool(&self) -> bool {
        match self.node {
            Node::Bool(b) => *b,
            other => panic!("not a boolean: {other:?}"),
        }
    }

    pub fn strs(&self) -> Vec<String> {
        self.items().iter().map(At::str).collect()
    }
}

pub fn unhex(text: &str) -> Vec<u8> {
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex")).collect()
}

/// The registry the Python side wrote (registry.json).
pub fn registry() -> Registry {
    let doc = read_json(&here().join("registry.json"));
    let r = At { node: &doc.root, src: &doc.src };
    let stats = r.get("stats");
    let mut printable = vec![0u8; 0x10000];
    for run in r.get("printable_bmp").items() {
        let bounds = run.items();
        for slot in &mut printable[bounds[0].usize()..bounds[1].usize()] {
            *slot = 1;
        }
    }
    Registry {
        grades: r.get("grades").entries().into_iter().map(|(k, v)| (k, v.str())).collect(),
        dispatch: r.get("dispatch").items().iter().map(At::strs).collect(),
        early: r.get("early").strs(),
        trial: r.get("trial").strs(),
        trial_zero: r.get("trial_zero").strs(),
        min_auto_length: r.get("min_auto_length").usize(),
        trial_min_cap: r.get("trial_min_cap").usize(),
        walk_depth: r.get("walk_depth").usize(),
        min_text_length: r.get("min_text_length").usize(),
        short_text: r.get("short_text").usize(),
        min_structured_length: r.get("min_structured_length").usize(),
        default_cap: r.get("default_cap").usize(),
        max_nodes: r.get("max_nodes").usize(),
        min_nodes: r.get("min_nodes").usize(),
        tree_depth: r.get("tree_depth").usize(),
        msgpack_min_length: r.get("msgpack_min_length").usize(),
        stream_magics: r.get("stream_magics").items().iter().map(|m| unhex(&m.str())).collect(),
        records: r.get("records").strs(),
        lz4block_checksums: r.get("lz4block_checksums").bool(),
        zlib_version: r.get("zlib_version").str(),
        lz4_version: r.get("lz4_version").int(),
        zstd_version: r.get("zstd_version").int(),
        printable_bmp: printable,
        stats: StatsRegistry {
            header_sized: stats
                .get("header_sized")
                .items()
                .iter()
                .map(|e| {
                    let e = e.items();
                    (e[0].usize() as u8, e[1].str(), e[2].usize())
                })
                .collect(),
            stream_leads: stats.get("stream_leads").items().iter().map(|b| b.usize() as u8).collect(),
            peek: stats.get("peek").usize(),
            statuses: stats.get("statuses").strs(),
            reasons: stats.get("reasons").strs(),
        },
    }
}

/// The core configured from registry.json, the C libraries linked here (and the system's zlib,
/// which libz.rs loads where no Python did) taken as the Python side's (tests/native checks that they are the same releases on the machine that builds the
/// module; the fixture was written on another).
pub fn configured() -> Configured {
    let mut registry = registry();
    registry.zlib_version = cqlsh_ext_core::deflate::version().expect("the system's libz.so.1");
    registry.lz4_version = cqlsh_ext_core::lz4::version();
    registry.zstd_version = cqlsh_ext_core::zstd::version();
    configure(&registry).expect("the core takes the Python registry")
}
