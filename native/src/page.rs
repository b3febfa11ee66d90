//! The Python-facing calls: configure() from the registry's data, and decode_page(), one call
//! per column per page: the values decoded with the GIL released, then their columns built.

use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Once, RwLock};

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyList, PyString, PyTuple};

use crate::common::DErr;
use crate::engine::{decode_value, Config, Kind, Label, Outcome, Payload, Record, Want, MAX_LAYERS};
use crate::formats::{Env, Fmt, KNOWN};
use crate::stats::{StatsConfig, StatsWords};
use crate::tree::{Node, PathRead, Step};

/// Panics caught at a value's boundary (the value was handed back): a bug, which the tests
/// assert never happens; counted instead of printed in the middle of the shell's output.
static PANICS: AtomicU64 = AtomicU64::new(0);
static HOOK: Once = Once::new();

pub fn quiet_panics() {
    HOOK.call_once(|| {
        std::panic::set_hook(Box::new(|_| {
            PANICS.fetch_add(1, Ordering::Relaxed);
        }));
    });
}

/// How many values panicked since the module loaded (each was handed back).
#[pyfunction]
pub fn panics() -> u64 {
    PANICS.load(Ordering::Relaxed)
}

struct Configured {
    config: Config,
    stats: StatsConfig,
    words: StatsWords,
}

static CONFIGURED: RwLock<Option<Arc<Configured>>> = RwLock::new(None);

fn item<'py>(config: &Bound<'py, PyDict>, key: &str) -> PyResult<Bound<'py, PyAny>> {
    config.get_item(key)?.ok_or_else(|| PyValueError::new_err(format!("configure: no {key:?}")))
}

fn fmt_of(label: &str, grades: &Bound<'_, PyDict>) -> PyResult<(Fmt, char)> {
    let Some((fmt, grade)) = Fmt::by_label(label) else {
        return Err(PyValueError::new_err(format!("configure: container {label:?} is not mirrored here")));
    };
    let given: String = grades
        .get_item(label)?
        .ok_or_else(|| PyValueError::new_err(format!("configure: no grade for {label:?}")))?
        .extract()?;
    if given.len() != 1 || !given.starts_with(grade) {
        return Err(PyValueError::new_err(format!(
            "configure: {label:?} is grade {given} in the registry, {grade} in the mirror"
        )));
    }
    Ok((fmt, grade))
}

fn fmts(config: &Bound<'_, PyDict>, key: &str, grades: &Bound<'_, PyDict>) -> PyResult<Vec<Fmt>> {
    let labels: Vec<String> = item(config, key)?.extract()?;
    labels.iter().map(|l| fmt_of(l, grades).map(|(f, _)| f)).collect()
}

/// Takes the Python registry's data (cqlsh_ext/payload/native.py builds the dict). Raises
/// ValueError when it names a container or record format the mirror does not know, or gives
/// one a grade the mirror was not written for: the Python engine then runs alone.
#[pyfunction]
pub fn configure(config: &Bound<'_, PyDict>) -> PyResult<()> {
    let grades = item(config, "grades")?.cast_into::<PyDict>()?;
    let dispatch_rows: Vec<Vec<String>> = item(config, "dispatch")?.extract()?;
    if dispatch_rows.len() != 256 {
        return Err(PyValueError::new_err("configure: the dispatch table has 256 rows"));
    }
    let mut dispatch = Vec::with_capacity(256);
    for row in &dispatch_rows {
        dispatch.push(row.iter().map(|l| fmt_of(l, &grades)).collect::<PyResult<Vec<_>>>()?);
    }
    let record_names: Vec<String> = item(config, "records")?.extract()?;
    let mut records = Vec::new();
    for name in &record_names {
        records.push(Record::by_name(name).ok_or_else(|| {
            PyValueError::new_err(format!("configure: record format {name:?} is not mirrored here"))
        })?);
    }
    let zlib_version: String = item(config, "zlib_version")?.extract()?;
    let usize_of = |key: &str| -> PyResult<usize> { item(config, key)?.extract() };
    let built = Config {
        dispatch,
        early: fmts(config, "early", &grades)?,
        trial: fmts(config, "trial", &grades)?,
        trial_zero: fmts(config, "trial_zero", &grades)?,
        min_auto_length: usize_of("min_auto_length")?,
        trial_min_cap: usize_of("trial_min_cap")?,
        walk_depth: usize_of("walk_depth")?,
        min_text_length: usize_of("min_text_length")?,
        short_text: usize_of("short_text")?,
        min_structured_length: usize_of("min_structured_length")?,
        default_cap: usize_of("default_cap")?,
        max_nodes: usize_of("max_nodes")?,
        min_nodes: usize_of("min_nodes")?,
        tree_depth: usize_of("tree_depth")?,
        msgpack_min_length: usize_of("msgpack_min_length")?,
        stream_magics: item(config, "stream_magics")?.extract()?,
        records,
        env: Env {
            lz4block_checksums: item(config, "lz4block_checksums")?.extract()?,
            deflate_ok: zlib_version == crate::deflate::version(),
            lz4_ok: item(config, "lz4_version")?.extract::<i64>()? == crate::lz4::version(),
            zstd_ok: item(config, "zstd_version")?.extract::<i64>()? == crate::zstd::version(),
            printable: item(config, "printable_bmp")?.extract()?,
        },
    };
    if built.min_auto_length == 0 || built.default_cap == 0 {
        return Err(PyValueError::new_err("configure: zero thresholds"));
    }
    if built.walk_depth > MAX_LAYERS {
        return Err(PyValueError::new_err(format!("configure: a walk deeper than {MAX_LAYERS} layers")));
    }
    let (stats, words) = crate::stats::config_from(&item(config, "stats")?.cast_into::<PyDict>()?)?;
    let mut slot = CONFIGURED.write().map_err(|_| PyRuntimeError::new_err("configuration lock poisoned"))?;
    *slot = Some(Arc::new(Configured { config: built, stats, words }));
    Ok(())
}

/// Whether configure() succeeded, and which libraries match the Python side's (their formats
/// are handed back otherwise): (configured, zlib, liblz4, libzstd).
#[pyfunction]
pub fn configured() -> (bool, bool, bool, bool) {
    match CONFIGURED.read().ok().and_then(|c| c.clone()) {
        Some(c) => (true, c.config.env.deflate_ok, c.config.env.lz4_ok, c.config.env.zstd_ok),
        None => (false, false, false, false),
    }
}

/// The containers the mirror knows: (label, grade).
#[pyfunction]
pub fn known_containers() -> Vec<(&'static str, char)> {
    KNOWN.iter().map(|(_, l, g)| (*l, *g)).collect()
}

fn step_of(obj: &Bound<'_, PyAny>) -> PyResult<Step> {
    if let Ok(s) = obj.cast::<PyString>() {
        // a str with a lone surrogate matches no key read here (they are handed back)
        return Ok(s.to_str().map(|k| Step::Key(k.to_owned())).unwrap_or(Step::Huge));
    }
    match obj.extract::<i128>() {
        Ok(i) => Ok(Step::Index(i)),
        Err(_) if obj.is_instance_of::<pyo3::types::PyInt>() => Ok(Step::Huge),
        Err(err) => Err(err),
    }
}

pub fn to_py<'py>(py: Python<'py>, node: &Node, src: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    Ok(match node {
        Node::Null => py.None().into_bound(py),
        Node::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Node::Int(i) => i.into_pyobject(py)?.into_any(),
        Node::Wide(i) => i.into_pyobject(py)?.into_any(),
        Node::BigInt(text) => py.get_type::<pyo3::types::PyInt>().call1((text.as_ref(),))?,
        Node::Float(f) => PyFloat::new(py, *f).into_any(),
        Node::Str(s) => PyString::new(py, s.get(src)).into_any(),
        Node::Bytes(a, n) => PyBytes::new(py, &src[*a as usize..(*a + *n) as usize]).into_any(),
        Node::BigBytes(a, n, negative) => {
            let bytes = PyBytes::new(py, &src[*a as usize..(*a + *n) as usize]);
            let value = py.get_type::<pyo3::types::PyInt>().call_method1("from_bytes", (bytes, "big"))?;
            if *negative {
                (-1i64).into_pyobject(py)?.into_any().call_method1("__sub__", (value,))?
            } else {
                value
            }
        }
        Node::List(items) => {
            let built: Vec<Bound<'py, PyAny>> =
                items.iter().map(|v| to_py(py, v, src)).collect::<PyResult<_>>()?;
            PyList::new(py, built)?.into_any()
        }
        Node::Map(entries) => {
            let dict = PyDict::new(py);
            for (k, v) in entries {
                dict.set_item(to_py(py, k, src)?, to_py(py, v, src)?)?;
            }
            dict.into_any()
        }
        Node::Ext => return Err(PyRuntimeError::new_err("an ext value reached a tree given back")),
    })
}

fn step_object<'py>(
    py: Python<'py>,
    step: &Step,
    original: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(match step {
        Step::Key(k) => PyString::new(py, k).into_any(),
        _ => original.clone(),
    })
}

/// The deepest miss of a path over the page, noted as query.answer.PathsSeen._note notes them.
struct Missed {
    depth: usize,
    step: usize,
    keys: Vec<String>,
    seen: HashSet<String>,
}

const MISS_KEYS: usize = 200;

/// Decoded bytes a page keeps for its answer at the most (then its other values go back).
const RETAINED: usize = 256 << 20;

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

fn configured_now() -> PyResult<Arc<Configured>> {
    CONFIGURED
        .read()
        .map_err(|_| PyRuntimeError::new_err("configuration lock poisoned"))?
        .clone()
        .ok_or_else(|| PyRuntimeError::new_err("cqlsh_ext_native is not configured"))
}

/// query_page(rows, places, conditions, outputs, order, keys, aggregates, grouped, cap,
/// undecodable_group) -> QueryPage: a payload query's page answer (see cqlsh_ext/payload/native.py
/// and query.rs).
#[pyfunction]
#[allow(clippy::too_many_arguments)] // the Python call's arguments, one each
pub fn query_page<'py>(
    py: Python<'py>,
    rows: usize,
    places: Vec<crate::query::QueryPlaceArg<'py>>,
    conditions: Vec<crate::query::CondArg<'py>>,
    outputs: Vec<Option<(usize, usize)>>,
    order: Vec<Option<(usize, usize)>>,
    keys: Vec<(usize, usize)>,
    aggregates: Vec<crate::query::AggArg>,
    grouped: bool,
    cap: usize,
    undecodable_group: &Bound<'py, PyAny>,
) -> PyResult<crate::query::QueryPage> {
    let configured = configured_now()?;
    crate::query::query_page_py(
        py,
        &configured.config,
        rows,
        places,
        conditions,
        outputs,
        order,
        keys,
        aggregates,
        grouped,
        cap,
        undecodable_group,
    )
}

/// describe_page(values, cap, bounds) -> DescribedPage: DESCRIBE PAYLOAD's partial description
/// of a page of one place's values (see cqlsh_ext/payload/native.py and describe.rs).
#[pyfunction]
pub fn describe_page<'py>(
    py: Python<'py>,
    values: &Bound<'py, PyAny>,
    cap: usize,
    bounds: crate::describe::BoundsArg,
) -> PyResult<crate::describe::DescribedPage> {
    let configured = configured_now()?;
    crate::describe::describe_page_py(py, &configured.config, values, cap, bounds)
}

/// measure_page(rows, places, cap, from_headers, spec) -> MeasuredPage: COMPRESSION STATS'
/// partial report of a page (see cqlsh_ext/payload/native.py and stats.rs).
#[pyfunction]
pub fn measure_page<'py>(
    py: Python<'py>,
    rows: usize,
    places: Vec<crate::stats::PlaceArg<'py>>,
    cap: usize,
    from_headers: bool,
    spec: crate::stats::SpecArg,
) -> PyResult<crate::stats::MeasuredPage> {
    let configured = configured_now()?;
    crate::stats::measure_page_py(
        py,
        &configured.config,
        &configured.stats,
        &configured.words,
        rows,
        places,
        cap,
        from_headers,
        spec,
    )
}

/// decode_page()'s answer, by name (see cqlsh_ext/payload/native.py).
#[pyclass(frozen, get_all, module = "cqlsh_ext_native")]
pub struct DecodedPage {
    kinds: Py<PyBytes>,
    labels: Py<PyList>,
    stored: Py<PyList>,
    decoded: Py<PyList>,
    cut: Py<PyBytes>,
    texts: Py<PyAny>,
    trees: Py<PyAny>,
    /// Per path: (values, found, miss).
    paths: Py<PyList>,
    handed_back: Py<PyList>,
}

/// decode_page(values, cap, paths, want_text, want_tree, missing, measure=false) -> DecodedPage:
/// see cqlsh_ext/payload/native.py.
#[pyfunction]
#[pyo3(signature = (values, cap, paths, want_text, want_tree, missing, measure=false))]
#[allow(clippy::too_many_arguments)] // the Python call's keywords, one argument each
pub fn decode_page<'py>(
    py: Python<'py>,
    values: &Bound<'py, PyAny>,
    cap: usize,
    paths: &Bound<'py, PyAny>,
    want_text: bool,
    want_tree: bool,
    missing: &Bound<'py, PyAny>,
    measure: bool,
) -> PyResult<DecodedPage> {
    let configured = CONFIGURED
        .read()
        .map_err(|_| PyRuntimeError::new_err("configuration lock poisoned"))?
        .clone()
        .ok_or_else(|| PyRuntimeError::new_err("cqlsh_ext_native is not configured"))?;
    let items: Vec<Bound<'py, PyAny>> = values.try_iter()?.collect::<PyResult<_>>()?;
    let mut path_objects: Vec<Vec<Bound<'py, PyAny>>> = Vec::new();
    let mut path_steps: Vec<Vec<Step>> = Vec::new();
    for path in paths.try_iter()? {
        let objects: Vec<Bound<'py, PyAny>> = path?.try_iter()?.collect::<PyResult<_>>()?;
        path_steps.push(objects.iter().map(step_of).collect::<PyResult<_>>()?);
        path_objects.push(objects);
    }
    let slices: Vec<Option<&[u8]>> =
        items.iter().map(|v| v.cast::<PyBytes>().ok().map(|b| b.as_bytes())).collect();
    let config = &configured.config;
    let want = Want { paths: &path_steps, tree: want_tree && !measure, measure, needles: &[] };
    let outcomes: Vec<Option<Outcome>> = py.detach(|| {
        // Decoded bytes kept for the answer (texts, values read), over the page: a page of
        // bombs must not hold a hundred outputs at the cap at once (the Python engine holds
        // one): past RETAINED, the rest of the page is handed back.
        let mut retained = 0usize;
        slices
            .iter()
            .map(|value| {
                let value = (*value)?;
                if retained > RETAINED {
                    return None;
                }
                let mut outcome =
                    match catch_unwind(AssertUnwindSafe(|| decode_value(config, value, cap, &want))) {
                        Ok(Ok(outcome)) => outcome,
                        Ok(Err(DErr::HandBack)) | Ok(Err(_)) => return None,
                        Err(_) => {
                            crate::lz4::abandon();
                            return None;
                        }
                    };
                let needed = match outcome.kind {
                    Kind::Text => want_text || want_tree || !outcome.reads.is_empty(),
                    Kind::Record => want_tree || !outcome.reads.is_empty(),
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
            .collect()
    });

    let n = items.len();
    let mut kinds: Vec<u8> = Vec::with_capacity(n);
    let mut cuts: Vec<u8> = Vec::with_capacity(n);
    let mut labels: Vec<Bound<'py, PyString>> = Vec::with_capacity(n);
    let mut stored: Vec<usize> = Vec::with_capacity(n);
    let mut decoded: Vec<usize> = Vec::with_capacity(n);
    let mut texts: Vec<Bound<'py, PyAny>> = Vec::new();
    let mut trees: Vec<Bound<'py, PyAny>> = Vec::new();
    let mut handed: Vec<usize> = Vec::new();
    let mut interned: Vec<(Label, Bound<'py, PyString>)> = Vec::new();
    let none = py.None().into_bound(py);
    let mut path_values: Vec<Vec<Bound<'py, PyAny>>> =
        path_steps.iter().map(|_| Vec::with_capacity(n)).collect();
    let mut path_found: Vec<bool> = vec![false; path_steps.len()];
    let mut path_missed: Vec<Option<Missed>> = path_steps.iter().map(|_| None).collect();
    let empty = PyString::new(py, "");

    for (i, outcome) in outcomes.iter().enumerate() {
        let Some(outcome) = outcome else {
            handed.push(i);
            kinds.push(Kind::HandedBack as u8);
            cuts.push(0);
            labels.push(empty.clone());
            stored.push(slices[i].map_or(0, |s| s.len()));
            decoded.push(0);
            if want_text {
                texts.push(none.clone());
            }
            if want_tree {
                trees.push(none.clone());
            }
            for values in path_values.iter_mut() {
                values.push(none.clone());
            }
            continue;
        };
        let src = outcome.bytes(slices[i].unwrap_or(&[]));
        kinds.push(outcome.kind as u8);
        cuts.push(outcome.cut as u8);
        let label = match interned.iter().find(|(known, _)| *known == outcome.label) {
            Some((_, label)) => label.clone(),
            None => {
                let label = PyString::new(py, &outcome.label.spell());
                interned.push((outcome.label, label.clone()));
                label
            }
        };
        labels.push(label);
        stored.push(outcome.stored);
        decoded.push(outcome.decoded);
        let text: &str = if outcome.kind == Kind::Text {
            std::str::from_utf8(&src[..outcome.text_len]).unwrap_or("")
        } else {
            ""
        };
        if want_text {
            texts.push(if outcome.kind == Kind::Text {
                PyString::new(py, text).into_any()
            } else {
                none.clone()
            });
        }
        if want_tree {
            trees.push(match &outcome.tree {
                Some(tree) => to_py(py, tree, src)?,
                None => none.clone(),
            });
        }
        for (p, values) in path_values.iter_mut().enumerate() {
            match outcome.reads.get(p) {
                None => values.push(none.clone()), // not readable: cut, binary, no known format, failed
                Some(PathRead::Node(node)) => {
                    path_found[p] = true;
                    values.push(to_py(py, node, src)?);
                }
                Some(PathRead::Missing { depth, keys }) => {
                    if !path_found[p] {
                        let keys: Vec<&str> = keys.iter().map(|k| k.get(src)).collect();
                        note(&mut path_missed[p], *depth, *depth, &keys);
                    }
                    values.push(missing.clone());
                }
            }
        }
    }

    let mut path_results: Vec<Bound<'py, PyAny>> = Vec::with_capacity(path_steps.len());
    for (p, values) in path_values.into_iter().enumerate() {
        // Noted only before the first value that had the path (as the engine's Page.missed).
        let miss = match &path_missed[p] {
            Some(m) => {
                let key = step_object(py, &path_steps[p][m.step], &path_objects[p][m.step])?;
                let keys = PyTuple::new(py, m.keys.iter().map(|k| PyString::new(py, k)))?;
                PyTuple::new(py, [m.depth.into_pyobject(py)?.into_any(), key, keys.into_any()])?.into_any()
            }
            _ => none.clone(),
        };
        let found = PyBool::new(py, path_found[p]).to_owned().into_any();
        path_results.push(PyTuple::new(py, [PyList::new(py, values)?.into_any(), found, miss])?.into_any());
    }
    let texts_obj = if want_text { PyList::new(py, texts)?.into_any() } else { none.clone() };
    let trees_obj = if want_tree { PyList::new(py, trees)?.into_any() } else { none.clone() };
    Ok(DecodedPage {
        kinds: PyBytes::new(py, &kinds).unbind(),
        labels: PyList::new(py, labels)?.unbind(),
        stored: PyList::new(py, stored)?.unbind(),
        decoded: PyList::new(py, decoded)?.unbind(),
        cut: PyBytes::new(py, &cuts).unbind(),
        texts: texts_obj.unbind(),
        trees: trees_obj.unbind(),
        paths: PyList::new(py, path_results)?.unbind(),
        handed_back: PyList::new(py, handed)?.unbind(),
    })
}
