//! Conversions between the core's values and Python's: a tree's node as the Python object the
//! engine builds, a path's steps from Python's keys and indexes, a page's values as byte slices.

use cqlsh_ext_core::tree::{Node, Step, Str};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

/// A path step from Python: a str key, an int index (a str with a lone surrogate, an int past
/// 128 bits: a step nothing read here matches; such values are handed back).
pub fn step_of(obj: &Bound<'_, PyAny>) -> PyResult<Step> {
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(s.to_str().map(|k| Step::Key(k.to_owned())).unwrap_or(Step::Huge));
    }
    match obj.extract::<i128>() {
        Ok(i) => Ok(Step::Index(i)),
        Err(_) if obj.is_instance_of::<PyInt>() => Ok(Step::Huge),
        Err(err) => Err(err),
    }
}

/// Each path's steps, and the objects Python gave for them.
pub type Paths<'py> = (Vec<Vec<Step>>, Vec<Vec<Bound<'py, PyAny>>>);

/// Paths as Python gives them (sequences of steps): their steps, and the step objects (a miss
/// names the key it wanted as Python gave it).
pub fn paths_of<'py>(paths: &[Bound<'py, PyAny>]) -> PyResult<Paths<'py>> {
    let mut steps = Vec::with_capacity(paths.len());
    let mut objects = Vec::with_capacity(paths.len());
    for path in paths {
        let items: Vec<Bound<'py, PyAny>> = path.try_iter()?.collect::<PyResult<_>>()?;
        steps.push(items.iter().map(step_of).collect::<PyResult<Vec<_>>>()?);
        objects.push(items);
    }
    Ok((steps, objects))
}

/// A page's values as the core reads them: a bytes object's bytes, else None (handed back).
pub fn slices<'a, 'py>(items: &'a [Bound<'py, PyAny>]) -> Vec<Option<&'a [u8]>> {
    items.iter().map(|v| v.cast::<PyBytes>().ok().map(|b| b.as_bytes())).collect()
}

/// A tree's node as the Python object the Python engine builds for it.
pub fn to_py<'py>(py: Python<'py>, node: &Node, src: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    Ok(match node {
        Node::Null => py.None().into_bound(py),
        Node::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Node::Int(i) => i.into_pyobject(py)?.into_any(),
        Node::Wide(i) => i.into_pyobject(py)?.into_any(),
        Node::BigInt(text) => py.get_type::<PyInt>().call1((text.as_ref(),))?,
        Node::Float(f) => PyFloat::new(py, *f).into_any(),
        Node::Str(s) => PyString::new(py, s.get(src)).into_any(),
        Node::Bytes(a, n) => PyBytes::new(py, &src[*a as usize..(*a + *n) as usize]).into_any(),
        Node::BigBytes(a, n, negative) => {
            let bytes = PyBytes::new(py, &src[*a as usize..(*a + *n) as usize]);
            let value = py.get_type::<PyInt>().call_method1("from_bytes", (bytes, "big"))?;
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

/// A JSON-able Python value as a tree, exactly (what the Python side's converters take it as):
/// None, bool, int, float, str, list, tuple and dict with str keys, of those exact types.
/// Anything else (a subclass, a Decimal, bytes, a str with a lone surrogate) raises ValueError:
/// the caller writes it the Python way.
pub fn node_strict(obj: &Bound<'_, PyAny>) -> PyResult<Node> {
    if obj.is_none() {
        return Ok(Node::Null);
    }
    if obj.is_exact_instance_of::<PyBool>() {
        return Ok(Node::Bool(obj.is_truthy()?));
    }
    if obj.is_exact_instance_of::<PyInt>() {
        return Ok(match obj.extract::<i64>() {
            Ok(small) => Node::Int(small),
            Err(_) => match obj.extract::<i128>() {
                Ok(wide) => Node::Wide(wide),
                Err(_) => Node::BigInt(obj.str()?.to_str()?.into()),
            },
        });
    }
    if obj.is_exact_instance_of::<PyFloat>() {
        return Ok(Node::Float(obj.extract::<f64>()?));
    }
    if let Ok(text) = obj.cast_exact::<PyString>() {
        return Ok(Node::Str(Str::Owned(text.to_str()?.into())));
    }
    if let Ok(items) = obj.cast_exact::<PyList>() {
        return Ok(Node::List(items.iter().map(|item| node_strict(&item)).collect::<PyResult<_>>()?));
    }
    if let Ok(items) = obj.cast_exact::<PyTuple>() {
        return Ok(Node::List(items.iter().map(|item| node_strict(&item)).collect::<PyResult<_>>()?));
    }
    if let Ok(dict) = obj.cast_exact::<PyDict>() {
        let mut entries = Vec::with_capacity(dict.len());
        for (k, v) in dict.iter() {
            let key =
                k.cast_exact::<PyString>().map_err(|_| PyValueError::new_err("a key that is no str"))?;
            entries.push((Node::Str(Str::Owned(key.to_str()?.into())), node_strict(&v)?));
        }
        return Ok(Node::Map(entries));
    }
    Err(PyValueError::new_err("a value the core does not write"))
}

/// A value the core handed back with its containers peeled (engine.rs: kind HandedBack), as the
/// Python engine reads it (payload.engine.Peeled): (the containers' labels, each one's output
/// size, the last one's output).
pub fn peeled_py<'py>(
    py: Python<'py>,
    outcome: &cqlsh_ext_core::engine::Outcome,
) -> PyResult<Bound<'py, PyTuple>> {
    let data: &[u8] = match &outcome.payload {
        cqlsh_ext_core::engine::Payload::Owned(data) => data,
        cqlsh_ext_core::engine::Payload::Stored => &[],
    };
    PyTuple::new(
        py,
        [
            PyTuple::new(py, outcome.label.chain())?.into_any(),
            PyTuple::new(py, &outcome.sizes)?.into_any(),
            PyBytes::new(py, data).into_any(),
        ],
    )
}

/// The values of a page handed back with their containers peeled, by their index in the page.
pub fn peeled_dict<'py>(
    py: Python<'py>,
    peeled: &[(usize, cqlsh_ext_core::engine::Outcome)],
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for (i, outcome) in peeled {
        out.set_item(i, peeled_py(py, outcome)?)?;
    }
    Ok(out)
}
