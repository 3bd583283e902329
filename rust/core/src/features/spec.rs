//! The feature spec (`svc.feature_spec`): what a feature computes, from what, with which exact
//! parameters, after how many bars, and which typed outputs it declares.
//!
//! `config_hash = identity("config_hash", canonical JSON of the spec body)`, where the body is
//! the document without its envelope tags (`version`, `schema_id`, `schema_version`) and
//! without `config_hash` itself: the hash names the computation, not the wire framing.

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::head::FEATURE_SPEC;
use crate::identity::identity_hex;
use crate::json::{CanonicalWriter, Value};

/// The semver of every kernel shipped in this crate; bumped when a kernel's output changes.
pub const FEATURE_VERSION: &str = "1.0.2";

/// The type of one output's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ValueType {
    /// A decimal string at the output's scale.
    Decimal,
    /// A signed 64-bit integer (scale 0).
    Integer,
    /// A nanosecond UNIX timestamp (scale 0).
    UnixNanos,
}

impl ValueType {
    /// The wire name.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Decimal => "DECIMAL",
            Self::Integer => "INTEGER",
            Self::UnixNanos => "UNIX_NANOS",
        }
    }
}

/// When an output's value is recomputed. Only bar close exists today.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Refresh {
    /// On every closed input bar.
    BarClose,
}

impl Refresh {
    /// The wire name.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::BarClose => "BAR_CLOSE",
        }
    }
}

/// One declared output of a feature.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OutputSpec {
    /// Output name; the row key is `<feature_id>.<name>`.
    pub name: &'static str,
    /// Value type.
    pub value_type: ValueType,
    /// Decimal scale (0 for integers and timestamps).
    pub scale: u8,
    /// Refresh cadence.
    pub refresh: Refresh,
}

/// A feature definition as served by the registry endpoint (definitions only, no values).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeatureSpec {
    /// Stable id, e.g. `rsi_14`.
    pub feature_id: String,
    /// Semver of the computation.
    pub feature_version: &'static str,
    /// Where the feature computes, e.g. `spine_core.features.rsi`.
    pub implementation: &'static str,
    /// What it consumes: `BAR` (closed bars of one instrument and resolution).
    pub input_kind: &'static str,
    /// Canonical parameters as exact decimal or integer strings, in key order. The optional
    /// `threshold` parameter is the only basis for highlighting a cell.
    pub parameters: BTreeMap<String, String>,
    /// Closed input bars needed before the first value (`warmupBars`).
    pub warmup_bars: u64,
    /// Declared outputs, in row order.
    pub outputs: Vec<OutputSpec>,
}

fn text(s: &str) -> Value<'_> {
    Value::Str(Cow::Borrowed(s))
}

fn member<'a>(key: &'static str, value: Value<'a>) -> (Cow<'a, str>, Value<'a>) {
    (Cow::Borrowed(key), value)
}

/// A count as a JSON integer; counts beyond i64 cannot come from a valid spec.
fn int(n: u64) -> Value<'static> {
    Value::Int(i64::try_from(n).unwrap_or(i64::MAX))
}

impl FeatureSpec {
    /// The row keys this feature owns: `<feature_id>.<output_name>`, in output order.
    #[must_use]
    pub fn keys(&self) -> Vec<String> {
        self.outputs
            .iter()
            .map(|o| format!("{}.{}", self.feature_id, o.name))
            .collect()
    }

    /// The threshold parameter, if declared.
    #[must_use]
    pub fn threshold(&self) -> Option<&str> {
        self.parameters.get("threshold").map(String::as_str)
    }

    /// The hashed body: the spec without envelope tags and without `config_hash`.
    #[must_use]
    pub fn body(&self) -> Value<'_> {
        let parameters = self
            .parameters
            .iter()
            .map(|(k, v)| (Cow::Borrowed(k.as_str()), text(v)))
            .collect();
        let outputs = self
            .outputs
            .iter()
            .map(|o| {
                Value::Object(vec![
                    member("name", text(o.name)),
                    member("refresh", text(o.refresh.name())),
                    member("scale", Value::Int(i64::from(o.scale))),
                    member("value_type", text(o.value_type.name())),
                ])
            })
            .collect();
        Value::Object(vec![
            member("feature_id", text(&self.feature_id)),
            member("feature_version", text(self.feature_version)),
            member("implementation", text(self.implementation)),
            member("input_kind", text(self.input_kind)),
            member("outputs", Value::Array(outputs)),
            member("parameters", Value::Object(parameters)),
            member(
                "warmup",
                Value::Object(vec![member("warmupBars", int(self.warmup_bars))]),
            ),
        ])
    }

    /// Canonical JSON bytes of [`Self::body`].
    #[must_use]
    pub fn canonical_body(&self) -> Vec<u8> {
        let mut writer = CanonicalWriter::with_capacity(512);
        // The body is built from unique static keys and a BTreeMap: it cannot be refused.
        match self.body().write_canonical(&mut writer) {
            Ok(()) => writer.into_bytes(),
            Err(_) => Vec::new(),
        }
    }

    /// `identity("config_hash", canonical body)` as lowercase hex.
    #[must_use]
    pub fn config_hash(&self) -> String {
        // "config_hash" is a valid identity name, so this never takes the fallback.
        identity_hex("config_hash", &self.canonical_body()).unwrap_or_default()
    }

    /// The full `svc.feature_spec` document: envelope tags, the body and `config_hash`.
    #[must_use]
    pub fn document(&self) -> Value<'static> {
        let mut members: Vec<(Cow<'static, str>, Value<'static>)> = FEATURE_SPEC.members().into();
        members.push(member(
            "config_hash",
            Value::Str(Cow::Owned(self.config_hash())),
        ));
        if let Value::Object(body) = self.body() {
            members.extend(body.into_iter().map(|(k, v)| (own_key(k), own(v))));
        }
        Value::Object(members)
    }
}

fn own_key(key: Cow<'_, str>) -> Cow<'static, str> {
    Cow::Owned(key.into_owned())
}

/// Detach a value tree from the borrows of the spec it was built from.
fn own(value: Value<'_>) -> Value<'static> {
    match value {
        Value::Null => Value::Null,
        Value::Bool(b) => Value::Bool(b),
        Value::Int(i) => Value::Int(i),
        Value::Str(s) => Value::Str(Cow::Owned(s.into_owned())),
        Value::Array(items) => Value::Array(items.into_iter().map(own).collect()),
        Value::Object(members) => Value::Object(
            members
                .into_iter()
                .map(|(k, v)| (own_key(k), own(v)))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> FeatureSpec {
        FeatureSpec {
            feature_id: "rsi_14".into(),
            feature_version: FEATURE_VERSION,
            implementation: "spine_core.features.rsi",
            input_kind: "BAR",
            parameters: [("threshold", "70"), ("period", "14")]
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect(),
            warmup_bars: 15,
            outputs: vec![OutputSpec {
                name: "value",
                value_type: ValueType::Decimal,
                scale: 4,
                refresh: Refresh::BarClose,
            }],
        }
    }

    #[test]
    fn canonical_body_is_sorted_and_compact() {
        let body = String::from_utf8(spec().canonical_body()).unwrap_or_default();
        assert_eq!(
            body,
            concat!(
                r#"{"feature_id":"rsi_14","feature_version":"1.0.2","#,
                r#""implementation":"spine_core.features.rsi","input_kind":"BAR","#,
                r#""outputs":[{"name":"value","refresh":"BAR_CLOSE","scale":4,"value_type":"DECIMAL"}],"#,
                r#""parameters":{"period":"14","threshold":"70"},"warmup":{"warmupBars":15}}"#
            )
        );
    }

    #[test]
    fn config_hash_is_the_identity_of_the_body() {
        let s = spec();
        let expected = identity_hex("config_hash", &s.canonical_body()).unwrap_or_default();
        assert_eq!(s.config_hash(), expected);
        assert_eq!(s.config_hash().len(), 64);
        let mut other = s.clone();
        other.parameters.insert("period".into(), "15".into());
        assert_ne!(other.config_hash(), s.config_hash());
        assert_eq!(s.threshold(), Some("70"));
        assert_eq!(s.keys(), vec!["rsi_14.value".to_owned()]);
    }

    #[test]
    fn document_carries_tags_and_hash() {
        let s = spec();
        let mut writer = CanonicalWriter::with_capacity(512);
        assert!(s.document().write_canonical(&mut writer).is_ok());
        let doc = String::from_utf8(writer.into_bytes()).unwrap_or_default();
        assert!(doc.starts_with(&format!(r#"{{"config_hash":"{}","#, s.config_hash())));
        assert!(doc.contains(r#""schema_id":"svc.feature_spec","schema_version":1"#));
        assert!(doc.ends_with(r#""version":"spine.v2","warmup":{"warmupBars":15}}"#));
    }
}
