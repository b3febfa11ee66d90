//! describe_page(DescribeRequest) -> DescribedPage: DESCRIBE PAYLOAD's partial description of
//! a page (core: describe.rs), converted to named Python objects.

use cqlsh_ext_core::describe::{self, DStructure, DescribeConfig, Key, Num, Sketch};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyFloat, PyList, PyString, PyTuple};

use crate::arrow::Whole;
use crate::convert::{peeled_py, slices};
use crate::state::configured_now;

/// A page of one place's values and the bounds of describe/structure.py and sketch.py: the
/// values (`values`), or a RowsPage as the server sent it and the column whose cells are the
/// values (`column`), or an ArrowBinary (no `column`): of those two the nulls are counted, not
/// described, and `handed_back` names rows.
#[pyclass(frozen, module = "cqlsh_ext_native")]
pub struct DescribeRequest {
    #[pyo3(get)]
    values: Py<PyAny>,
    #[pyo3(get)]
    column: Option<usize>,
    #[pyo3(get)]
    cap: usize,
    bounds: (usize, i64, usize, usize, usize, usize, u32),
}

#[pymethods]
impl DescribeRequest {
    #[new]
    #[pyo3(signature = (values, *, column = None, cap, max_paths, max_visits, max_depth, exact, long_text, long_key, p))]
    #[allow(clippy::too_many_arguments)] // the request's fields, by keyword
    fn new(
        values: Py<PyAny>,
        column: Option<usize>,
        cap: usize,
        max_paths: usize,
        max_visits: i64,
        max_depth: usize,
        exact: usize,
        long_text: usize,
        long_key: usize,
        p: u32,
    ) -> Self {
        DescribeRequest {
            values,
            column,
            cap,
            bounds: (max_paths, max_visits, max_depth, exact, long_text, long_key, p),
        }
    }
}

/// How many values of the page were read as one kind and label.
#[pyclass(frozen, get_all, module = "cqlsh_ext_native")]
pub struct Encoding {
    /// The engine's kind code (KINDS names it).
    kind: u8,
    label: String,
    values: u64,
}

/// Lengths counted at a node (strings' characters, lists' items): how many, the least, the
/// most, the total.
#[pyclass(frozen, get_all, module = "cqlsh_ext_native")]
pub struct Lengths {
    count: u64,
    least: u64,
    most: u64,
    total: u64,
}

/// A path's sketch over the page: each distinct value's count while few (`counts`, the keys as
/// describe.sketch.key makes them), else a HyperLogLog's registers.
#[pyclass(frozen, get_all, module = "cqlsh_ext_native")]
pub struct SketchPartial {
    counts: Option<Vec<(Py<PyAny>, u64)>>,
    registers: Option<Py<PyBytes>>,
}

/// A path's node of the page's structure (describe.structure.Node's fields).
#[pyclass(frozen, get_all, module = "cqlsh_ext_native")]
pub struct NodePartial {
    present: u64,
    seen: u64,
    types: Vec<(String, u64)>,
    children: Vec<(String, Py<NodePartial>)>,
    items: Option<Py<NodePartial>>,
    folded: Option<Py<NodePartial>>,
    key_kinds: Vec<(String, u64)>,
    keys: Option<Py<SketchPartial>>,
    strings: Py<Lengths>,
    lists: Py<Lengths>,
    low: Py<PyAny>,
    high: Py<PyAny>,
    values: Option<Py<SketchPartial>>,
}

/// The page's partial structure: values walked, occurrences untracked, values unfinished and
/// too deep, the root node (describe.structure.Structure.from_partial merges it).
#[pyclass(frozen, get_all, module = "cqlsh_ext_native")]
pub struct StructurePartial {
    values: u64,
    untracked: u64,
    unfinished: u64,
    too_deep: u64,
    root: Py<NodePartial>,
}

/// describe_page()'s answer: the encodings of the values read here, the indexes of those left to
/// the Python engine (failed and cut values, keys that are not ASCII text, numbers past 128
/// bits; of a RowsPage's, their rows), the page's partial structure, the nulls of a RowsPage's
/// column (0 for values).
#[pyclass(frozen, get_all, module = "cqlsh_ext_native")]
pub struct DescribedPage {
    encodings: Vec<Py<Encoding>>,
    handed_back: Vec<usize>,
    /// Of those, the values handed back with their containers peeled: (stored value, chain,
    /// sizes, payload), for the Python engine to read the payloads from.
    peeled: Py<PyList>,
    nulls: usize,
    structure: Py<StructurePartial>,
}

fn key_py<'py>(py: Python<'py>, k: &Key) -> PyResult<Bound<'py, PyAny>> {
    let tagged = |tag: &str, value: Bound<'py, PyAny>| -> PyResult<Bound<'py, PyAny>> {
        Ok(PyTuple::new(py, [PyString::new(py, tag).into_any(), value])?.into_any())
    };
    Ok(match k {
        Key::Str(s) => PyString::new(py, s).into_any(),
        Key::LongStr(prefix, h) | Key::LongBytes(prefix, h) => PyTuple::new(
            py,
            [
                PyString::new(py, "long").into_any(),
                PyString::new(py, prefix).into_any(),
                h.into_pyobject(py)?.into_any(),
            ],
        )?
        .into_any(),
        Key::Int(i) => tagged("int", i.into_pyobject(py)?.into_any())?,
        Key::Float(bits) => tagged("float", PyFloat::new(py, f64::from_bits(*bits)).into_any())?,
        Key::Nan => tagged("float", py.None().into_bound(py))?,
        Key::Bool(b) => tagged("bool", PyBool::new(py, *b).to_owned().into_any())?,
        Key::Null => py.None().into_bound(py),
        Key::Bytes(b) => tagged("bytes", PyBytes::new(py, b).into_any())?,
    })
}

fn sketch_py(py: Python<'_>, sketch: &Option<Sketch>) -> PyResult<Option<Py<SketchPartial>>> {
    let partial = match sketch {
        None => return Ok(None),
        Some(Sketch::Counts(counts, _)) => SketchPartial {
            counts: Some(
                counts.iter().map(|(k, n)| Ok((key_py(py, k)?.unbind(), *n))).collect::<PyResult<_>>()?,
            ),
            registers: None,
        },
        Some(Sketch::Registers(registers)) => {
            SketchPartial { counts: None, registers: Some(PyBytes::new(py, registers).unbind()) }
        }
    };
    Ok(Some(Py::new(py, partial)?))
}

fn num_py(py: Python<'_>, n: &Option<Num>) -> PyResult<Py<PyAny>> {
    Ok(match n {
        None => py.None(),
        Some(Num::Int(i)) => i.into_pyobject(py)?.into_any().unbind(),
        Some(Num::Float(f)) => PyFloat::new(py, *f).into_any().unbind(),
    })
}

fn lengths(py: Python<'_>, (count, least, most, total): (u64, u64, u64, u64)) -> PyResult<Py<Lengths>> {
    Py::new(py, Lengths { count, least, most, total })
}

fn node_py(py: Python<'_>, st: &DStructure, at: usize) -> PyResult<Py<NodePartial>> {
    let node = &st.nodes[at];
    let counts = |list: &Vec<(&'static str, u64)>| list.iter().map(|(k, n)| ((*k).to_owned(), *n)).collect();
    let opt =
        |i: Option<usize>| -> PyResult<Option<Py<NodePartial>>> { i.map(|i| node_py(py, st, i)).transpose() };
    let children =
        node.children.iter().map(|(k, c)| Ok((k.clone(), node_py(py, st, *c)?))).collect::<PyResult<_>>()?;
    let partial = NodePartial {
        present: node.present,
        seen: node.seen,
        types: counts(&node.types),
        children,
        items: opt(node.items)?,
        folded: opt(node.folded)?,
        key_kinds: counts(&node.key_kinds),
        keys: sketch_py(py, &node.keys)?,
        strings: lengths(py, node.strings)?,
        lists: lengths(py, node.lists)?,
        low: num_py(py, &node.low)?,
        high: num_py(py, &node.high)?,
        values: sketch_py(py, &node.values)?,
    };
    Py::new(py, partial)
}

/// The values handed back peeled, each with its stored bytes: (stored, chain, sizes, payload).
fn peeled_list<'py>(
    py: Python<'py>,
    peeled: &[(usize, cqlsh_ext_core::engine::Outcome)],
    values: &[Option<&[u8]>],
) -> PyResult<Py<PyList>> {
    let mut found = Vec::with_capacity(peeled.len());
    for (i, outcome) in peeled {
        let parts = peeled_py(py, outcome)?;
        let stored = PyBytes::new(py, values[*i].unwrap_or(&[])).into_any();
        found.push(PyTuple::new(py, [stored, parts.get_item(0)?, parts.get_item(1)?, parts.get_item(2)?])?);
    }
    Ok(PyList::new(py, found)?.unbind())
}

/// A page of one place's values described with the GIL released.
#[pyfunction]
pub fn describe_page<'py>(py: Python<'py>, request: &Bound<'py, DescribeRequest>) -> PyResult<DescribedPage> {
    let configured = configured_now()?;
    let r = request.get();
    let (max_paths, max_visits, max_depth, exact, long_text, long_key, p) = r.bounds;
    let dcfg = DescribeConfig::new(max_paths, max_visits, max_depth, exact, long_text, long_key, p)
        .map_err(|why| PyValueError::new_err(format!("describe_page: {why}")))?;
    let source = r.values.bind(py);
    let config = &configured.config;
    let cap = r.cap;
    let (mut described, rows, nulls, peeled) = match (Whole::of(source, r.column)?, r.column) {
        (Some(whole), _) => {
            // The server's page or an Arrow column: the cells borrowed, the nulls counted.
            let cells = whole.cells()?;
            let rows: Vec<usize> = (0..cells.len()).filter(|&row| cells[row].is_some()).collect();
            let values: Vec<Option<&[u8]>> = cells.iter().filter(|cell| cell.is_some()).copied().collect();
            let nulls = cells.len() - values.len();
            let described = py.detach(|| describe::describe_page(config, &values, cap, &dcfg));
            let peeled = peeled_list(py, &described.peeled, &values)?;
            (described, Some(rows), nulls, peeled)
        }
        (None, Some(_)) => {
            return Err(PyValueError::new_err("describe_page: a column of something not a RowsPage"))
        }
        (None, None) => {
            let items: Vec<Bound<'py, PyAny>> = source.try_iter()?.collect::<PyResult<_>>()?;
            let values = slices(&items);
            let described = py.detach(|| describe::describe_page(config, &values, cap, &dcfg));
            let peeled = peeled_list(py, &described.peeled, &values)?;
            (described, None, 0, peeled)
        }
    };
    if let Some(rows) = rows {
        described.handed_back = described.handed_back.iter().map(|&i| rows[i]).collect();
    }
    let structure = &described.structure;
    let partial = StructurePartial {
        values: structure.values,
        untracked: structure.untracked,
        unfinished: structure.unfinished,
        too_deep: structure.too_deep,
        root: node_py(py, structure, 0)?,
    };
    Ok(DescribedPage {
        encodings: described
            .encodings
            .iter()
            .map(|(kind, label, n)| {
                Py::new(py, Encoding { kind: *kind as u8, label: label.spell(), values: *n })
            })
            .collect::<PyResult<_>>()?,
        handed_back: described.handed_back,
        peeled,
        nulls,
        structure: Py::new(py, partial)?,
    })
}
