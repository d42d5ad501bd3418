//! Progress of large blob transfers: a callback, called at 0% and at each
//! further tenth, only for blobs of at least [`PROGRESS_MIN_BYTES`].

use std::fmt;
use std::sync::Arc;

/// Smaller blobs take too little time to be worth reporting.
pub const PROGRESS_MIN_BYTES: u64 = 1 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Push,
    Pull,
}

/// One progress report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transfer {
    pub direction: Direction,
    /// Lower-case hex SHA-256 of the blob.
    pub digest: String,
    pub done: u64,
    pub total: u64,
}

impl Transfer {
    pub fn percent(&self) -> u64 {
        (self.done * 100).checked_div(self.total).unwrap_or(100)
    }
}

impl fmt::Display for Transfer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verb = match self.direction {
            Direction::Push => "pushing",
            Direction::Pull => "pulling",
        };
        let mib = |b: u64| b as f64 / f64::from(1 << 20);
        let short = &self.digest[..self.digest.len().min(12)];
        write!(f, "{verb} sha256:{short}: {:>3}% ({:.1} of {:.1} MiB)", self.percent(), mib(self.done), mib(self.total))
    }
}

type Report = Arc<dyn Fn(&Transfer) + Send + Sync>;

/// Where progress goes: nowhere ([`Progress::default`]), stderr, or a callback.
#[derive(Clone, Default)]
pub struct Progress(Option<Report>);

impl Progress {
    pub fn new(report: impl Fn(&Transfer) + Send + Sync + 'static) -> Progress {
        Progress(Some(Arc::new(report)))
    }

    /// One line on stderr per report (stdout stays for the command's result).
    pub fn stderr() -> Progress {
        Progress::new(|t| eprintln!("{t}"))
    }

    /// A meter for one blob of `total` bytes.
    pub(crate) fn meter(&self, direction: Direction, digest: &str, total: u64) -> Meter {
        let report = self.0.clone().filter(|_| total >= PROGRESS_MIN_BYTES);
        let transfer = Transfer { direction, digest: digest.to_owned(), done: 0, total };
        let mut meter = Meter { report, transfer, reported: None };
        meter.advance(0);
        meter
    }
}

/// Counts one blob's bytes and reports each new tenth.
pub(crate) struct Meter {
    report: Option<Report>,
    transfer: Transfer,
    reported: Option<u64>,
}

impl Meter {
    pub(crate) fn advance(&mut self, bytes: u64) {
        self.transfer.done = self.transfer.done.saturating_add(bytes);
        let Some(report) = &self.report else { return };
        let tenth = self.transfer.percent().min(100) / 10;
        if self.reported.is_none_or(|r| tenth > r) {
            self.reported = Some(tenth);
            report(&self.transfer);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    fn record(total: u64, chunk: u64) -> Vec<Transfer> {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let progress = Progress::new(move |t| sink.lock().unwrap().push(t.clone()));
        let mut meter = progress.meter(Direction::Pull, "00112233445566778899", total);
        let mut left = total;
        while left > 0 {
            let n = chunk.min(left);
            meter.advance(n);
            left -= n;
        }
        seen.lock().unwrap().clone()
    }

    #[test]
    fn reports_each_tenth_of_a_large_blob() {
        let seen = record(3 << 20, 64 << 10);
        let percents: Vec<u64> = seen.iter().map(Transfer::percent).collect();
        assert_eq!(percents.len(), 11, "{percents:?}");
        assert_eq!((percents[0], percents[10]), (0, 100));
        assert!(percents.windows(2).all(|w| w[1] / 10 == w[0] / 10 + 1), "{percents:?}");
        assert_eq!(seen[10].to_string(), "pulling sha256:001122334455: 100% (3.0 of 3.0 MiB)");
    }

    #[test]
    fn one_big_chunk_reports_start_and_end() {
        let percents: Vec<u64> = record(2 << 20, 2 << 20).iter().map(Transfer::percent).collect();
        assert_eq!(percents, [0, 100]);
    }

    #[test]
    fn small_blobs_are_silent() {
        assert!(record(PROGRESS_MIN_BYTES - 1, 1000).is_empty());
        assert!(record(0, 1).is_empty());
    }
}
