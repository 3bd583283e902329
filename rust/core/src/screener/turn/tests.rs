//! The turn against the calls it stands for (a universe close, the delta writer, the
//! observation writer, called as the per-event path calls them), its sequence rules, the
//! payloads its strict reader refuses, and no input that panics.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::event::{read, Event, LiveBar, Refused};
use super::{Book, Outcome, Stop, Turn};
use crate::bars::{Bar, Channel, Resolution, SeriesConfig, MINUTE_NS};
use crate::features::{default_registry, Universe, Updated};
use crate::screener::{DeltaWriter, Deltas, ObservationWriter};

const M: u64 = MINUTE_NS;
const T0: u64 = 19_000 * 1_440 * M;
const FEED: &str = "http://node-1";

/// Instruments `I0.SIM`.. at prices of 2 digits and sizes of 3, all of `FEED` but `I5.SIM`
/// (of another node), each warmed on `minutes` bars.
struct Rows {
    universe: Universe,
    book: Book,
    deltas: (DeltaWriter, Deltas),
    observations: ObservationWriter,
}

fn price(i: u32, minute: u64) -> i64 {
    10_000 + ((minute * 7_919 + u64::from(i) * 13) % 97) as i64 - 48
}

fn bar(i: u32, minute: u64) -> Bar {
    let p = price(i, minute);
    Bar::new(
        T0 + minute * M,
        p,
        p + 25,
        p - 25,
        p + 3,
        1_000 * i64::from(i % 5),
    )
}

fn rows(instruments: u32, minutes: u64) -> Rows {
    let mut universe = Universe::new(default_registry().select::<&str>(None).unwrap());
    let mut book = Book::new();
    let (mut deltas, mut observations) = (DeltaWriter::new(), ObservationWriter::new());
    for i in 0..instruments {
        let config = SeriesConfig::new(Channel::External, 2, 3).unwrap();
        assert_eq!(universe.add(config).unwrap(), i);
        let feed = if i == 5 { "http://node-2" } else { FEED };
        assert_eq!(book.add(&format!("I{i}.SIM"), feed), i);
        deltas.register(i, &format!("I{i}.SIM")).unwrap();
        observations.register(i, &format!("I{i}.SIM")).unwrap();
        for minute in 1..=minutes {
            universe
                .observe(i, T0 + (minute - 1) * M, T0 + minute * M)
                .unwrap();
            universe
                .close_minute(&[(i, bar(i, minute))], &mut Vec::new())
                .unwrap();
        }
        book.set_sequence(i, Some(minutes)).unwrap();
    }
    let mut out = Deltas::default();
    deltas.refresh(&universe, &mut out).unwrap();
    observations.prime(&universe, None).unwrap();
    Rows {
        universe,
        book,
        deltas: (deltas, out),
        observations,
    }
}

/// The bar of instrument `i` at `minute`, as the node streams it (sequence = minute).
fn payload(i: u32, minute: u64) -> Vec<u8> {
    let b = bar(i, minute);
    let decimal = |m: i64, scale: u32| {
        let p = 10i64.pow(scale);
        format!("{}.{:0w$}", m / p, m % p, w = scale as usize)
    };
    format!(
        concat!(
            r#"{{"version":"spine.v2","schema_id":"svc.bar_envelope","schema_version":1,"#,
            r#""instrument_id":"I{i}.SIM","bar_type":"I{i}.SIM-1-MINUTE-LAST-EXTERNAL","resolution":"1m","#,
            r#""channel":"EXTERNAL","bars":[{{"sequence":{seq},"ts_event":"{ts}","open":"{o}","high":"{h}","#,
            r#""low":"{l}","close":"{c}","volume":"{v}"}}],"coverage":{{"observed":[{{"start":"0","end":"{ts}"}}],"#,
            r#""gaps":[],"bar_count":{seq},"newest_close":"{ts}","resume_from":null,"exhausted":false}},"#,
            r#""withheld":[],"next_cursor":null}}"#
        ),
        i = i,
        seq = minute,
        ts = b.ts_event,
        o = decimal(b.open, 2),
        h = decimal(b.high, 2),
        l = decimal(b.low, 2),
        c = decimal(b.close, 2),
        v = decimal(b.volume, 3),
    )
    .into_bytes()
}

fn take(rows: &mut Rows, payloads: &[Vec<u8>], version: u64) -> Outcome {
    let payloads: Vec<&[u8]> = payloads.iter().map(Vec::as_slice).collect();
    Turn {
        universe: &mut rows.universe,
        book: &mut rows.book,
        deltas: Some((&mut rows.deltas.0, &mut rows.deltas.1)),
        observations: Some(&mut rows.observations),
    }
    .take(FEED, &payloads, version)
}

/// The same bars through the calls the per-event path makes: observe each, one close, the
/// deltas framed, the observations.
fn by_hand(
    rows: &mut Rows,
    bars: &[(u32, Bar)],
    version: u64,
) -> (Vec<Updated>, Vec<Vec<u8>>, Vec<Vec<u8>>) {
    for &(i, b) in bars {
        rows.universe
            .observe(i, b.ts_event - M, b.ts_event)
            .unwrap();
    }
    let mut changed = Vec::new();
    rows.universe.close_minute(bars, &mut changed).unwrap();
    rows.deltas
        .0
        .deltas(&rows.universe, &changed, &mut rows.deltas.1)
        .unwrap();
    let frames = rows
        .deltas
        .1
        .iter()
        .map(|(_, doc)| {
            [
                format!("id: {version}\nevent: delta\ndata: ").as_bytes(),
                doc,
                b"\n\n",
            ]
            .concat()
        })
        .collect();
    let mut observations = Vec::new();
    rows.observations
        .observe(&rows.universe, &changed, &mut observations)
        .unwrap();
    (changed, frames, observations)
}

#[test]
fn a_turn_equals_the_calls_it_stands_for() {
    let (mut ours, mut theirs) = (rows(6, 30), rows(6, 30));
    for minute in 31..=40 {
        // Out of instrument order, as the node's turn may send them; the other node's too.
        let order = [3, 0, 5, 1, 4, 2];
        let payloads: Vec<Vec<u8>> = order.iter().map(|&i| payload(i, minute)).collect();
        let outcome = take(&mut ours, &payloads, minute);
        assert_eq!((outcome.stop, outcome.error.clone()), (Stop::End, None));
        assert_eq!(outcome.offered, Some(T0 + minute * M));
        assert_eq!(outcome.runs.len(), 1);
        let bars: Vec<(u32, Bar)> = (0..5).map(|i| (i, bar(i, minute))).collect();
        let (changed, frames, observations) = by_hand(&mut theirs, &bars, minute + 1);
        let run = &outcome.runs[0];
        assert_eq!((run.bars, run.newest), (5, T0 + minute * M));
        assert_eq!(run.changed, changed);
        let ours_frames: Vec<&[u8]> = run.frames.iter().map(|f| &*f.bytes).collect();
        assert_eq!(
            ours_frames,
            frames.iter().map(Vec::as_slice).collect::<Vec<_>>()
        );
        assert_eq!(run.observations, observations);
        for i in 0..5 {
            assert_eq!(ours.book.sequence(i).unwrap(), Some(minute));
        }
        assert_eq!(
            ours.book.sequence(5).unwrap(),
            Some(30),
            "another node's instrument"
        );
    }
}

#[test]
fn folded_closes_are_dropped_and_a_jump_stops_the_turn() {
    let mut ours = rows(3, 30);
    let payloads = [
        payload(0, 30),
        payload(0, 31),
        payload(1, 31),
        payload(1, 33),
        payload(2, 31),
    ];
    let outcome = take(&mut ours, &payloads, 7);
    assert_eq!(
        outcome.stop,
        Stop::Jump {
            event: 3,
            instrument: 1
        }
    );
    assert_eq!(
        outcome.offered,
        Some(T0 + 33 * M),
        "the jumping close is offered too"
    );
    assert_eq!(outcome.runs.len(), 1);
    assert_eq!(outcome.runs[0].bars, 2);
    assert_eq!(ours.book.sequence(1).unwrap(), Some(31));
    // An instrument twice in a turn: two runs, two versions.
    let payloads = [payload(0, 32), payload(0, 33), payload(1, 32)];
    let outcome = take(&mut ours, &payloads, 9);
    assert_eq!(
        outcome.runs.iter().map(|r| r.bars).collect::<Vec<_>>(),
        [1, 2]
    );
    assert!(outcome.runs[1].frames[0].bytes.starts_with(b"id: 11\n"));
}

#[test]
fn a_refused_payload_folds_nothing() {
    let mut ours = rows(2, 30);
    let mut bad = payload(1, 31);
    bad.extend_from_slice(b" x");
    let outcome = take(&mut ours, &[payload(0, 31), bad], 1);
    assert_eq!(
        (outcome.stop, outcome.offered, outcome.runs.len()),
        (Stop::Refused { event: 1 }, None, 0)
    );
    assert_eq!(ours.book.sequence(0).unwrap(), Some(30));
}

#[test]
fn a_refused_close_leaves_the_runs_before_it() {
    let mut ours = rows(2, 30);
    // A bar whose high is below its low: the close refuses it after the observe.
    let text = String::from_utf8(payload(1, 31))
        .unwrap()
        .replace(r#""high":"#, r#""high":"1","x":"#);
    let outcome = take(
        &mut ours,
        &[payload(0, 31), payload(0, 32), text.into_bytes()],
        1,
    );
    assert_eq!(outcome.runs.len(), 1);
    assert!(outcome.error.is_some());
    assert_eq!(ours.book.sequence(0).unwrap(), Some(31));
}

fn read_one(text: &str) -> Result<Event, Refused> {
    let rows = rows(6, 1);
    read(
        text.as_bytes(),
        rows.book.feed_number(FEED),
        &rows.book,
        &rows.universe,
    )
}

#[test]
fn the_reader_takes_what_the_per_event_path_takes_the_same_way() {
    let well = String::from_utf8(payload(0, 31)).unwrap();
    let expected = LiveBar {
        instrument: 0,
        bar: bar(0, 31),
        sequence: 31,
    };
    assert_eq!(read_one(&well), Ok(Event::Bars(vec![expected])));
    for skipped in [
        well.replace("I0.SIM", "I5.SIM"), // another node's
        well.replace("I0.SIM", "NOPE.SIM"),
        r#"{"instrument_id":"NOPE.SIM"}"#.into(),
        r#"{"instrument_id":"I0.SIM","bars":[]}"#.into(),
    ] {
        assert_eq!(read_one(&skipped), Ok(Event::Skip), "{skipped}");
    }
}

#[test]
fn the_reader_refuses_what_the_per_event_path_may_read_otherwise() {
    let well = String::from_utf8(payload(0, 31)).unwrap();
    for refused in [
        well.replace(r#""bar_count":31"#, r#""bar_count":31.0"#),
        well.replace(r#""sequence":31"#, r#""sequence":"31""#),
        well.replace(r#""sequence":31"#, r#""sequence":-31"#),
        well.replace(r#""sequence":31"#, r#""sequence":31,"sequence":32"#),
        well.replace(
            r#""withheld":[]"#,
            r#""withheld":[],"instrument_id":"I0.SIM""#,
        ),
        well.replace(r#""bars":["#, r#""bars":null,"x":["#),
        well.replace(r#""volume":""#, r#""volume":"0.0001"#),
        well.replace(r#""open":""#, r#""open":"99999999999999999999"#),
        well.replace(r#""ts_event":""#, r#""ts_event":"0"#),
        well.replace(r#","close":"#, r#","closes":"#),
        well.replace("{\"version\"", "[{\"version\"") + "]",
        well.clone() + "}",
        well[..well.len() - 2].to_owned(),
        String::new(),
    ] {
        assert_eq!(read_one(&refused), Err(Refused), "{refused}");
    }
    let early = concat!(
        r#"{"instrument_id":"I0.SIM","bars":[{"sequence":1,"ts_event":"1","open":"1","high":"1","#,
        r#""low":"1","close":"1","volume":"1"}]}"#
    );
    assert_eq!(read_one(early), Err(Refused));
}

#[test]
fn a_feed_serving_nothing_skips_every_close() {
    let mut ours = rows(2, 3);
    let payloads: Vec<&[u8]> = vec![b"{\"instrument_id\":\"I0.SIM\",\"bars\":[]}"];
    let outcome = Turn {
        universe: &mut ours.universe,
        book: &mut ours.book,
        deltas: None,
        observations: None,
    }
    .take("http://elsewhere", &payloads, 0);
    assert_eq!((outcome.stop, outcome.runs.len()), (Stop::End, 0));
}

#[test]
fn a_row_without_a_bar_goes_out_whole() {
    let ours = rows(1, 0);
    let row = Updated {
        instrument: 0,
        resolution: Resolution::M5,
    };
    let frame = super::frame::row(4, &ours.universe, row, "I0.SIM").unwrap();
    let text = String::from_utf8(frame.to_vec()).unwrap();
    assert!(text.starts_with(concat!(
        "id: 4\nevent: row\ndata: {\"version\":\"spine.v2\",\"schema_id\":\"svc.feature_row\",",
        "\"schema_version\":1,\"instrument_id\":\"I0.SIM\",\"resolution\":\"5m\",\"ts_event\":null,",
        "\"values\":{\"atr_14.value\":{\"kind\":\"ABSENT\",\"reason\":\"WARMING_UP\",\"bars_seen\":0,"
    )), "{text}");
    assert!(text.ends_with("}}\n\n"));
}

mod property_tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// No payload panics: cut, spliced or flipped anywhere, a payload is read or refused.
        #[test]
        fn no_payload_panics(
            cut in 0usize..600,
            at in 0usize..600,
            byte in any::<u8>(),
            noise in proptest::collection::vec(any::<u8>(), 0..40),
        ) {
            let mut rows = rows(2, 2);
            let well = payload(0, 3);
            let mut spliced = well.clone();
            let at = at.min(spliced.len());
            spliced.splice(at..at, noise.iter().copied());
            let mut flipped = well.clone();
            let k = at.min(flipped.len() - 1);
            flipped[k] = byte;
            let payloads = [well[..cut.min(well.len())].to_vec(), spliced, flipped, noise];
            for p in &payloads {
                let _ = take(&mut rows, std::slice::from_ref(p), 1);
            }
        }
    }
}
