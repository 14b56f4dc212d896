//! Pacing under GitHub's secondary limit on points per minute: a REST read costs 1 point, a
//! write 5, and GitHub allows 900 points a minute for the REST API (decisions/0034). With
//! reads in flight in parallel, a tick could otherwise spend that in seconds.
//!
//! A token bucket that refills at 90 % of the limit, evenly, and lets 5 % go at once: a
//! long run of requests (a burst of labels, a cold tick) is sent at 90 % of what GitHub
//! allows, and no rolling minute spends more than 95 % (the burst plus a minute of refill),
//! which leaves a margin for the clocks of GitHub's accounting and ours.
//! A request that would overdraw the bucket reserves its points and waits until they have
//! refilled, so requests keep their order and no request waits longer than it must.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Points a REST read costs.
pub(crate) const READ_POINTS: u32 = 1;
/// Points a REST write costs.
pub(crate) const WRITE_POINTS: u32 = 5;

/// GitHub's documented REST limit, in points per minute.
pub const GITHUB_REST_POINTS_PER_MINUTE: u32 = 900;

/// The bucket.
#[derive(Debug)]
pub(crate) struct Pacer {
    /// Points that may go at once.
    burst: f64,
    /// Points refilled per second.
    per_second: f64,
    /// Points left (negative: reserved ahead), as of the instant.
    state: Mutex<(f64, Instant)>,
}

impl Pacer {
    /// A pacer for a limit of `points_per_minute`, starting full at `now`.
    pub(crate) fn new(points_per_minute: u32, now: Instant) -> Self {
        let limit = f64::from(points_per_minute.max(1));
        let burst = (limit * 0.05).max(1.0);
        Self {
            burst,
            per_second: limit * 0.9 / 60.0,
            state: Mutex::new((burst, now)),
        }
    }

    /// Reserves `points` at `now` and returns how long the request must wait for them.
    pub(crate) fn reserve(&self, points: u32, now: Instant) -> Duration {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let (left, since) = *state;
        let elapsed = now.saturating_duration_since(since).as_secs_f64();
        let refilled = (left + elapsed * self.per_second).min(self.burst);
        let after = refilled - f64::from(points);
        *state = (after, now.max(since));
        if after >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-after / self.per_second)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_burst_goes_at_once_and_then_requests_wait_for_the_refill() {
        let start = Instant::now();
        // 900 points a minute: 45 at once, then 13.5 per second (810 a minute).
        let pacer = Pacer::new(900, start);
        for _ in 0..45 {
            assert_eq!(pacer.reserve(READ_POINTS, start), Duration::ZERO);
        }
        // The next read waits 1/13.5 s; a write after it 5/13.5 s more.
        let wait = pacer.reserve(READ_POINTS, start);
        assert!((wait.as_secs_f64() - 1.0 / 13.5).abs() < 1e-9, "{wait:?}");
        let wait = pacer.reserve(WRITE_POINTS, start);
        assert!((wait.as_secs_f64() - 6.0 / 13.5).abs() < 1e-9, "{wait:?}");
    }

    #[test]
    fn a_long_run_goes_at_ninety_percent_and_no_rolling_minute_passes_ninety_five() {
        let start = Instant::now();
        let pacer = Pacer::new(900, start);
        // Greedy reads, each sent when the pacer allows: count what goes out in the first
        // minute.
        let mut sent_at = Vec::new();
        let mut clock = start;
        while clock < start + Duration::from_secs(120) {
            let wait = pacer.reserve(READ_POINTS, clock);
            clock += wait;
            sent_at.push(clock);
        }
        let window = |from: Instant| {
            sent_at
                .iter()
                .filter(|t| **t >= from && **t < from + Duration::from_secs(60))
                .count()
        };
        for offset in [0, 10, 30, 59] {
            let in_window = window(start + Duration::from_secs(offset));
            assert!(in_window <= 855, "{in_window} points in a minute");
        }
        assert!(
            window(start) >= 850,
            "the first minute spends the burst and a minute of refill: {}",
            window(start)
        );
        // Once the burst is spent, every minute goes at the refill: 90 % of the limit.
        let sustained = window(start + Duration::from_secs(30));
        assert!(
            (810..=812).contains(&sustained),
            "a long run is sent at 810 points a minute: {sustained}"
        );
    }

    #[test]
    fn a_quiet_spell_refills_up_to_the_burst_only() {
        let start = Instant::now();
        let pacer = Pacer::new(900, start);
        assert_eq!(pacer.reserve(45, start), Duration::ZERO);
        // An hour later the bucket holds the burst again, not an hour of refill.
        let later = start + Duration::from_secs(3600);
        assert_eq!(pacer.reserve(45, later), Duration::ZERO);
        assert!(pacer.reserve(1, later) > Duration::ZERO);
    }
}
