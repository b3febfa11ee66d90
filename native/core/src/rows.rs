//! A RESULT page's rows section as the server sent it (native protocol v4/v5, `Rows` kind):
//! after the metadata and the row count, for each row, for each column, a cell `[int32 length]
//! [bytes]`; length -1 is null (and -2, "unset", which a server never sends in a result, is read
//! as null too, as the driver reads any negative length), 0 an empty value. The driver's
//! metadata parse (cassandra/protocol.py) stays in Python; this reads the cells the readers ask
//! for, borrowing them from the page, and refuses a page that is not exactly `rows` x `columns`
//! cells long, one line saying where.

/// One cell: None for null, else its bytes (empty for an empty value).
pub type CellRef<'a> = Option<&'a [u8]>;

/// Each wanted column's cells, `wanted[k]`'s in `out[k]`, one a row, borrowed from `body`.
/// An error (never a panic) when a length runs past the end, is below -2, a column index is not
/// below `columns`, or bytes are left after the last row.
pub fn split_columns<'a>(
    body: &'a [u8],
    rows: usize,
    columns: usize,
    wanted: &[usize],
) -> Result<Vec<Vec<CellRef<'a>>>, String> {
    if let Some(&bad) = wanted.iter().find(|&&c| c >= columns) {
        return Err(format!("column {bad} asked of a page of {columns} columns"));
    }
    // Where each column goes: its slots in the answer (a column may be asked twice).
    let mut slots: Vec<Vec<usize>> = vec![Vec::new(); columns];
    for (k, &c) in wanted.iter().enumerate() {
        slots[c].push(k);
    }
    fits(body, rows, columns)?;
    let mut out: Vec<Vec<CellRef<'a>>> = wanted.iter().map(|_| Vec::with_capacity(rows)).collect();
    walk(body, rows, columns, |column, _end, cell| {
        for &k in &slots[column] {
            out[k].push(cell);
        }
    })?;
    Ok(out)
}

/// The bytes of the rows `wanted` names (each below `rows`), in its order, each row's cells as
/// the server sent them: a rows section of those rows alone (the driver's own row parser reads
/// it). The same refusals as split_columns.
pub fn select_rows(body: &[u8], rows: usize, columns: usize, wanted: &[usize]) -> Result<Vec<u8>, String> {
    if let Some(&bad) = wanted.iter().find(|&&row| row >= rows) {
        return Err(format!("row {bad} asked of a page of {rows} rows"));
    }
    fits(body, rows, columns)?;
    // Where each row ends (a row of no columns is empty: it ends where it starts, at 0).
    let mut ends: Vec<usize> = if columns == 0 { vec![0; rows] } else { Vec::with_capacity(rows) };
    walk(body, rows, columns, |column, end, _cell| {
        if column + 1 == columns {
            ends.push(end);
        }
    })?;
    let start = |row: usize| if row == 0 { 0 } else { ends[row - 1] };
    let mut out = Vec::with_capacity(wanted.iter().map(|&row| ends[row] - start(row)).sum());
    for &row in wanted {
        out.extend_from_slice(&body[start(row)..ends[row]]);
    }
    Ok(out)
}

/// A row count the body cannot hold (every cell is at least its 4-byte length) is refused
/// before anything is allocated for it.
fn fits(body: &[u8], rows: usize, columns: usize) -> Result<(), String> {
    let least = columns.checked_mul(4).ok_or_else(|| format!("{columns} columns"))?;
    if columns > 0 && rows > body.len() / least {
        return Err(format!("{rows} rows of {columns} columns do not fit in {} bytes", body.len()));
    }
    if columns == 0 && !body.is_empty() {
        return Err(format!("{} bytes after a page of no columns", body.len()));
    }
    Ok(())
}

/// Every cell of the page in order: `each(column, where the cell ends, the cell)`.
fn walk<'a>(
    body: &'a [u8],
    rows: usize,
    columns: usize,
    mut each: impl FnMut(usize, usize, CellRef<'a>),
) -> Result<(), String> {
    let mut at = 0usize;
    for row in 0..rows {
        for column in 0..columns {
            let Some(head) = body.get(at..at + 4) else {
                return Err(format!("the page ends inside row {row}, column {column}'s length"));
            };
            let length = i32::from_be_bytes([head[0], head[1], head[2], head[3]]);
            at += 4;
            let cell = if length < 0 {
                if length < -2 {
                    return Err(format!("row {row}, column {column}: a length of {length}"));
                }
                None
            } else {
                let end = at + length as usize;
                let Some(value) = body.get(at..end) else {
                    return Err(format!(
                        "row {row}, column {column}: {length} bytes asked, {} left",
                        body.len() - at
                    ));
                };
                at = end;
                Some(value)
            };
            each(column, at, cell);
        }
    }
    if at != body.len() {
        return Err(format!("{} bytes after the last of {rows} rows", body.len() - at));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(out: &mut Vec<u8>, value: Option<&[u8]>) {
        match value {
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
            Some(v) => {
                out.extend_from_slice(&(v.len() as i32).to_be_bytes());
                out.extend_from_slice(v);
            }
        }
    }

    #[test]
    fn cells_nulls_and_empty_values_are_told_apart() {
        let mut body = Vec::new();
        cell(&mut body, Some(b"k1"));
        cell(&mut body, None);
        cell(&mut body, Some(b""));
        cell(&mut body, Some(b"k2"));
        cell(&mut body, Some(b"xyz"));
        cell(&mut body, None);
        let got = split_columns(&body, 2, 3, &[1, 0, 1]).unwrap();
        assert_eq!(got[0], vec![None, Some(&b"xyz"[..])]);
        assert_eq!(got[1], vec![Some(&b"k1"[..]), Some(&b"k2"[..])]);
        assert_eq!(got[2], got[0]);
    }

    #[test]
    fn a_malformed_page_is_refused_in_one_line() {
        let mut body = Vec::new();
        cell(&mut body, Some(b"abc"));
        cell(&mut body, None);
        assert!(split_columns(&body, 1, 2, &[0]).is_ok());
        assert!(split_columns(&body, 2, 2, &[0]).unwrap_err().contains("do not fit"));
        assert!(split_columns(&body, 1, 1, &[0]).unwrap_err().contains("bytes after"));
        assert!(split_columns(&body[..body.len() - 1], 1, 2, &[0]).unwrap_err().contains("ends inside"));
        assert!(split_columns(&body[..5], 1, 1, &[0]).unwrap_err().contains("bytes asked"));
        assert!(split_columns(&body, 1, 2, &[2]).unwrap_err().contains("column 2"));
        let mut bad = body.clone();
        bad[..4].copy_from_slice(&(-3i32).to_be_bytes());
        assert!(split_columns(&bad, 1, 2, &[0]).unwrap_err().contains("-3"));
        let mut huge = body.clone();
        huge[..4].copy_from_slice(&i32::MAX.to_be_bytes());
        assert!(split_columns(&huge, 1, 2, &[0]).is_err());
        assert!(split_columns(&[], usize::MAX, 3, &[0]).is_err());
        assert!(split_columns(b"x", 0, 0, &[]).is_err());
        assert_eq!(split_columns(&[], 0, 3, &[2]).unwrap(), vec![Vec::<CellRef<'_>>::new()]);
    }

    #[test]
    fn selected_rows_are_those_rows_bytes() {
        let mut body = Vec::new();
        let rows: Vec<Vec<u8>> = (0..4u8)
            .map(|k| {
                let mut row = Vec::new();
                cell(&mut row, Some(&[k]));
                cell(&mut row, if k == 1 { None } else { Some(&b"xy"[..k as usize % 3]) });
                row
            })
            .collect();
        rows.iter().for_each(|row| body.extend_from_slice(row));
        assert_eq!(select_rows(&body, 4, 2, &[3, 1]).unwrap(), [rows[3].clone(), rows[1].clone()].concat());
        assert_eq!(select_rows(&body, 4, 2, &[]).unwrap(), Vec::<u8>::new());
        assert!(select_rows(&body, 4, 2, &[4]).unwrap_err().contains("row 4"));
        assert!(select_rows(&body, 3, 2, &[0]).unwrap_err().contains("bytes after"));
        assert_eq!(select_rows(&[], 2, 0, &[1, 0]).unwrap(), Vec::<u8>::new());
    }
}
