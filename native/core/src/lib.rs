//! cqlsh-ext-core: the common road of cqlsh-ext's value engine, in plain Rust.
//!
//! A stored value is walked as the Python engine walks it in auto mode (`engine`: the
//! containers of `formats`, the payload readers `text`, `json`, `msgpack`, `cbor`, the trees and
//! paths of `tree`), with what the Python registry holds as data (`registry`: detection's order,
//! dispatch table, thresholds, budgets). A page of values is answered at once by the readers'
//! page calls: `page` (kinds, labels, sizes, texts, the paths' values), `query` (a payload
//! query's conditions, projections and group partials), `stats` (COMPRESSION STATS' counters),
//! `describe` (DESCRIBE PAYLOAD's structure and sketches); `rows` reads the cells of a RESULT
//! page's rows section as the server sent it; `columns` lays a page's answer out as
//! Arrow arrays (the C data interface), `held` a file's values in the kinds its writer settled. Any value the core cannot answer exactly as the Python
//! engine would is handed back (its index listed), never guessed.
//!
//! Nothing here knows Python: the bindings crate (native/bindings) converts its requests and
//! answers. The files form no import circle (tests/layers.rs checks it).

pub mod cbor;
pub mod columns;
pub mod common;
pub mod deflate;
pub mod describe;
pub mod engine;
pub mod formats;
pub mod held;
pub mod json;
pub mod libz;
pub mod lz4;
pub mod msgpack;
pub mod num;
pub mod page;
pub mod panics;
pub mod query;
pub mod registry;
pub mod rows;
pub mod scan;
pub mod snappy;
pub mod stats;
pub mod text;
pub mod tree;
pub mod zstd;
pub mod zstd_first;
