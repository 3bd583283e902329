//! Spine's pure-Rust core. No PyO3 here: `cargo test` needs no Python.
//!
//! This file is a table of contents; the logic lives in the modules.

#![forbid(unsafe_code)]

pub mod bars;
pub mod decimal;
pub mod error;
pub mod fanout;
pub mod features;
pub mod head;
pub mod identity;
pub mod json;
pub mod screener;
pub mod strategy;
pub mod time;

pub use decimal::{Fixed, MAX_SCALE};
pub use error::{DecimalError, JsonError, JsonErrorKind, PathSegment, TimestampError};
pub use identity::{identity, identity_hex, IdentityError};
pub use json::{canonicalize, CanonicalWriter, Value, MAX_DEPTH};
pub use time::parse_timestamp;

/// The wire version string every v2 body carries.
pub const WIRE_VERSION: &str = "spine.v2";
