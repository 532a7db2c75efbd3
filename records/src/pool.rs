//! Memory kept from finished runs for the runs that follow: the engine's one way of keeping it,
//! with one bound.
//!
//! A finished run leaves what the next run would otherwise build or grow afresh — its record
//! lists, its row buffers, the views its game read its outcomes through, the sizes it
//! recorded, its world with the schedules that play it — in a [`Pool`] of its kind. Every pool
//! is shared by all threads (a run's lists are filled by the thread that plays it and let go
//! of by the one that writes it, so a pool per thread would keep them where no run is played),
//! and every pool counts against one budget, [`KEEP_LIMIT`] bytes in all: what would exceed it
//! is freed instead. What a run records is the same whether it reuses kept memory or not
//! (tested); only where it is written changes.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The bound on all memory kept between runs, in bytes, across every pool.
pub const KEEP_LIMIT: usize = 160 << 20;

/// Bytes kept in all pools together.
static KEPT: AtomicUsize = AtomicUsize::new(0);

/// What a pool holds, with the bytes each item keeps.
pub trait Held {
    /// Bytes the item holds (its capacity, not its length); the same while it is kept.
    fn bytes(&self) -> usize;
}

impl Held for Vec<u8> {
    fn bytes(&self) -> usize {
        self.capacity()
    }
}

/// Items of one kind kept between runs, counted against [`KEEP_LIMIT`].
pub struct Pool<T> {
    kept: Mutex<Vec<T>>,
}

impl<T: Held> Default for Pool<T> {
    fn default() -> Self {
        Pool::new()
    }
}

impl<T: Held> Pool<T> {
    /// An empty pool.
    pub const fn new() -> Self {
        Pool { kept: Mutex::new(Vec::new()) }
    }

    /// Keeps `item` if it holds memory and the budget has room for it; drops it otherwise.
    pub fn give(&self, item: T) {
        let bytes = item.bytes();
        if bytes == 0 {
            return;
        }
        let room =
            KEPT.fetch_update(Ordering::AcqRel, Ordering::Acquire, |k| (k + bytes <= KEEP_LIMIT).then_some(k + bytes));
        if room.is_err() {
            return;
        }
        match self.kept.lock() {
            Ok(mut kept) => kept.push(item),
            Err(_) => {
                KEPT.fetch_sub(bytes, Ordering::AcqRel);
            }
        }
    }

    /// Takes the item `pick` chooses (by its index among those kept), if any.
    pub fn take(&self, pick: impl FnOnce(&[T]) -> Option<usize>) -> Option<T> {
        let mut kept = self.kept.lock().ok()?;
        let i = pick(&kept)?;
        let item = kept.swap_remove(i);
        drop(kept);
        KEPT.fetch_sub(item.bytes(), Ordering::AcqRel);
        Some(item)
    }

    /// Takes the item kept last, if any.
    pub fn take_any(&self) -> Option<T> {
        self.take(|kept| kept.len().checked_sub(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An item that says how many bytes it keeps.
    struct Sized(usize);

    impl Held for Sized {
        fn bytes(&self) -> usize {
            self.0
        }
    }

    #[test]
    fn a_pool_keeps_within_the_one_bound_and_hands_back_what_it_kept() {
        static P: Pool<Sized> = Pool::new();
        // Past the bound, and holding nothing: neither is kept.
        P.give(Sized(KEEP_LIMIT + 1));
        P.give(Sized(0));
        assert!(P.take_any().is_none());
        P.give(Sized(7));
        P.give(Sized(3));
        assert_eq!(P.take(|kept| kept.iter().position(|s| s.0 == 7)).map(|s| s.0), Some(7));
        assert_eq!(P.take_any().map(|s| s.0), Some(3));
        assert!(P.take_any().is_none());
    }
}
