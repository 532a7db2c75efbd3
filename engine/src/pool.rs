//! Memory kept from finished runs for the runs that follow, shared by every thread: a run's
//! record lists and row buffers are filled by the thread that plays it and let go of by the one
//! that writes it (or hashes it), so a pool per thread would keep them where no run is played,
//! and memory freed instead had to be touched afresh (its pages cleared by the kernel).

use std::sync::Mutex;

/// What a pool holds, with the bytes each item keeps.
pub(crate) trait Held {
    /// Bytes the item holds (its capacity, not its length).
    fn bytes(&self) -> usize;
}

impl Held for Vec<u8> {
    fn bytes(&self) -> usize {
        self.capacity()
    }
}

/// Items kept up to a byte budget, all together.
pub(crate) struct Pool<T> {
    kept: Mutex<(Vec<T>, usize)>,
    limit: usize,
}

impl<T: Held> Pool<T> {
    /// An empty pool keeping at most `limit` bytes.
    pub(crate) const fn new(limit: usize) -> Self {
        Pool { kept: Mutex::new((Vec::new(), 0)), limit }
    }

    /// Keeps `item` if it holds memory and the budget has room for it; drops it otherwise.
    pub(crate) fn give(&self, item: T) {
        let bytes = item.bytes();
        if bytes == 0 {
            return;
        }
        let Ok(mut kept) = self.kept.lock() else { return };
        if kept.1 + bytes <= self.limit {
            kept.1 += bytes;
            kept.0.push(item);
        }
    }

    /// Takes the item `pick` chooses (by its index among those kept), if any.
    pub(crate) fn take(&self, pick: impl FnOnce(&[T]) -> Option<usize>) -> Option<T> {
        let mut kept = self.kept.lock().ok()?;
        let i = pick(&kept.0)?;
        let item = kept.0.swap_remove(i);
        kept.1 -= item.bytes();
        Some(item)
    }
}
