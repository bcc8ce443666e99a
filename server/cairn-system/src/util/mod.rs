//! Everyday utilities that touch nothing but their arguments and workspace files: archives,
//! checksums, time, cron, encodings, UUIDs, JSON/YAML/TOML, a calculator and units.
