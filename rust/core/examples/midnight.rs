//! A profiling harness for the worst minute close (00:00 UTC, all seven resolutions), with
//! the knobs the criterion bench (`benches/universe.rs`) does not have: the universe's size,
//! one thread or the split, and the feature list. It prints medians of fresh rounds (each a
//! copy of a universe warmed to the day's start that then took the day's 1,439 minutes live,
//! as in the bench), per instrument, so sizes compare:
//!
//! ```text
//! cargo run --release -p spine-core --example midnight -- [INSTRUMENTS] [single|split] [ROUNDS]
//! SPINE_SKIP=donchian_20,trend_200 cargo run --release -p spine-core --example midnight
//! ```
//!
//! `single` passes the minute out of instrument order, which keeps it on one thread (up to
//! 256 instruments, one block, `split` stays on one thread too, in order). Instruction counts
//! of the midnight close alone:
//!
//! ```text
//! CARGO_PROFILE_RELEASE_DEBUG=true cargo build --release -p spine-core --example midnight
//! valgrind --tool=callgrind --toggle-collect='*timed_close*' \
//!     target/release/examples/midnight 200 split 1
//! ```
//!
//! What comes between the day's last minute and the midnight close (default: nothing):
//!
//! ```text
//! SPINE_COLD=1         write 96 MiB first: the universe starts out of cache
//! SPINE_IDLE_US=20000  sleep 20 ms first, as a live close follows a minute's idle
//! SPINE_BUSY_US=20000  loop 20 ms first on registers alone (the thread keeps its core)
//! ```
//!
//! `SPINE_DELTAS=1` times the close through a `DeltaWriter` that published every row before
//! it: the close and every changed row's `svc.feature_row_delta` encoded.
//!
//! `docs/performance.md` records what they measured.
#![allow(missing_docs)]

use std::time::{Duration, Instant};

use spine_core::bars::{Bar, BarsView, Channel, SeriesConfig};
use spine_core::features::{default_registry, Universe, Updated};
use spine_core::screener::{DeltaWriter, Deltas};

#[path = "../benches/common/walk.rs"]
mod walk;
use walk::bar;

const BARS: u64 = 5_000;
const LIVE: u64 = 1_439;

struct Args {
    instruments: u64,
    single: bool,
    rounds: usize,
    skip: Vec<String>,
    before: Before,
}

/// What the thread does between the day's last minute and the timed midnight close.
#[derive(Clone, Copy)]
enum Before {
    Nothing,
    /// Write a buffer larger than the last-level cache.
    Evict,
    /// Sleep this long.
    Idle(Duration),
    /// Compute this long without touching memory.
    Busy(Duration),
}

impl Before {
    fn from_env() -> Self {
        let micros = |name: &str| {
            std::env::var(name)
                .ok()
                .and_then(|s| s.parse().ok())
                .map(Duration::from_micros)
        };
        if std::env::var_os("SPINE_COLD").is_some() {
            Self::Evict
        } else if let Some(d) = micros("SPINE_IDLE_US") {
            Self::Idle(d)
        } else if let Some(d) = micros("SPINE_BUSY_US") {
            Self::Busy(d)
        } else {
            Self::Nothing
        }
    }

    fn run(self) {
        match self {
            Self::Nothing => {}
            Self::Evict => evict_caches(),
            Self::Idle(d) => std::thread::sleep(d),
            Self::Busy(d) => {
                let (start, mut x) = (Instant::now(), 1_u64);
                while start.elapsed() < d {
                    x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
                }
            }
        }
    }
}

fn args() -> Result<Args, String> {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let number = |k: usize, default: u64| -> Result<u64, String> {
        argv.get(k).map_or(Ok(default), |s| {
            s.parse()
                .map_err(|_| format!("argument {k}: not a count: {s}"))
        })
    };
    let skip = std::env::var("SPINE_SKIP").unwrap_or_default();
    Ok(Args {
        instruments: number(0, 1_000)?.max(2),
        single: argv.get(1).is_some_and(|s| s == "single"),
        rounds: usize::try_from(number(2, 7)?.max(1)).unwrap_or(7),
        skip: skip
            .split(',')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect(),
        before: Before::from_env(),
    })
}

/// A universe of `args.instruments`, warmed in bulk up to the day's start.
fn day_start(args: &Args, midnight: u64) -> Result<Universe, String> {
    let features = default_registry()
        .features()
        .iter()
        .filter(|f| !args.skip.contains(&f.spec.feature_id))
        .cloned()
        .collect();
    let mut universe = Universe::new(features);
    let config = SeriesConfig {
        channel: Channel::External,
        price_scale: 2,
        size_scale: 3,
        capacity: BARS as usize,
    };
    for i in 0..args.instruments {
        let index = universe.add(config).map_err(|e| e.to_string())?;
        let bars: Vec<Bar> = (midnight - BARS + 1..midnight - LIVE)
            .map(|m| bar(i, m))
            .collect();
        let column = |f: fn(&Bar) -> i64| bars.iter().map(f).collect::<Vec<i64>>();
        let (open, high, low) = (column(|b| b.open), column(|b| b.high), column(|b| b.low));
        let (close, volume) = (column(|b| b.close), column(|b| b.volume));
        let ts_event: Vec<u64> = bars.iter().map(|b| b.ts_event).collect();
        let view = BarsView::new(&ts_event, [&open, &high, &low, &close, &volume], None);
        universe.warm(index, &view).map_err(|e| e.to_string())?;
    }
    Ok(universe)
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort_unstable();
    xs[xs.len() / 2]
}

fn main() -> Result<(), String> {
    let args = args()?;
    let midnight = 4 * 1_440;
    let universe = day_start(&args, midnight)?;
    let minute = |m: u64| -> Vec<(u32, Bar)> {
        let mut bars: Vec<(u32, Bar)> = (0..args.instruments)
            .map(|i| (u32::try_from(i).unwrap_or(u32::MAX), bar(i, m)))
            .collect();
        if args.single {
            bars.swap(0, 1);
        }
        bars
    };
    let day: Vec<Vec<(u32, Bar)>> = (midnight - LIVE..midnight).map(minute).collect();
    let closes = minute(midnight);
    let (mut midnights, mut minutes) = (Vec::new(), Vec::new());
    let mut updated: Vec<Updated> = Vec::new();
    for _ in 0..args.rounds {
        let mut copy = universe.clone();
        let start = Instant::now();
        for bars in &day {
            updated.clear();
            copy.close_minute(bars, &mut updated)
                .map_err(|e| e.to_string())?;
        }
        minutes.push(start.elapsed() / LIVE as u32);
        updated.clear();
        if std::env::var_os("SPINE_DELTAS").is_some() {
            let (mut writer, mut out) = (DeltaWriter::new(), Deltas::default());
            for i in 0..closes.len() {
                let index = u32::try_from(i).unwrap_or(u32::MAX);
                writer
                    .register(index, &format!("SYM{i}USDT.SIM"))
                    .map_err(|e| e.to_string())?;
            }
            writer.refresh(&copy, &mut out).map_err(|e| e.to_string())?;
            args.before.run();
            let start = Instant::now();
            timed_deltas(&mut writer, &mut copy, &closes, &mut out).map_err(|e| e.to_string())?;
            midnights.push(start.elapsed());
            if out.len() != 7 * closes.len() {
                return Err(format!("{} documents, not 7 per bar", out.len()));
            }
            continue;
        }
        args.before.run();
        let start = Instant::now();
        timed_close(&mut copy, &closes, &mut updated).map_err(|e| e.to_string())?;
        midnights.push(start.elapsed());
        if updated.len() != 7 * closes.len() {
            return Err(format!("{} rows changed, not 7 per bar", updated.len()));
        }
    }
    let n = args.instruments as f64;
    let (midnight, minute) = (median(midnights), median(minutes));
    println!(
        "instruments {} ({}), skipped [{}]: midnight {:.1} us ({:.3} us per instrument); \
         a day minute {:.1} us",
        args.instruments,
        if args.single { "one thread" } else { "split" },
        args.skip.join(","),
        midnight.as_secs_f64() * 1e6,
        midnight.as_secs_f64() * 1e6 / n,
        minute.as_secs_f64() * 1e6,
    );
    Ok(())
}

/// Write a buffer larger than the last-level cache, a byte per line.
fn evict_caches() {
    let mut junk = vec![1_u8; 96 << 20];
    for (i, byte) in junk.iter_mut().enumerate().step_by(64) {
        *byte = byte.wrapping_add(i as u8);
    }
    std::hint::black_box(&junk);
}

/// The midnight close alone, kept out of line so callgrind can count it
/// (`--toggle-collect='*timed_close*'`, see `docs/performance.md`).
#[inline(never)]
fn timed_close(
    u: &mut Universe,
    bars: &[(u32, Bar)],
    updated: &mut Vec<Updated>,
) -> Result<(), spine_core::features::FeatureError> {
    u.close_minute(bars, updated)
}

/// The midnight close with every delta encoded (`SPINE_DELTAS=1`).
#[inline(never)]
fn timed_deltas(
    writer: &mut DeltaWriter,
    u: &mut Universe,
    bars: &[(u32, Bar)],
    out: &mut Deltas,
) -> Result<(), spine_core::features::FeatureError> {
    writer.close_minute(u, bars, out)
}
