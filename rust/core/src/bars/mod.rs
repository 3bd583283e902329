//! Bars: the durable 1-minute series, its coverage, and folding to derived resolutions on the
//! UTC calendar grid (pinned decision 6) with gap withholding (DESIGN.md, "Gaps and sparse
//! series").

mod coverage;
mod derived;
mod error;
mod fold;
mod incremental;
mod page;
mod resolution;
mod runs;
mod series;
mod view;

pub use coverage::Coverage;
pub use derived::Derived;
pub use error::BarsError;
pub use fold::{fold, fold_many, FoldOutput, Withheld, WithheldReason};
pub use incremental::{Closed, IncrementalFold};
pub use page::{write_bar_row, write_decimal, write_page, Page, PageQuery};
pub use resolution::{Channel, Resolution, MINUTE_NS};

/// The last instant a bar or a coverage span may carry: 2^63-1 ns (year 2262). Arrow's
/// `timestamp[ns]` is signed, and below it every bucket end (up to a day past) fits a `u64`.
pub const MAX_TS: u64 = i64::MAX as u64;
pub use series::{Bar, Counters, PushOutcome, ResumeHint, Series, SeriesConfig, DEFAULT_CAPACITY};
pub use view::BarsView;
