//! Release chores: the next version from the commits, a changelog since a tag, a TLS
//! certificate's details, an HTTP health check.
