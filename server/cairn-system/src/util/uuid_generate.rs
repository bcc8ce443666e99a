//! `uuid_generate`: new v4 (random) or v7 (time-ordered) UUIDs, or what a given UUID is.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use uuid::Uuid;

use crate::system::System;

/// UUIDs one call makes.
const MAX_COUNT: usize = 100;

/// The `uuid_generate` tool.
pub struct UuidGenerate;

/// A UUID version to generate.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Version {
    #[default]
    V4,
    V7,
}

/// Arguments of `uuid_generate`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// v4 (random, the default) or v7 (time-ordered).
    #[serde(default)]
    version: Version,
    /// How many to generate, 1 to 100 (default 1).
    #[serde(default)]
    count: Option<usize>,
    /// A UUID to inspect instead of generating (any common form: hyphenated, braced, `urn:uuid:`,
    /// 32 hex digits): its version, variant and, for v1/v6/v7, its timestamp.
    #[serde(default)]
    inspect: Option<String>,
}

/// A v7 UUID for now: the Unix time in milliseconds, then random bits. Built here rather than
/// with uuid's `v7` feature, which would change the uuid build the rest of the tree shares.
fn v7() -> Uuid {
    let millis = u64::try_from(chrono::Utc::now().timestamp_millis()).unwrap_or(0);
    // A v4's bytes 6..16 are random but for the version and variant bits, which the builder
    // overwrites at the same places.
    let random = Uuid::new_v4();
    let mut bytes = [0u8; 10];
    bytes.copy_from_slice(random.as_bytes().get(6..16).unwrap_or(&[0; 10]));
    uuid::Builder::from_unix_timestamp_millis(millis, &bytes).into_uuid()
}

/// What `u` is, line by line.
pub(crate) fn describe(u: &Uuid) -> String {
    let version = u.get_version_num();
    let kind = match version {
        1 => "time-based (v1, Gregorian time and node)",
        2 => "DCE security (v2)",
        3 => "name-based, MD5 (v3)",
        4 => "random (v4)",
        5 => "name-based, SHA-1 (v5)",
        6 => "time-based, reordered (v6)",
        7 => "Unix-time-ordered (v7)",
        8 => "custom (v8)",
        _ if u.is_nil() => "the nil UUID",
        _ if u.is_max() => "the max UUID",
        _ => "unknown version",
    };
    let variant = match u.get_variant() {
        uuid::Variant::NCS => "NCS (reserved, legacy)",
        uuid::Variant::RFC4122 => "RFC 9562 (standard)",
        uuid::Variant::Microsoft => "Microsoft (reserved, legacy GUID)",
        uuid::Variant::Future => "reserved for the future",
        _ => "unknown",
    };
    let mut out = format!(
        "{}\nversion: {version}, {kind}\nvariant: {variant}",
        u.hyphenated()
    );
    if let Some(ts) = u.get_timestamp() {
        let (secs, nanos) = ts.to_unix();
        let when = i64::try_from(secs)
            .ok()
            .and_then(|s| chrono::DateTime::from_timestamp(s, nanos))
            .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
            .unwrap_or_else(|| format!("{secs} s after the Unix epoch"));
        out.push_str(&format!("\ntimestamp: {when}"));
    }
    out
}

impl Tool for UuidGenerate {
    type Host = System;
    type Args = Args;
    const NAME: &'static str = "uuid_generate";
    const TITLE: &'static str = "UUIDs";
    const DESCRIPTION: &'static str = "Generate UUIDs (v4 random, or v7 time-ordered for database keys), up to 100 at once, or inspect a given UUID: its version, variant and embedded timestamp.";
    const CATEGORY: Category = Category::System;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;
    // Every call returns new values.
    const READ_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(_: &System, args: Args, _: CallContext) -> CallToolResult {
        if let Some(given) = &args.inspect {
            let s = given.trim();
            let s = s.strip_prefix("urn:uuid:").unwrap_or(s);
            return match Uuid::try_parse(s) {
                Ok(u) => text(describe(&u)),
                Err(e) => error(format!(
                    "`{given}` is not a UUID: {e} (expected 32 hex digits, e.g. 67e55044-10b1-426f-9247-bb680e5fe0c8)"
                )),
            };
        }
        let count = args.count.unwrap_or(1);
        if count == 0 || count > MAX_COUNT {
            return error(format!(
                "count must be 1 to {MAX_COUNT} (was {count}): call again for more"
            ));
        }
        let mut ids: Vec<Uuid> = (0..count)
            .map(|_| match args.version {
                Version::V4 => Uuid::new_v4(),
                Version::V7 => v7(),
            })
            .collect();
        if args.version == Version::V7 {
            // Several made in the same millisecond still come out in order.
            ids.sort();
        }
        let ids: Vec<String> = ids.iter().map(|u| u.hyphenated().to_string()).collect();
        text(ids.join("\n"))
    }
}
