//! decode_page(DecodeRequest) -> DecodedPage: the engine's page read (core: page.rs), its
//! answer converted to Python's objects.

use cqlsh_ext_core::engine::{Kind, Label};
use cqlsh_ext_core::page::{self, PageWant};
use cqlsh_ext_core::tree::{PathRead, Step};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use crate::convert::{paths_of, peeled_dict, slices, to_py};
use crate::state::configured_now;

/// What decode_page reads of a page of one column's values (cqlsh_ext/payload/native.py).
#[pyclass(frozen, module = "cqlsh_ext_native")]
pub struct DecodeRequest {
    #[pyo3(get)]
    values: Py<PyAny>,
    #[pyo3(get)]
    cap: usize,
    paths: Py<PyList>,
    text: bool,
    trees: bool,
    missing: Py<PyAny>,
    measure: bool,
    text_limit: usize,
    json: bool,
}

impl DecodeRequest {
    pub fn values(&self) -> &Py<PyAny> {
        &self.values
    }

    pub fn paths(&self) -> &Py<PyList> {
        &self.paths
    }

    pub fn text(&self) -> bool {
        self.text
    }

    pub fn cap(&self) -> usize {
        self.cap
    }
}

#[pymethods]
impl DecodeRequest {
    #[new]
    #[pyo3(signature = (values, *, cap, paths = None, text = false, trees = false, missing = None, measure = false,
                        text_limit = 0, json = true))]
    #[allow(clippy::too_many_arguments)] // the request's fields, by keyword
    fn new(
        py: Python<'_>,
        values: Py<PyAny>,
        cap: usize,
        paths: Option<&Bound<'_, PyAny>>,
        text: bool,
        trees: bool,
        missing: Option<Py<PyAny>>,
        measure: bool,
        text_limit: usize,
        json: bool,
    ) -> PyResult<Self> {
        let paths = match paths {
            Some(paths) => PyList::new(py, paths.try_iter()?.collect::<PyResult<Vec<_>>>()?)?.unbind(),
            None => PyList::empty(py).unbind(),
        };
        Ok(DecodeRequest {
            values,
            cap,
            paths,
            text,
            trees,
            missing: missing.unwrap_or_else(|| py.None()),
            measure,
            text_limit,
            json,
        })
    }
}

/// Where a path stopped furthest in over a page: its depth, the key wanted there (as the
/// request gave it), the string keys of the mapping there (at most MISS_KEYS).
#[pyclass(frozen, get_all, module = "cqlsh_ext_native")]
pub struct PathMiss {
    depth: usize,
    key: Py<PyAny>,
    keys: Py<PyTuple>,
}

/// One path's answer: its value in each value of the page, whether some value had it, the
/// deepest miss before the first that had it.
#[pyclass(frozen, get_all, module = "cqlsh_ext_native")]
pub struct PathColumn {
    values: Py<PyList>,
    found: bool,
    miss: Option<Py<PathMiss>>,
}

/// decode_page()'s answer (cqlsh_ext/payload/native.py describes each field).
#[pyclass(frozen, get_all, module = "cqlsh_ext_native")]
pub struct DecodedPage {
    kinds: Py<PyBytes>,
    labels: Py<PyList>,
    stored: Py<PyList>,
    decoded: Py<PyList>,
    cut: Py<PyBytes>,
    texts: Py<PyAny>,
    /// With texts: per value, 1 when its text is clean (no control character: cqlsh's escaping
    /// would change nothing but backslashes), else 0.
    clean: Py<PyAny>,
    trees: Py<PyAny>,
    paths: Vec<Py<PathColumn>>,
    handed_back: Vec<usize>,
    /// The values handed back with their containers peeled, by index: (chain, sizes, payload).
    peeled: Py<PyDict>,
}

/// A page of one column's values decoded with the GIL released; its answer in columns.
#[pyfunction]
pub fn decode_page<'py>(py: Python<'py>, request: &Bound<'py, DecodeRequest>) -> PyResult<DecodedPage> {
    let configured = configured_now()?;
    let request = request.get();
    let items: Vec<Bound<'py, PyAny>> = request.values.bind(py).try_iter()?.collect::<PyResult<_>>()?;
    let path_items: Vec<Bound<'py, PyAny>> = request.paths.bind(py).iter().collect();
    let (steps, step_objects) = paths_of(&path_items)?;
    let values = slices(&items);
    let want = PageWant {
        paths: &steps,
        text: request.text,
        tree: request.trees,
        text_tree: true,
        gaps: false,
        text_values: false,
        measure: request.measure,
        json: request.json,
    };
    let config = &configured.config;
    let answer = py.detach(|| page::decode_page(config, &values, request.cap, &want));

    let (want_text, want_tree) = (request.text, request.trees);
    let n = items.len();
    let none = py.None().into_bound(py);
    let missing = request.missing.bind(py);
    let empty = PyString::new(py, "");
    let mut kinds: Vec<u8> = Vec::with_capacity(n);
    let mut cuts: Vec<u8> = Vec::with_capacity(n);
    let mut labels: Vec<Bound<'py, PyString>> = Vec::with_capacity(n);
    let mut stored: Vec<usize> = Vec::with_capacity(n);
    let mut decoded: Vec<usize> = Vec::with_capacity(n);
    let mut texts: Vec<Bound<'py, PyAny>> = Vec::new();
    let mut clean: Vec<u8> = Vec::new();
    let mut trees: Vec<Bound<'py, PyAny>> = Vec::new();
    let mut interned: Vec<(Label, Bound<'py, PyString>)> = Vec::new();
    let mut path_values: Vec<Vec<Bound<'py, PyAny>>> = steps.iter().map(|_| Vec::with_capacity(n)).collect();
    for (i, outcome) in answer.outcomes.iter().enumerate() {
        let Some(outcome) = outcome else {
            kinds.push(Kind::HandedBack as u8);
            cuts.push(0);
            labels.push(empty.clone());
            stored.push(values[i].map_or(0, |s| s.len()));
            decoded.push(0);
            if want_text {
                texts.push(none.clone());
                clean.push(0);
            }
            if want_tree {
                trees.push(none.clone());
            }
            for column in path_values.iter_mut() {
                column.push(none.clone());
            }
            continue;
        };
        let value = values[i].unwrap_or(&[]);
        let src = outcome.bytes(value);
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
        if want_text {
            let text = page::text_of(outcome, value);
            let is_clean = text.is_some_and(|t| cqlsh_ext_core::text::clean(t.as_bytes()));
            clean.push(is_clean as u8);
            // a text with something to escape comes whole: its reader reads it whole (the display
            // writes a JSON text with line breaks on one line, from its JSON)
            let limit = if is_clean { request.text_limit } else { 0 };
            texts.push(match text {
                Some(text) => PyString::new(py, page::first_chars(text, limit)).into_any(),
                None => none.clone(),
            });
        }
        if want_tree {
            trees.push(match &outcome.tree {
                Some(tree) => to_py(py, tree, src)?,
                None => none.clone(),
            });
        }
        for (p, column) in path_values.iter_mut().enumerate() {
            column.push(match outcome.reads.get(p) {
                None => none.clone(), // not readable: cut, binary, no known format, failed
                Some(PathRead::Node(node)) => to_py(py, node, src)?,
                Some(PathRead::Missing { .. }) => missing.clone(),
            });
        }
    }
    let mut paths = Vec::with_capacity(steps.len());
    for (p, column) in path_values.into_iter().enumerate() {
        let summary = &answer.paths[p];
        let miss = match &summary.miss {
            Some(m) => {
                let key = match &steps[p][m.step] {
                    Step::Key(k) => PyString::new(py, k).into_any(),
                    _ => step_objects[p][m.step].clone(),
                };
                let keys = PyTuple::new(py, m.keys.iter().map(|k| PyString::new(py, k)))?.unbind();
                Some(Py::new(py, PathMiss { depth: m.depth, key: key.unbind(), keys })?)
            }
            None => None,
        };
        paths.push(Py::new(
            py,
            PathColumn { values: PyList::new(py, column)?.unbind(), found: summary.found, miss },
        )?);
    }
    Ok(DecodedPage {
        kinds: PyBytes::new(py, &kinds).unbind(),
        labels: PyList::new(py, labels)?.unbind(),
        stored: PyList::new(py, stored)?.unbind(),
        decoded: PyList::new(py, decoded)?.unbind(),
        cut: PyBytes::new(py, &cuts).unbind(),
        texts: if want_text { PyList::new(py, texts)?.into_any().unbind() } else { py.None() },
        clean: if want_text { PyBytes::new(py, &clean).into_any().unbind() } else { py.None() },
        trees: if want_tree { PyList::new(py, trees)?.into_any().unbind() } else { py.None() },
        paths,
        handed_back: answer.handed_back(),
        peeled: peeled_dict(py, &answer.peeled)?.unbind(),
    })
}
