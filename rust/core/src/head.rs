//! The head every v2 document carries: `version` (the wire version), `schema_id` and
//! `schema_version`. One [`Head`] per document the core writes or reads, and the one way to
//! write (canonical bytes or a value tree) or check those three members.

use std::borrow::Cow;

use crate::json::{CanonicalWriter, Value};
use crate::WIRE_VERSION;

/// A document's `schema_id` and `schema_version` (its `version` is always [`WIRE_VERSION`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    /// The schema id, `svc.<name>`.
    pub schema_id: &'static str,
    /// The schema version.
    pub schema_version: i64,
}

/// `svc.feature_spec`, the documents of the feature registry.
pub const FEATURE_SPEC: Head = Head::v1("svc.feature_spec");
/// `svc.feature_row_delta`, a feature row's changed values.
pub const FEATURE_ROW_DELTA: Head = Head::v1("svc.feature_row_delta");
/// `svc.pattern_observation`, a pattern the screener saw.
pub const PATTERN_OBSERVATION: Head = Head::v1("svc.pattern_observation");
/// `svc.screen_definition`, a screen to evaluate.
pub const SCREEN_DEFINITION: Head = Head::v1("svc.screen_definition");

impl Head {
    /// Version 1 of `schema_id`.
    #[must_use]
    pub const fn v1(schema_id: &'static str) -> Self {
        Self {
            schema_id,
            schema_version: 1,
        }
    }

    /// `,"schema_id":"<id>","schema_version":<n>`, after a member of a canonical document: the
    /// two sort next to each other (no key sorts between them). A schema id needs no escaping.
    pub fn write_schema(&self, w: &mut CanonicalWriter) {
        w.raw(b",\"schema_id\":\"");
        w.raw(self.schema_id.as_bytes());
        w.raw(b"\",\"schema_version\":");
        w.int(self.schema_version);
    }

    /// `,"version":"spine.v2"`, after a member of a canonical document: no member of one the
    /// core writes sorts after it.
    pub fn write_version(w: &mut CanonicalWriter) {
        w.raw(b",\"version\":");
        w.string(WIRE_VERSION);
    }

    /// The three members, `version` first, for a value tree.
    #[must_use]
    pub fn members(&self) -> [(Cow<'static, str>, Value<'static>); 3] {
        [
            (
                Cow::Borrowed("version"),
                Value::Str(Cow::Borrowed(WIRE_VERSION)),
            ),
            (
                Cow::Borrowed("schema_id"),
                Value::Str(Cow::Borrowed(self.schema_id)),
            ),
            (
                Cow::Borrowed("schema_version"),
                Value::Int(self.schema_version),
            ),
        ]
    }

    /// The first of a parsed document's `version`, `schema_id` and `schema_version` that is
    /// not this head's: its JSON path and what is wrong (`expected a string: ...` or
    /// `allowed: ...`).
    #[must_use]
    pub fn mismatch(
        &self,
        version: &Value<'_>,
        schema_id: &Value<'_>,
        schema_version: &Value<'_>,
    ) -> Option<(&'static str, String)> {
        let text = |value: &Value<'_>, path: &'static str, wanted: &str| match value {
            Value::Str(s) if s == wanted => None,
            Value::Str(_) => Some((path, format!("allowed: {wanted:?}"))),
            _ => Some((path, format!("expected a string: {wanted}"))),
        };
        text(version, "$.version", WIRE_VERSION)
            .or_else(|| text(schema_id, "$.schema_id", self.schema_id))
            .or_else(|| {
                (*schema_version != Value::Int(self.schema_version)).then(|| {
                    let allowed = format!("allowed: {}", self.schema_version);
                    ("$.schema_version", allowed)
                })
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_writes_its_members_as_canonical_bytes() {
        let mut w = CanonicalWriter::with_capacity(64);
        w.raw(b"{\"a\":1");
        FEATURE_ROW_DELTA.write_schema(&mut w);
        Head::write_version(&mut w);
        w.raw(b"}");
        assert_eq!(
            w.as_bytes(),
            br#"{"a":1,"schema_id":"svc.feature_row_delta","schema_version":1,"version":"spine.v2"}"#
        );
    }

    #[test]
    fn a_head_names_the_first_member_that_is_not_its_own() {
        let (v, id, one) = (
            Value::Str(Cow::Borrowed("spine.v2")),
            Value::Str(Cow::Borrowed("svc.screen_definition")),
            Value::Int(1),
        );
        let head = SCREEN_DEFINITION;
        assert_eq!(head.mismatch(&v, &id, &one), None);
        let other = Value::Str(Cow::Borrowed("spine.v1"));
        let wrong = |path: &'static str, text: &str| Some((path, text.to_owned()));
        assert_eq!(
            head.mismatch(&other, &id, &one),
            wrong("$.version", "allowed: \"spine.v2\"")
        );
        assert_eq!(
            head.mismatch(&v, &Value::Null, &one),
            wrong("$.schema_id", "expected a string: svc.screen_definition")
        );
        assert_eq!(
            head.mismatch(&v, &id, &Value::Int(2)),
            wrong("$.schema_version", "allowed: 1")
        );
    }
}
