//! configure(registry) and the configured core every call reads: the registry's data (a dict,
//! typed as `Registry` in cqlsh_ext_native.pyi) converted into the core's `Registry`.

use std::sync::{Arc, RwLock};

use cqlsh_ext_core::formats::KNOWN;
use cqlsh_ext_core::registry::{self, Registry, StatsRegistry};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

static CONFIGURED: RwLock<Option<Arc<registry::Configured>>> = RwLock::new(None);

/// The configured core (configure() must have succeeded).
pub fn configured_now() -> PyResult<Arc<registry::Configured>> {
    CONFIGURED
        .read()
        .map_err(|_| PyRuntimeError::new_err("configuration lock poisoned"))?
        .clone()
        .ok_or_else(|| PyRuntimeError::new_err("cqlsh_ext_native is not configured"))
}

fn item<'py>(dict: &Bound<'py, PyDict>, key: &str) -> PyResult<Bound<'py, PyAny>> {
    dict.get_item(key)?.ok_or_else(|| PyValueError::new_err(format!("configure: no {key:?}")))
}

/// An entry of the registry's dict, extracted.
macro_rules! get {
    ($dict:expr, $key:literal) => {
        item($dict, $key)?.extract()?
    };
}

fn registry_of(dict: &Bound<'_, PyDict>) -> PyResult<Registry> {
    let grades: Vec<(String, String)> = item(dict, "grades")?
        .cast_into::<PyDict>()?
        .iter()
        .map(|(k, v)| Ok((k.extract()?, v.extract()?)))
        .collect::<PyResult<_>>()?;
    let stats = item(dict, "stats")?.cast_into::<PyDict>()?;
    Ok(Registry {
        grades,
        dispatch: get!(dict, "dispatch"),
        early: get!(dict, "early"),
        trial: get!(dict, "trial"),
        trial_zero: get!(dict, "trial_zero"),
        min_auto_length: get!(dict, "min_auto_length"),
        trial_min_cap: get!(dict, "trial_min_cap"),
        walk_depth: get!(dict, "walk_depth"),
        min_text_length: get!(dict, "min_text_length"),
        short_text: get!(dict, "short_text"),
        min_structured_length: get!(dict, "min_structured_length"),
        default_cap: get!(dict, "default_cap"),
        max_nodes: get!(dict, "max_nodes"),
        min_nodes: get!(dict, "min_nodes"),
        tree_depth: get!(dict, "tree_depth"),
        msgpack_min_length: get!(dict, "msgpack_min_length"),
        stream_magics: get!(dict, "stream_magics"),
        records: get!(dict, "records"),
        lz4block_checksums: get!(dict, "lz4block_checksums"),
        zlib_version: get!(dict, "zlib_version"),
        lz4_version: get!(dict, "lz4_version"),
        zstd_version: get!(dict, "zstd_version"),
        printable_bmp: get!(dict, "printable_bmp"),
        stats: StatsRegistry {
            header_sized: get!(&stats, "header_sized"),
            stream_leads: get!(&stats, "stream_leads"),
            peek: get!(&stats, "peek"),
            statuses: get!(&stats, "statuses"),
            reasons: get!(&stats, "reasons"),
        },
    })
}

/// configure()'s and configured()'s answer: whether the core took the registry, and which of
/// the C libraries are the Python side's releases (their formats are handed back otherwise).
#[pyclass(frozen, get_all, module = "cqlsh_ext_native")]
pub struct Configured {
    configured: bool,
    zlib: bool,
    lz4: bool,
    zstd: bool,
    /// The containers and record formats whose values the core reads.
    reads: Vec<String>,
    /// Those whose values it hands back to the Python engine (recognised and left, or lacked).
    hands_back: Vec<String>,
    /// Those the registry names that the core does not know at all (a value that reaches one in
    /// detection is handed back).
    lacked: Vec<String>,
}

fn answer(now: Option<&registry::Configured>) -> Configured {
    match now {
        Some(c) => Configured {
            configured: true,
            zlib: c.config.env.deflate_ok,
            lz4: c.config.env.lz4_ok,
            zstd: c.config.env.zstd_ok,
            reads: c.reads.clone(),
            hands_back: c.hands_back.clone(),
            lacked: c.config.lacked.clone(),
        },
        None => Configured {
            configured: false,
            zlib: false,
            lz4: false,
            zstd: false,
            reads: Vec::new(),
            hands_back: Vec::new(),
            lacked: Vec::new(),
        },
    }
}

/// Takes the Python registry's data (cqlsh_ext/payload/native.py builds it). A container or
/// record format the core lacks is taken (the values that reach it are handed back); ValueError
/// for a registry it cannot take at all (a dispatch table of another shape, a walk deeper than it
/// follows): the Python engine then runs alone.
#[pyfunction]
pub fn configure(registry: &Bound<'_, PyDict>) -> PyResult<Configured> {
    let built = registry::configure(&registry_of(registry)?)
        .map_err(|why| PyValueError::new_err(format!("configure: {why}")))?;
    let answered = answer(Some(&built));
    let mut slot = CONFIGURED.write().map_err(|_| PyRuntimeError::new_err("configuration lock poisoned"))?;
    *slot = Some(Arc::new(built));
    Ok(answered)
}

/// Whether configure() succeeded, and which libraries match the Python side's.
#[pyfunction]
pub fn configured() -> Configured {
    let now = CONFIGURED.read().ok().and_then(|c| c.clone());
    answer(now.as_deref())
}

/// The containers the core knows: (label, grade).
#[pyfunction]
pub fn known_containers() -> Vec<(&'static str, char)> {
    KNOWN.iter().map(|(_, l, g)| (*l, *g)).collect()
}
