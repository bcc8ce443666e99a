//! Checks of bucket names and object keys, made before any request is built so that a key
//! cannot step into another bucket's address (`..` segments), and how sizes and objects read
//! in messages.

use crate::error::CloudError;

/// A bucket (container) name as the providers accept it, at least in its characters: the
/// service judges the rest (length rules, a name taken).
pub(super) fn check_bucket(name: &str) -> Result<&str, CloudError> {
    let ok = !name.is_empty()
        && name.len() <= 222
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'))
        && name != "."
        && name != "..";
    if ok {
        Ok(name)
    } else {
        Err(CloudError::Invalid(format!(
            "{:?} is not a bucket name: use letters, digits, `-`, `.` and `_` (S3 and Azure: lower case, 3 to 63 characters)",
            cut(name, 80)
        )))
    }
}

/// An object key: not empty, at most 1024 bytes, no control characters, and no `.` or `..`
/// segment (a URL cannot carry one: it would address another path).
pub(super) fn check_key(key: &str) -> Result<&str, CloudError> {
    if key.is_empty() {
        return Err(CloudError::Invalid("the object key is empty".into()));
    }
    if key.len() > 1024 {
        return Err(CloudError::Invalid(format!(
            "the object key is {} bytes; keys are at most 1024",
            key.len()
        )));
    }
    if key.chars().any(char::is_control) {
        return Err(CloudError::Invalid(format!(
            "the object key {:?} contains control characters",
            cut(key, 80)
        )));
    }
    if key.split('/').any(|s| s == "." || s == "..") {
        return Err(CloudError::Invalid(format!(
            "the object key {:?} has a `.` or `..` segment, which an HTTP address cannot carry; these tools do not handle such keys",
            cut(key, 80)
        )));
    }
    Ok(key)
}

/// `text` cut to `max` characters for a message.
pub(super) fn cut(text: &str, max: usize) -> String {
    cairn_toolkit::table::cut(text, max)
}

/// A byte count for people: `1.5 MiB (1572864 bytes)`.
pub(super) fn size_text(bytes: u64) -> String {
    const UNITS: &[&str] = &["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {} ({bytes} bytes)", UNITS[unit])
}

/// `bucket/key` as shown to the user, with the account.
pub(super) fn shown(account: &str, bucket: &str, key: &str) -> String {
    format!("{bucket}/{key} (account {account})")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn keys_that_would_step_out_of_their_path_are_refused() {
        for bad in ["", "..", "a/../b", "./x", "a/.", "tab\there"] {
            assert!(check_key(bad).is_err(), "{bad:?}");
        }
        for good in ["a", "a/b/c.txt", "dir/", "...", "a..b", "spaces and ?#"] {
            assert_eq!(check_key(good).unwrap(), good);
        }
        assert!(check_key(&"k".repeat(1025)).is_err());
        assert!(check_bucket("ok-bucket.1").is_ok());
        for bad in ["", "..", "a/b", "a b", "x?y"] {
            assert!(check_bucket(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn sizes_read_well() {
        assert_eq!(size_text(10), "10 bytes");
        assert_eq!(size_text(1536), "1.5 KiB (1536 bytes)");
        assert_eq!(size_text(3 * 1024 * 1024), "3.0 MiB (3145728 bytes)");
    }
}
