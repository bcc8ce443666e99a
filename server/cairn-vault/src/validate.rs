//! Secret names and host patterns: what may be stored, and which hosts a binding matches.
//!
//! Names and hosts go into the associated data of each ciphertext joined by NUL bytes; the
//! character sets below exclude NUL, so the encoding is unambiguous.

use crate::error::VaultError;

const NAME_MAX: usize = 64;
const HOST_MAX: usize = 253;
const LABEL_MAX: usize = 63;

/// A name is 1 to 64 of `A-Z a-z 0-9 _ . -`.
pub fn validate_name(name: &str) -> Result<(), VaultError> {
    let ok = !name.is_empty()
        && name.len() <= NAME_MAX
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(VaultError::InvalidName {
            name: name.to_string(),
        })
    }
}

/// A host is a lowercase DNS name (`api.github.com`) or a wildcard over its subdomains
/// (`*.example.com`, which does not match `example.com` itself).
pub fn validate_host(host: &str) -> Result<(), VaultError> {
    let invalid = |reason: &str| VaultError::InvalidHost {
        host: host.to_string(),
        reason: reason.to_string(),
    };
    let name = match host.strip_prefix("*.") {
        Some(rest) => {
            // `*.com` would hand the secret to every host under a top-level domain.
            if !rest.contains('.') {
                return Err(invalid(
                    "a wildcard needs at least two labels after `*.`, as in `*.example.com`",
                ));
            }
            rest
        }
        None => host,
    };
    if name.is_empty() || host.len() > HOST_MAX {
        return Err(invalid("a host name has 1 to 253 characters"));
    }
    for label in name.split('.') {
        if label.is_empty() || label.len() > LABEL_MAX {
            return Err(invalid("each dot-separated label has 1 to 63 characters"));
        }
        if label.starts_with('-') || label.ends_with('-') {
            return Err(invalid("a label may not start or end with `-`"));
        }
        if !label
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        {
            return Err(invalid(
                "use lowercase letters, digits, `-` and `.` only (no scheme, port, path or `*` inside)",
            ));
        }
    }
    Ok(())
}

/// Whether `host` (as a connection names it; case and one trailing dot are ignored) is covered
/// by the validated `pattern`.
pub fn host_matches(pattern: &str, host: &str) -> bool {
    let host = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
    match pattern.strip_prefix("*.") {
        Some(suffix) => host
            .strip_suffix(suffix)
            .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
        None => host == pattern,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for good in ["github", "OPENAI_API_KEY", "a.b-c_d", &"x".repeat(64)] {
            assert!(validate_name(good).is_ok(), "{good}");
        }
        for bad in ["", "has space", "slash/", "nul\0", "é", &"x".repeat(65)] {
            assert!(
                matches!(validate_name(bad), Err(VaultError::InvalidName { .. })),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn hosts() {
        for good in ["api.github.com", "localhost", "*.example.com", "a-b.c0.io"] {
            assert!(validate_host(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "API.github.com",
            "https://api.github.com",
            "api.github.com:443",
            "api.github.com/path",
            "*.com",
            "*",
            "a.*.com",
            "-a.com",
            "a-.com",
            "a..com",
            ".a.com",
            "a.com.",
            &format!("{}.com", "x".repeat(64)),
        ] {
            assert!(
                matches!(validate_host(bad), Err(VaultError::InvalidHost { .. })),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn matching() {
        assert!(host_matches("api.github.com", "api.github.com"));
        assert!(host_matches("api.github.com", "API.GitHub.com."));
        assert!(!host_matches("api.github.com", "github.com"));
        assert!(!host_matches("api.github.com", "api.github.com.evil.io"));
        assert!(host_matches("*.example.com", "a.example.com"));
        assert!(host_matches("*.example.com", "a.b.example.com"));
        assert!(!host_matches("*.example.com", "example.com"));
        assert!(!host_matches("*.example.com", "badexample.com"));
        assert!(!host_matches("*.example.com", ".example.com"));
    }
}
