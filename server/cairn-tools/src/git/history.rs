//! Commit-walking limits and helpers shared by `git_log` and `git_file_history`.

use std::path::Path;

use git2::Oid;

use super::Fail;

/// Commits shown by `git_log` and `git_file_history` when no `max_count` is given.
pub(crate) const DEFAULT_MAX_COUNT: usize = 30;
/// Most commits one call may show.
pub(crate) const MAX_COUNT_LIMIT: usize = 1000;
/// Most commits walked when filtering by path, so a huge history cannot stall a call.
pub(crate) const MAX_WALK: usize = 100_000;

/// How many commits to show for a requested `max_count` (capped), or why it is refused.
pub(crate) fn max_count(requested: Option<usize>) -> Result<usize, Fail> {
    match requested {
        Some(0) => Err("invalid argument `max_count`: it must be at least 1".into()),
        Some(n) => Ok(n.min(MAX_COUNT_LIMIT)),
        None => Ok(DEFAULT_MAX_COUNT),
    }
}

/// The id of `rel` in `commit`'s tree, if it exists there.
pub(crate) fn entry_id(commit: &git2::Commit<'_>, rel: &str) -> Result<Option<Oid>, Fail> {
    let tree = commit.tree()?;
    match tree.get_path(Path::new(rel)) {
        Ok(entry) => Ok(Some(entry.id())),
        Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use cairn_toolkit::Entry;

    use super::*;

    /// The default and the limit are written out in the tools' field docs and bounds; they must
    /// say what the code does.
    #[test]
    fn max_count_schemas_state_the_default_and_the_limit() {
        let mut seen = 0;
        for info in crate::git::GIT_TOOLS.iter().map(Entry::info) {
            let schema = &info.tool.input_schema;
            let Some(field) = schema.get("properties").and_then(|p| p.get("max_count")) else {
                continue;
            };
            seen += 1;
            let name = &info.tool.name;
            let described = format!("How many commits. Default {DEFAULT_MAX_COUNT}.");
            assert_eq!(field["description"], described.as_str(), "{name}");
            assert_eq!(field["maximum"], MAX_COUNT_LIMIT, "{name}");
            assert_eq!(field["minimum"], 1, "{name}");
        }
        assert_eq!(seen, 2);
    }
}
