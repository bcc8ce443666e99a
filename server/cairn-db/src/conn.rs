//! The configured connections: what `[db.NAME]` says, checked once, shown without secrets.

use std::sync::Arc;
use std::time::Duration;

use crate::error::DbError;

/// One `[db.NAME]` of the user's configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbSpec {
    pub name: String,
    /// `postgres://user@host:port/db`, `mysql://` or `mariadb://user@host:port/db`,
    /// `redis://host:port/DB`, or `sqlite:PATH` (a file in the workspace).
    pub url: String,
    /// The password, as a `secret:NAME` vault handle.
    pub password: Option<String>,
    pub timeout: Duration,
}

/// Reads a password: the vault handle and the host it must be bound to.
pub type PasswordSource = Arc<dyn Fn(&str, &str) -> Result<String, String> + Send + Sync>;

/// A checked connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Connection {
    pub name: String,
    pub(crate) target: Target,
    pub(crate) password: Option<String>,
    pub timeout: Duration,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    Postgres {
        host: String,
        port: u16,
        user: String,
        dbname: String,
    },
    /// A path as the user wrote it, resolved in the workspace at each open.
    Sqlite { path: String },
    /// `mysql://` or `mariadb://` (`mariadb` says which the user wrote); `dbname` may be empty.
    Mysql {
        mariadb: bool,
        host: String,
        port: u16,
        user: String,
        dbname: String,
    },
    /// `redis://[user@]host:port/DB`; `user` is empty for the default user.
    Redis {
        host: String,
        port: u16,
        user: String,
        db: i64,
    },
}

impl Connection {
    pub fn parse(spec: &DbSpec) -> Result<Connection, DbError> {
        let bad = |reason: &str| DbError::BadSpec {
            name: spec.name.clone(),
            reason: reason.to_owned(),
        };
        let target = if let Some(path) = spec.url.strip_prefix("sqlite:") {
            let path = path.trim_start_matches("//");
            if path.is_empty() {
                return Err(bad("`sqlite:` needs a file path in the workspace"));
            }
            if spec.password.is_some() {
                return Err(bad("a SQLite file has no password"));
            }
            Target::Sqlite {
                path: path.to_owned(),
            }
        } else {
            let url = url::Url::parse(&spec.url).map_err(|e| bad(&format!("url: {e}")))?;
            if url.password().is_some() {
                return Err(bad(
                    "url: a password in the URL is refused; put it in the vault (`cairn vault set NAME --host HOST`) and set `password = \"secret:NAME\"`",
                ));
            }
            let host = url
                .host_str()
                .filter(|h| !h.is_empty())
                .ok_or_else(|| bad("url: no host"))?
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned();
            let user = decode(url.username());
            let path = decode(url.path().trim_start_matches('/'));
            match url.scheme() {
                "postgres" | "postgresql" => {
                    if user.is_empty() {
                        return Err(bad("url: no user (postgres://USER@host/db)"));
                    }
                    Target::Postgres {
                        host,
                        port: url.port().unwrap_or(5432),
                        dbname: if path.is_empty() { user.clone() } else { path },
                        user,
                    }
                }
                scheme @ ("mysql" | "mariadb") => {
                    if user.is_empty() {
                        return Err(bad(&format!("url: no user ({scheme}://USER@host/db)")));
                    }
                    Target::Mysql {
                        mariadb: scheme == "mariadb",
                        host,
                        port: url.port().unwrap_or(3306),
                        user,
                        dbname: path,
                    }
                }
                "redis" => Target::Redis {
                    host,
                    port: url.port().unwrap_or(6379),
                    user,
                    db: if path.is_empty() {
                        0
                    } else {
                        path.parse().map_err(|_| {
                            bad("url: the path is the database number (redis://host:6379/0)")
                        })?
                    },
                },
                other => {
                    return Err(bad(&format!(
                        "url: `{other}:` is not supported (postgres://, mysql://, mariadb://, redis://, sqlite:)"
                    )));
                }
            }
        };
        if let Some(p) = &spec.password
            && !p.starts_with("secret:")
        {
            return Err(bad(
                "password: must be a vault handle `secret:NAME`, never the password itself",
            ));
        }
        Ok(Connection {
            name: spec.name.clone(),
            target,
            password: spec.password.clone(),
            timeout: spec.timeout,
        })
    }

    /// The engine's name.
    pub fn engine(&self) -> &'static str {
        match self.target {
            Target::Postgres { .. } => "PostgreSQL",
            Target::Sqlite { .. } => "SQLite",
            Target::Mysql { mariadb: true, .. } => "MariaDB",
            Target::Mysql { mariadb: false, .. } => "MySQL",
            Target::Redis { .. } => "Redis",
        }
    }

    /// Where it points, without any secret (there is none in a checked spec).
    pub fn shown(&self) -> String {
        match &self.target {
            Target::Postgres {
                host,
                port,
                user,
                dbname,
            } => format!("postgres://{user}@{}:{port}/{dbname}", bracketed(host)),
            Target::Sqlite { path } => format!("sqlite:{path}"),
            Target::Mysql {
                mariadb,
                host,
                port,
                user,
                dbname,
            } => format!(
                "{}://{user}@{}:{port}/{dbname}",
                if *mariadb { "mariadb" } else { "mysql" },
                bracketed(host)
            ),
            Target::Redis {
                host,
                port,
                user,
                db,
            } => {
                let user = if user.is_empty() {
                    String::new()
                } else {
                    format!("{user}@")
                };
                format!("redis://{user}{}:{port}/{db}", bracketed(host))
            }
        }
    }

    /// The host its password must be bound to, for the engines that have passwords.
    pub(crate) fn host(&self) -> Option<&str> {
        match &self.target {
            Target::Postgres { host, .. }
            | Target::Mysql { host, .. }
            | Target::Redis { host, .. } => Some(host),
            Target::Sqlite { .. } => None,
        }
    }
}

fn bracketed(host: &str) -> String {
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_owned()
    }
}

fn decode(s: &str) -> String {
    url::form_urlencoded::parse(format!("x={s}").as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_else(|| s.to_owned())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn spec(url: &str, password: Option<&str>) -> DbSpec {
        DbSpec {
            name: "main".into(),
            url: url.into(),
            password: password.map(str::to_owned),
            timeout: Duration::from_secs(30),
        }
    }

    #[test]
    fn postgres_urls_are_checked_and_shown_without_secrets() {
        let c = Connection::parse(&spec(
            "postgres://app@db.example:6543/shop",
            Some("secret:pg"),
        ))
        .unwrap();
        assert_eq!(c.shown(), "postgres://app@db.example:6543/shop");
        assert_eq!(c.engine(), "PostgreSQL");
        let c = Connection::parse(&spec("postgresql://app@localhost", None)).unwrap();
        assert_eq!(c.shown(), "postgres://app@localhost:5432/app");
    }

    #[test]
    fn mysql_mariadb_and_redis_urls_are_checked_and_shown() {
        let c = Connection::parse(&spec("mysql://app@db.example/shop", Some("secret:my"))).unwrap();
        assert_eq!(c.shown(), "mysql://app@db.example:3306/shop");
        assert_eq!(c.engine(), "MySQL");
        let c = Connection::parse(&spec("mariadb://app@[::1]:3307", None)).unwrap();
        assert_eq!(c.shown(), "mariadb://app@[::1]:3307/");
        assert_eq!((c.engine(), c.host()), ("MariaDB", Some("::1")));
        let c = Connection::parse(&spec("redis://cache:6380/2", Some("secret:r"))).unwrap();
        assert_eq!(c.shown(), "redis://cache:6380/2");
        assert_eq!(c.engine(), "Redis");
        let c = Connection::parse(&spec("redis://ops@cache", None)).unwrap();
        assert_eq!(c.shown(), "redis://ops@cache:6379/0");
    }

    #[test]
    fn passwords_in_urls_and_plain_passwords_are_refused() {
        let e = Connection::parse(&spec("postgres://app:hunter2@db/shop", None)).unwrap_err();
        assert!(e.to_string().contains("vault"), "{e}");
        assert!(!e.to_string().contains("hunter2"), "{e}");
        let e = Connection::parse(&spec("postgres://app@db/shop", Some("hunter2"))).unwrap_err();
        assert!(!e.to_string().contains("hunter2"), "{e}");
        assert!(e.to_string().contains("secret:NAME"), "{e}");
    }

    #[test]
    fn other_schemes_and_empty_parts_are_refused_naming_what() {
        for (url, word) in [
            ("mongodb://a@b/c", "not supported"),
            ("mysql://db/shop", "user"),
            ("redis://cache:6379/zero", "database number"),
            ("mariadb://app:pw@db/shop", "vault"),
            ("postgres:///shop", "host"),
            ("postgres://db/shop", "user"),
            ("sqlite:", "file path"),
            ("not a url", "url"),
        ] {
            let e = Connection::parse(&spec(url, None)).unwrap_err();
            assert!(e.to_string().contains(word), "{url}: {e}");
        }
        assert_eq!(
            Connection::parse(&spec("sqlite:data/app.db", None))
                .unwrap()
                .shown(),
            "sqlite:data/app.db"
        );
    }
}
