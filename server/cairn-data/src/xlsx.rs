//! Excel workbooks (.xlsx) as one table: a sheet (the first unless named), its first non-empty
//! row as the header, each column typed from its cells (numbers, booleans, dates, else text).
//! Formulas are read as the values Excel last computed and saved; a merged area's value (kept
//! by Excel in its top-left cell) is repeated over the area, as a reader of the sheet sees it;
//! error cells (`#DIV/0!`) become empty and are counted in a note.

use std::io::Cursor;
use std::sync::Arc;

use calamine::{Data, Reader, Xlsx};
use datafusion::arrow::array::{
    ArrayRef, BooleanBuilder, Float64Builder, Int64Builder, RecordBatch, StringBuilder,
    TimestampMillisecondBuilder,
};
use datafusion::arrow::datatypes::{DataType, Field, Schema, TimeUnit};

/// Days between Excel's epoch (1899-12-30) and the Unix epoch.
const EXCEL_UNIX_DAYS: f64 = 25_569.0;
const MS_PER_DAY: f64 = 86_400_000.0;

/// The sheet's rows as a batch; `notes` gets what the model should know about how it was read.
pub(crate) fn read(
    bytes: Vec<u8>,
    sheet: Option<&str>,
    notes: &mut Vec<String>,
) -> Result<RecordBatch, String> {
    let mut book: Xlsx<_> =
        Xlsx::new(Cursor::new(bytes)).map_err(|e| format!("not a readable .xlsx workbook: {e}"))?;
    let names = book.sheet_names();
    let name = match sheet {
        Some(s) => names
            .iter()
            .find(|n| n.as_str() == s)
            .cloned()
            .ok_or_else(|| format!("has no sheet {s:?}; its sheets are {names:?}"))?,
        None => names
            .first()
            .cloned()
            .ok_or_else(|| "the workbook has no sheets".to_owned())?,
    };
    if sheet.is_none() && names.len() > 1 {
        notes.push(format!(
            "read sheet {name:?}, the first of {names:?}; pass `sheet` for another"
        ));
    }
    let range = book
        .worksheet_range(&name)
        .map_err(|e| format!("sheet {name:?} could not be read: {e}"))?;
    let Some((top, left)) = range.start() else {
        return Err(format!("sheet {name:?} is empty"));
    };
    let (height, width) = range.get_size();
    let mut grid: Vec<Vec<Data>> = range.rows().map(<[Data]>::to_vec).collect();
    // Merged areas: repeat the top-left value over the area.
    if let Ok(merged) = book.merge_cells_by_sheet_name(&name) {
        let mut filled = 0usize;
        for dims in &merged {
            let value = range.get_value(dims.start).cloned().unwrap_or(Data::Empty);
            for r in dims.start.0..=dims.end.0 {
                for c in dims.start.1..=dims.end.1 {
                    let (Some(rr), Some(cc)) = (r.checked_sub(top), c.checked_sub(left)) else {
                        continue;
                    };
                    if let Some(cell) = grid
                        .get_mut(rr as usize)
                        .and_then(|row| row.get_mut(cc as usize))
                        && (r, c) != dims.start
                    {
                        *cell = value.clone();
                        filled += 1;
                    }
                }
            }
        }
        if filled > 0 {
            notes.push(format!(
                "{filled} cells of merged areas were given their area's value"
            ));
        }
    }
    // The header: the first row with any value.
    let Some(header_at) = grid
        .iter()
        .position(|row| row.iter().any(|c| !matches!(c, Data::Empty)))
    else {
        return Err(format!("sheet {name:?} is empty"));
    };
    let header: Vec<String> = (0..width)
        .map(|i| match grid[header_at].get(i) {
            Some(Data::Empty) | None => format!("column_{}", i + 1),
            Some(v) => v.to_string().trim().to_owned(),
        })
        .collect();
    let body = &grid[header_at + 1..height.min(grid.len())];
    let mut errors = 0usize;
    let mut columns = Vec::with_capacity(width);
    let mut fields = Vec::with_capacity(width);
    let mut seen = std::collections::HashSet::new();
    for (i, base) in header.iter().enumerate() {
        let cells = body.iter().map(|row| row.get(i).unwrap_or(&Data::Empty));
        let mut builder = builder_for(cells.clone(), body.len());
        for cell in cells {
            if matches!(cell, Data::Error(_)) {
                errors += 1;
            }
            push(&mut builder, cell);
        }
        let mut unique = base.clone();
        let mut k = 2;
        while !seen.insert(unique.clone()) {
            unique = format!("{base}_{k}");
            k += 1;
        }
        fields.push(Field::new(unique, builder.data_type(), true));
        columns.push(builder.finish());
    }
    if errors > 0 {
        notes.push(format!(
            "{errors} error cells (such as #DIV/0!) were read as empty"
        ));
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).map_err(|e| e.to_string())
}

/// The narrowest type that holds every non-empty cell.
fn builder_for<'a>(cells: impl Iterator<Item = &'a Data>, n: usize) -> ColumnBuilder {
    let (mut ints, mut floats, mut bools, mut times, mut other) = (0, 0, 0, 0, 0);
    for cell in cells {
        match cell {
            Data::Empty | Data::Error(_) => {}
            Data::Int(_) => ints += 1,
            Data::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => ints += 1,
            Data::Float(_) => floats += 1,
            Data::Bool(_) => bools += 1,
            Data::DateTime(_) => times += 1,
            _ => other += 1,
        }
    }
    let kinds = [ints + floats > 0, bools > 0, times > 0, other > 0]
        .iter()
        .filter(|k| **k)
        .count();
    if kinds > 1 || other > 0 {
        ColumnBuilder::Text(StringBuilder::with_capacity(n, n * 8))
    } else if times > 0 {
        ColumnBuilder::Time(TimestampMillisecondBuilder::with_capacity(n))
    } else if bools > 0 {
        ColumnBuilder::Bool(BooleanBuilder::with_capacity(n))
    } else if floats > 0 {
        ColumnBuilder::Float(Float64Builder::with_capacity(n))
    } else {
        ColumnBuilder::Int(Int64Builder::with_capacity(n))
    }
}

fn push(builder: &mut ColumnBuilder, cell: &Data) {
    if matches!(cell, Data::Empty | Data::Error(_)) {
        return append_null(builder);
    }
    match (builder, cell) {
        (ColumnBuilder::Int(b), Data::Int(i)) => b.append_value(*i),
        #[allow(clippy::cast_possible_truncation)]
        (ColumnBuilder::Int(b), Data::Float(f)) => b.append_value(*f as i64),
        #[allow(clippy::cast_precision_loss)]
        (ColumnBuilder::Float(b), Data::Int(i)) => b.append_value(*i as f64),
        (ColumnBuilder::Float(b), Data::Float(f)) => b.append_value(*f),
        (ColumnBuilder::Bool(b), Data::Bool(v)) => b.append_value(*v),
        #[allow(clippy::cast_possible_truncation)]
        (ColumnBuilder::Time(b), Data::DateTime(d)) => {
            b.append_value(((d.as_f64() - EXCEL_UNIX_DAYS) * MS_PER_DAY).round() as i64);
        }
        (ColumnBuilder::Text(b), v) => b.append_value(v.to_string()),
        (b, _) => append_null(b),
    }
}

fn append_null(builder: &mut ColumnBuilder) {
    match builder {
        ColumnBuilder::Int(b) => b.append_null(),
        ColumnBuilder::Float(b) => b.append_null(),
        ColumnBuilder::Bool(b) => b.append_null(),
        ColumnBuilder::Time(b) => b.append_null(),
        ColumnBuilder::Text(b) => b.append_null(),
    }
}

/// Builds one Arrow column from cells of one inferred type.
enum ColumnBuilder {
    Int(Int64Builder),
    Float(Float64Builder),
    Bool(BooleanBuilder),
    Time(TimestampMillisecondBuilder),
    Text(StringBuilder),
}

impl ColumnBuilder {
    fn data_type(&self) -> DataType {
        match self {
            ColumnBuilder::Int(_) => DataType::Int64,
            ColumnBuilder::Float(_) => DataType::Float64,
            ColumnBuilder::Bool(_) => DataType::Boolean,
            ColumnBuilder::Time(_) => DataType::Timestamp(TimeUnit::Millisecond, None),
            ColumnBuilder::Text(_) => DataType::Utf8,
        }
    }

    fn finish(self) -> ArrayRef {
        match self {
            ColumnBuilder::Int(mut b) => Arc::new(b.finish()),
            ColumnBuilder::Float(mut b) => Arc::new(b.finish()),
            ColumnBuilder::Bool(mut b) => Arc::new(b.finish()),
            ColumnBuilder::Time(mut b) => Arc::new(b.finish()),
            ColumnBuilder::Text(mut b) => Arc::new(b.finish()),
        }
    }
}
