//! Criterion benches: canonical JSON writing and identities on realistic documents.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use spine_core::json::{canonicalize, parse};
use spine_core::{identity_hex, CanonicalWriter};

fn feature_row() -> String {
    let values: Vec<String> = (0..60)
        .map(|i| {
            format!(
                r#""feat_{i:02}.value":{{"kind":"DECIMAL","value":"{}.{:04}"}}"#,
                100 + i,
                i * 37
            )
        })
        .collect();
    format!(
        r#"{{"version":"spine.v2","schema_id":"svc.feature_row","schema_version":1,"instrument_id":"BTCUSDT.SIM","resolution":"1m","ts_event":"1700000000000000000","values":{{{}}}}}"#,
        values.join(",")
    )
}

fn bar_page() -> String {
    let bars: Vec<String> = (0..500)
        .map(|i| {
            format!(
                r#"{{"sequence":{i},"ts_event":"{}","open":"100.{i:02}","high":"101.00","low":"99.50","close":"100.25","volume":"12.345678"}}"#,
                1_700_000_000_000_000_000u64 + i * 60_000_000_000
            )
        })
        .collect();
    format!(
        r#"{{"version":"spine.v2","schema_id":"svc.bar_envelope","schema_version":1,"bars":[{}]}}"#,
        bars.join(",")
    )
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("canonical_json");
    for (name, doc) in [("feature_row", feature_row()), ("bar_page_500", bar_page())] {
        let value = parse(doc.as_bytes()).unwrap_or(spine_core::Value::Null);
        group.throughput(Throughput::Bytes(doc.len() as u64));
        group.bench_with_input(BenchmarkId::new("canonicalize_text", name), &doc, |b, d| {
            b.iter(|| canonicalize(d.as_bytes()));
        });
        group.bench_with_input(BenchmarkId::new("write_tree", name), &value, |b, v| {
            b.iter(|| {
                let mut w = CanonicalWriter::with_capacity(doc.len());
                let _ = v.write_canonical(&mut w);
                w.into_bytes()
            });
        });
        let canonical = canonicalize(doc.as_bytes()).unwrap_or_default();
        group.bench_with_input(BenchmarkId::new("identity", name), &canonical, |b, c| {
            b.iter(|| identity_hex("config_hash", c));
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
