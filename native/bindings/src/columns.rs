//! page_columns(DecodeRequest, names) -> PageColumns: the engine's page read answered as columns
//! (core: page.rs `page_columns`, columns.rs). The page and each column are Arrow arrays through
//! the C data interface as PyCapsules (`__arrow_c_array__`, `__arrow_c_stream__`: pyarrow.array,
//! pyarrow.record_batch), and plain Python sequences too (what pyarrow's to_pylist() would give),
//! so a reader without pyarrow reads the same values.

use std::ffi::{c_void, CStr};

use cqlsh_ext_core::columns::{export_data, export_schema, export_stream, json_text, Array, Value};
use cqlsh_ext_core::engine::Kind;
use cqlsh_ext_core::page::{self, Column as CoreColumn, Filled, PageAnswer, PageWant, KIND_NAMES};
use cqlsh_ext_core::tree::{Node, Str};
use pyo3::exceptions::{PyIndexError, PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyCapsule, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::convert::{paths_of, peeled_dict, slices};
use crate::decode::DecodeRequest;
use crate::state::configured_now;

/// A C struct handed to a capsule (its raw pointers are the struct's own; the capsule is the only
/// owner until a consumer moves the struct out).
#[repr(transparent)]
struct Sendable<T>(T);

// SAFETY: the struct's pointers are owned by its private data, which nothing else references but
// its buffers' words: those are shared through an Arc (columns.rs Buffer) and never written once made.
unsafe impl<T> Send for Sendable<T> {}

const SCHEMA: &CStr = c"arrow_schema";
const ARRAY: &CStr = c"arrow_array";
const STREAM: &CStr = c"arrow_array_stream";

fn array_capsules<'py>(py: Python<'py>, array: &Array) -> PyResult<Bound<'py, PyTuple>> {
    let schema = Sendable(export_schema(&array.field));
    let data = Sendable(export_data(array.data.clone()));
    let schema = PyCapsule::new_with_value_and_destructor(py, schema, SCHEMA, |mut s, _: *mut c_void| {
        if let Some(release) = s.0.release {
            // SAFETY: not moved out by a consumer (its release is still set): ours to release
            unsafe { release(&mut s.0) }
        }
    })?;
    let data = PyCapsule::new_with_value_and_destructor(py, data, ARRAY, |mut a, _: *mut c_void| {
        if let Some(release) = a.0.release {
            // SAFETY: as above
            unsafe { release(&mut a.0) }
        }
    })?;
    PyTuple::new(py, [schema.into_any(), data.into_any()])
}

fn stream_capsule<'py>(py: Python<'py>, batch: Array) -> PyResult<Bound<'py, PyCapsule>> {
    let stream = Sendable(export_stream(batch));
    PyCapsule::new_with_value_and_destructor(py, stream, STREAM, |mut s, _: *mut c_void| {
        if let Some(release) = s.0.release {
            // SAFETY: as above
            unsafe { release(&mut s.0) }
        }
    })
}

/// A column value as the Python object pyarrow's to_pylist() gives for it.
fn value_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Int(i) => i.into_pyobject(py)?.into_any(),
        Value::Float(f) => PyFloat::new(py, *f).into_any(),
        Value::Big(text) | Value::Str(text) | Value::Json(text) => PyString::new(py, text).into_any(),
        Value::Bytes(b) => PyBytes::new(py, b).into_any(),
    })
}

/// A Python object as a tree (what the Python engine built for a value the core handed back).
fn node_from(obj: &Bound<'_, PyAny>) -> PyResult<Node> {
    Ok(if obj.is_none() {
        Node::Null
    } else if let Ok(b) = obj.cast::<PyBool>() {
        Node::Bool(b.is_true())
    } else if let Ok(i) = obj.cast::<PyInt>() {
        match i.extract::<i64>() {
            Ok(small) => Node::Int(small),
            Err(_) => Node::BigInt(i.str()?.to_string_lossy().into()),
        }
    } else if let Ok(f) = obj.cast::<PyFloat>() {
        Node::Float(f.value())
    } else if let Ok(s) = obj.cast::<PyString>() {
        Node::Str(Str::Owned(s.to_string_lossy().into()))
    } else if let Ok(b) = obj.cast::<PyBytes>() {
        // a byte string inside a container: spelt "0x..." (a leaf is kept as bytes by value_from)
        let hex: String = b.as_bytes().iter().map(|x| format!("{x:02x}")).collect();
        Node::Str(Str::Owned(format!("0x{hex}").into()))
    } else if let Ok(d) = obj.cast::<PyDict>() {
        let mut entries = Vec::with_capacity(d.len());
        for (k, v) in d.iter() {
            entries.push((node_from(&k)?, node_from(&v)?));
        }
        Node::Map(entries)
    } else if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        Node::List(obj.try_iter()?.map(|item| node_from(&item?)).collect::<PyResult<_>>()?)
    } else {
        // anything else the Python engine builds (a tag, a cut marker): its repr, as text
        Node::Str(Str::Owned(obj.repr()?.to_string_lossy().into()))
    })
}

/// A Python object as a column value (payload/native.py's `column_value` is the same mapping).
fn value_from(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Value::Bytes(b.as_bytes().to_vec()));
    }
    let node = node_from(obj)?;
    Ok(match node {
        Node::Map(_) | Node::List(_) => {
            let mut text = String::new();
            json_text(&node, &[], &mut text);
            Value::Json(text)
        }
        other => cqlsh_ext_core::columns::value_of(&other, &[]),
    })
}

/// One column of a page: an Arrow array (`__arrow_c_array__`) and a sequence of Python values.
#[pyclass(frozen, module = "cqlsh_ext_native")]
pub struct Column {
    #[pyo3(get)]
    name: String,
    array: Array,
    values: Vec<Value>,
}

#[pymethods]
impl Column {
    /// The Arrow type's format string (C data interface: "u" utf8, "l" int64, "g" float64, "b"
    /// bool, "z" binary, "n" null, "+ud:..." a dense union).
    #[getter]
    fn format(&self) -> String {
        self.array.field.format.clone()
    }

    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let _ = requested_schema; // the column's own type is given; a consumer casts
        array_capsules(py, &self.array)
    }

    fn __len__(&self) -> usize {
        self.values.len()
    }

    fn __getitem__<'py>(&self, py: Python<'py>, index: isize) -> PyResult<Bound<'py, PyAny>> {
        let n = self.values.len() as isize;
        let at = if index < 0 { index + n } else { index };
        if at < 0 || at >= n {
            return Err(PyIndexError::new_err("column index out of range"));
        }
        value_py(py, &self.values[at as usize])
    }

    /// The values as a list of Python objects.
    fn to_pylist<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let items: Vec<Bound<'py, PyAny>> =
            self.values.iter().map(|v| value_py(py, v)).collect::<PyResult<_>>()?;
        PyList::new(py, items)
    }

    fn __repr__(&self) -> String {
        format!("Column({:?}, {} values, {})", self.name, self.values.len(), self.array.field.format)
    }
}

/// A page's answer as named columns (a Mapping of Column), one record batch for Arrow.
#[pyclass(module = "cqlsh_ext_native")]
pub struct PageColumns {
    answer: PageAnswer,
    items: Vec<Py<PyAny>>,
    paths: Vec<String>,
    text: bool,
    filled: Vec<Option<Filled>>,
    columns: Option<Vec<CoreColumn>>,
}

impl PageColumns {
    fn columns(&mut self, py: Python<'_>) -> &Vec<CoreColumn> {
        if self.columns.is_none() {
            let bound: Vec<Bound<'_, PyAny>> = self.items.iter().map(|o| o.bind(py).clone()).collect();
            let values = slices(&bound);
            self.columns =
                Some(page::page_columns(&self.answer, &values, &self.paths, self.text, &self.filled));
        }
        self.columns.as_ref().expect("built above")
    }
}

#[pymethods]
impl PageColumns {
    /// The indexes of the values the core handed back (fill() each with the Python engine's
    /// answer; a value left unfilled has no kind).
    #[getter]
    fn handed_back(&self) -> Vec<usize> {
        self.answer.handed_back()
    }

    /// The values handed back with their containers peeled, by index: (chain, sizes, payload).
    #[getter]
    fn peeled<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        peeled_dict(py, &self.answer.peeled)
    }

    #[getter]
    fn num_rows(&self) -> usize {
        self.answer.outcomes.len()
    }

    /// The Python engine's answer for a value the core handed back: its view's kind and label,
    /// decoded size, cut, text (a text value's), and per path its value (the Python object).
    #[pyo3(signature = (index, *, kind, label, decoded, cut, text, values))]
    #[allow(clippy::too_many_arguments)] // the answer's fields, by keyword
    fn fill(
        &mut self,
        index: usize,
        kind: &str,
        label: String,
        decoded: usize,
        cut: bool,
        text: Option<String>,
        values: Vec<Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        if index >= self.answer.outcomes.len() || self.answer.outcomes[index].is_some() {
            return Err(PyValueError::new_err(format!("fill: value {index} was not handed back")));
        }
        let kind = match KIND_NAMES.iter().position(|k| *k == kind) {
            Some(0) => Kind::Text,
            Some(1) => Kind::Record,
            Some(2) => Kind::Binary,
            Some(3) => Kind::NoFormat,
            Some(4) => Kind::Failed,
            _ => return Err(PyValueError::new_err(format!("fill: kind {kind:?}"))),
        };
        if values.len() != self.paths.len() {
            return Err(PyValueError::new_err("fill: one value a path"));
        }
        let values = values.iter().map(value_from).collect::<PyResult<_>>()?;
        self.filled[index] = Some(Filled { kind, label, decoded, cut, text, values });
        self.columns = None;
        Ok(())
    }

    /// The columns' names, in order.
    fn keys(&mut self, py: Python<'_>) -> Vec<String> {
        self.columns(py).iter().map(|c| c.name.clone()).collect()
    }

    fn __len__(&mut self, py: Python<'_>) -> usize {
        self.columns(py).len()
    }

    fn __contains__(&mut self, py: Python<'_>, name: &str) -> bool {
        self.columns(py).iter().any(|c| c.name == name)
    }

    fn __iter__(&mut self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let names = PyList::new(py, self.keys(py))?;
        Ok(names.try_iter()?.into_any().unbind())
    }

    fn __getitem__(&mut self, py: Python<'_>, name: &str) -> PyResult<Column> {
        let column = self
            .columns(py)
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| PyKeyError::new_err(name.to_owned()))?;
        Ok(Column { name: column.name.clone(), array: column.array(), values: column.values.clone() })
    }

    /// The columns as plain lists, by name.
    fn to_pydict<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for column in self.columns(py) {
            let items: Vec<Bound<'py, PyAny>> =
                column.values.iter().map(|v| value_py(py, v)).collect::<PyResult<_>>()?;
            out.set_item(&column.name, PyList::new(py, items)?)?;
        }
        Ok(out)
    }

    /// The page as one Arrow record batch (a struct array of the columns).
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_array__<'py>(
        &mut self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let _ = requested_schema;
        let batch = page::batch(self.columns(py));
        array_capsules(py, &batch)
    }

    /// The page as an Arrow stream of one record batch.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &mut self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let batch = page::batch(self.columns(py));
        stream_capsule(py, batch)
    }
}

/// A page of one column's values decoded (as decode_page decodes it, the GIL released) and
/// answered as columns; `names` names the request's paths' columns.
#[pyfunction]
pub fn page_columns<'py>(
    py: Python<'py>,
    request: &Bound<'py, DecodeRequest>,
    names: Vec<String>,
) -> PyResult<PageColumns> {
    let configured = configured_now()?;
    let request = request.get();
    let items: Vec<Bound<'py, PyAny>> = request.values().bind(py).try_iter()?.collect::<PyResult<_>>()?;
    let path_items: Vec<Bound<'py, PyAny>> = request.paths().bind(py).iter().collect();
    if names.len() != path_items.len() {
        return Err(PyValueError::new_err("page_columns: one name a path"));
    }
    let (steps, _) = paths_of(&path_items)?;
    let values = slices(&items);
    let want = PageWant {
        paths: &steps,
        text: request.text(),
        tree: false,
        text_tree: true,
        gaps: false,
        text_values: false,
        measure: false,
        json: true,
    };
    let config = &configured.config;
    let cap = request.cap();
    let answer = py.detach(|| page::decode_page(config, &values, cap, &want));
    let n = answer.outcomes.len();
    Ok(PageColumns {
        answer,
        items: items.into_iter().map(Bound::unbind).collect(),
        paths: names,
        text: request.text(),
        filled: (0..n).map(|_| None).collect(),
        columns: None,
    })
}
