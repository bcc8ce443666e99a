//! Checks of the files DevOps lives in, each by the real linter in a sandbox container (the
//! sandbox limits, the workspace read-only, no network).
