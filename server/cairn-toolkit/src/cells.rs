//! Cells written for spreadsheets: a text cell that a spreadsheet would run as a formula
//! (CSV injection: `=HYPERLINK(...)`, `@SUM(...)`, `+cmd|...`) is written with a leading `'`,
//! which every spreadsheet reads as "this is text" and hides.
//!
//! One rule for every tool that writes CSV or TSV (the data tools' exports and `db_export`):
//! a cell starting with `=`, `+`, `-`, `@`, a tab or a carriage return is escaped, unless the
//! whole cell is a plain number (`-5`, `+3.25`, `-1e6`), which a spreadsheet reads as that
//! number and never as a formula, and which a user expects to stay a number.

use std::borrow::Cow;

/// The characters a spreadsheet takes as the start of a formula (OWASP's list).
const FORMULA_STARTS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// Whether `cell` would be taken as a formula by a spreadsheet opening the file.
pub fn is_formula(cell: &str) -> bool {
    cell.starts_with(FORMULA_STARTS) && !is_plain_number(cell)
}

/// `cell` as it is safe to write: prefixed with `'` when it would be a formula.
pub fn formula_safe(cell: &str) -> Cow<'_, str> {
    if is_formula(cell) {
        Cow::Owned(format!("'{cell}"))
    } else {
        Cow::Borrowed(cell)
    }
}

/// A sign, digits with at most one point, and an optional exponent: what a spreadsheet reads as
/// a number. (`f64::from_str` alone would also take `inf` and `NaN`.)
fn is_plain_number(cell: &str) -> bool {
    let body = cell.strip_prefix(['+', '-']).unwrap_or(cell);
    let (mantissa, exponent) = match body.split_once(['e', 'E']) {
        Some((m, e)) => (m, Some(e.strip_prefix(['+', '-']).unwrap_or(e))),
        None => (body, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = match mantissa.split_once('.') {
        Some((int, frac)) => {
            (digits(int) || int.is_empty())
                && (digits(frac) || frac.is_empty())
                && !(int.is_empty() && frac.is_empty())
        }
        None => digits(mantissa),
    };
    mantissa_ok && exponent.is_none_or(digits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas_are_escaped_and_numbers_and_text_are_not() {
        for cell in [
            "=HYPERLINK(\"http://x\",\"y\")",
            "+cmd|' /C calc'!A0",
            "-2+3",
            "@SUM(A1:A9)",
            "\t=1",
            "\r=1",
            "-",
            "=",
            "-e5",
            "+.",
        ] {
            assert!(is_formula(cell), "{cell:?}");
            assert_eq!(formula_safe(cell), format!("'{cell}"));
        }
        for cell in [
            "-5", "+3.25", "-1e6", "-0.5E-3", "-.5", "12", "plain", "a=b", "", "'=x",
        ] {
            assert!(!is_formula(cell), "{cell:?}");
            assert_eq!(formula_safe(cell), cell);
        }
    }
}
