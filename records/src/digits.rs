//! Integers written as text by hand, as bytes: the record encoding writes millions of them a
//! second, where `format!` cost more than the rest of a run's encoding.

use agora_environments::Action;

/// Appends `n` in decimal (as `{}` writes it, without the formatting machinery, which cost
/// more than the rest of a run's encoding): two digits at a time from a table (`itoa`, the
/// routine serde_json writes integers with).
pub fn push_dec(out: &mut Vec<u8>, n: u64) {
    if n < 10 {
        out.push(b'0' + n as u8);
        return;
    }
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// Where record text is written: an output buffer itself ([`Text`], or a `Vec<u8>`), or a
/// [`Line`], the window of a [`Text`] one record is written into in place. The record encoding
/// writes a record through one function generic over this, whichever it goes to.
pub trait Sink {
    /// Appends one byte.
    fn put(&mut self, b: u8);

    /// Appends bytes.
    fn put_slice(&mut self, s: &[u8]);

    /// Appends `n` in decimal, as `{}` writes it.
    fn dec(&mut self, n: u64);

    /// Appends each of `numbers` in decimal, each followed by `separator` (the leading fields
    /// of a record: its step, round and seat, or an interaction's numbers).
    #[inline]
    fn fields(&mut self, numbers: &[u32], separator: u8) {
        for &n in numbers {
            self.dec(n.into());
            self.put(separator);
        }
    }

    /// Appends `n` in decimal with its sign, as `{}` writes an `i64`.
    #[inline]
    fn signed(&mut self, n: i64) {
        if n < 0 {
            self.put(b'-');
        }
        self.dec(n.unsigned_abs());
    }

    /// Appends an action's compact text, the bytes [`Action::encode`] returns (`c1`, `a17`,
    /// `[0,3,0]`), without a new string per action.
    #[inline]
    fn action(&mut self, action: &Action) {
        match action {
            Action::Choice(i) => {
                self.put(b'c');
                self.dec(u64::from(*i));
            }
            Action::Amount(a) => {
                self.put(b'a');
                self.signed(*a);
            }
            Action::Allocation(v) => {
                self.put(b'[');
                for (k, x) in v.iter().enumerate() {
                    if k > 0 {
                        self.put(b',');
                    }
                    self.signed(*x);
                }
                self.put(b']');
            }
        }
    }
}

impl Sink for Vec<u8> {
    #[inline]
    fn put(&mut self, b: u8) {
        self.push(b);
    }

    #[inline]
    fn put_slice(&mut self, s: &[u8]) {
        self.extend_from_slice(s);
    }

    #[inline]
    fn dec(&mut self, n: u64) {
        push_dec(self, n);
    }
}

/// Bytes a [`Line`] may write: the longest record line the record encoding writes on its fast
/// path (a decision row is at most about 210 bytes with a role of [`Line::ROLE`] bytes and a
/// one-number action), with room past it.
const LINE: usize = 256;

/// A record's output: bytes written through [`Text::line`] straight into the buffer, which
/// keeps at least [`LINE`] bytes of room (initialised bytes, zeros or left over from earlier
/// writes) past its end, so that a record's text is written in place (its room checked once a
/// record) and never copied. Building a record in a buffer of
/// its own and copying it in cost a fifth of a run's encoding and hashing: a copy of the
/// record's own length is a call to `memmove`, and reading back bytes just written one at a
/// time stalls the processor.
#[derive(Default)]
pub struct Text {
    /// The text up to `len`; past it, room that later writes overwrite.
    bytes: Vec<u8>,
    len: usize,
}

impl Text {
    /// An empty text in `buffer` (what it held is dropped), room for `capacity` bytes made.
    pub fn in_buffer(mut buffer: Vec<u8>, capacity: usize) -> Text {
        buffer.clear();
        buffer.resize(capacity + LINE, 0);
        Text { bytes: buffer, len: 0 }
    }

    /// An empty text in a buffer that `take` hands out for the bytes this needs (its text and
    /// the room past it), room for `capacity` bytes made.
    pub fn in_buffer_for(take: impl FnOnce(usize) -> Vec<u8>, capacity: usize) -> Text {
        Text::in_buffer(take(capacity + LINE), capacity)
    }

    /// Writes one record through `write`, in place.
    #[inline]
    pub fn line<R>(&mut self, write: impl FnOnce(&mut Line<'_>) -> R) -> R {
        if self.bytes.len() < self.len + LINE {
            self.grow(LINE);
        }
        let window: &mut [u8; LINE] = (&mut self.bytes[self.len..self.len + LINE]).try_into().expect("LINE bytes");
        let mut line = Line { buf: window, len: 0 };
        let result = write(&mut line);
        self.len += line.len;
        result
    }

    /// Makes room for `more` bytes past the end.
    #[cold]
    fn grow(&mut self, more: usize) {
        let want = (self.len + more).max(2 * self.bytes.len());
        self.bytes.resize(want, 0);
    }

    /// The bytes written.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    /// Bytes written.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is written.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Forgets what was written (the room stays).
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// The bytes written, as a buffer of their own length.
    pub fn into_bytes(mut self) -> Vec<u8> {
        self.bytes.truncate(self.len);
        self.bytes
    }
}

impl Sink for Text {
    #[inline]
    fn put(&mut self, b: u8) {
        self.put_slice(&[b]);
    }

    #[inline]
    fn put_slice(&mut self, s: &[u8]) {
        if self.bytes.len() < self.len + s.len() {
            self.grow(s.len());
        }
        self.bytes[self.len..self.len + s.len()].copy_from_slice(s);
        self.len += s.len();
    }

    #[inline]
    fn dec(&mut self, n: u64) {
        self.put_slice(itoa::Buffer::new().format(n).as_bytes());
    }
}

/// One record's text, written in place into a [`Text`] ([`Text::line`]).
pub struct Line<'a> {
    buf: &'a mut [u8; LINE],
    len: usize,
}

impl Line<'_> {
    /// The longest role (in bytes) a line takes on the fast path; a longer one goes the
    /// general way.
    pub const ROLE: usize = 48;

    /// Whether an action's text fits a line beside the rest of a record (one number, or an
    /// allocation of a few).
    pub fn fits(action: &Action) -> bool {
        match action {
            Action::Choice(_) | Action::Amount(_) => true,
            Action::Allocation(v) => v.len() <= 2,
        }
    }

    /// The first `len` bytes of `word` (lowest first), written as one eight-byte store into
    /// the line's room.
    #[inline]
    fn put_word(&mut self, word: u64, len: usize) {
        self.buf[self.len..self.len + 8].copy_from_slice(&word.to_le_bytes());
        self.len += len;
    }
}

impl Sink for Line<'_> {
    #[inline]
    fn put(&mut self, b: u8) {
        self.buf[self.len] = b;
        self.len += 1;
    }

    #[inline]
    fn put_slice(&mut self, s: &[u8]) {
        self.buf[self.len..self.len + s.len()].copy_from_slice(s);
        self.len += s.len();
    }

    /// Numbers below 10,000 (steps, seats, names) from [`DEC4`]: one load and one fixed
    /// eight-byte store, of which the line keeps the digits.
    #[inline]
    fn dec(&mut self, n: u64) {
        if n < 10_000 {
            let (digits, count) = dec4(n as usize);
            self.put_word(digits, count);
        } else {
            self.put_slice(itoa::Buffer::new().format(n).as_bytes());
        }
    }

    /// Each number below 10,000 and its separator as one fixed eight-byte store.
    #[inline]
    fn fields(&mut self, numbers: &[u32], separator: u8) {
        for &n in numbers {
            if n < 10_000 {
                let (digits, count) = dec4(n as usize);
                self.put_word(digits | u64::from(separator) << (8 * count), count + 1);
            } else {
                self.dec(n.into());
                self.put(separator);
            }
        }
    }
}

/// The digits of `n` (below 10,000) from [`DEC4`], lowest byte first, and their count.
#[inline]
fn dec4(n: usize) -> (u64, usize) {
    let entry = DEC4[n];
    (entry & 0x00ff_ffff_ffff_ffff, (entry >> 56) as usize)
}

/// The decimal text of each number below 10,000, computed when the program is compiled: its
/// digits from the lowest byte up and their count in the highest byte. A record's numbers
/// (steps, seats, names) are nearly all below 10,000, and their lengths (a seat of one digit
/// or two) follow no pattern a processor predicts, so one load beats a branch per digit.
static DEC4: [u64; 10_000] = dec4_table();

const fn dec4_table() -> [u64; 10_000] {
    let mut table = [0u64; 10_000];
    let mut n = 0;
    while n < 10_000 {
        let count = if n < 10 {
            1
        } else if n < 100 {
            2
        } else if n < 1000 {
            3
        } else {
            4
        };
        let mut entry = (count as u64) << 56;
        let (mut rest, mut k) = (n, count);
        while k > 0 {
            k -= 1;
            entry |= ((b'0' + (rest % 10) as u8) as u64) << (8 * k);
            rest /= 10;
        }
        table[n] = entry;
        n += 1;
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn integers_are_written_as_format_writes_them() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(4);
        for n in [0u64, 1, 9, 10, 15, 16, 255, 256, u64::from(u32::MAX), u64::MAX]
            .into_iter()
            .chain((0..10_000).map(|_| rng.random::<u64>() >> rng.random_range(0..64)))
        {
            let mut d = Vec::new();
            push_dec(&mut d, n);
            assert_eq!(d, format!("{n}").into_bytes());
            // In place through a line, and through the text's general path, twice each (the
            // second time over bytes the first left).
            let want = format!("{n}|{}", n as i64);
            let mut text = Text::in_buffer(b"old bytes".to_vec(), 0);
            for _ in 0..2 {
                text.line(|line| {
                    line.dec(n);
                    line.put(b'|');
                    line.signed(n as i64);
                });
                text.dec(n);
                text.put(b'|');
                text.signed(n as i64);
            }
            assert_eq!(text.as_bytes(), want.repeat(4).as_bytes());
            assert_eq!(text.into_bytes(), want.repeat(4).into_bytes());
        }
    }

    #[test]
    fn every_number_below_twenty_thousand_is_written_as_format_writes_it() {
        // Every entry of the table, the numbers past it, and each with a separator after it,
        // several to a line as a record writes them.
        for first in (0u32..20_000).step_by(3) {
            let numbers = [first, first + 1, first + 2];
            let want: String = numbers.iter().map(|n| format!("{n},")).collect();
            let mut text = Text::in_buffer(b"some earlier bytes".to_vec(), 0);
            text.line(|line| line.fields(&numbers, b','));
            text.line(|line| {
                for n in numbers {
                    line.dec(n.into());
                    line.put(b',');
                }
            });
            assert_eq!(text.as_bytes(), want.repeat(2).as_bytes());
        }
    }

    #[test]
    fn actions_are_written_as_encode_writes_them() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(5);
        let signed = |rng: &mut rand_xoshiro::Xoshiro256PlusPlus| -> i64 {
            [0, 1, -1, i64::MIN, i64::MAX, rng.random::<i64>() >> rng.random_range(0..64)][rng.random_range(0..6)]
        };
        for _ in 0..10_000 {
            let action = match rng.random_range(0..3) {
                0 => Action::Choice(rng.random::<u32>() >> rng.random_range(0..32)),
                1 => Action::Amount(signed(&mut rng)),
                _ => Action::Allocation((0..rng.random_range(0..5)).map(|_| signed(&mut rng)).collect()),
            };
            let mut out = b"x".to_vec();
            out.action(&action);
            assert_eq!(out, format!("x{}", action.encode()).into_bytes());
            if Line::fits(&action) {
                let mut text = Text::default();
                text.line(|line| line.action(&action));
                assert_eq!(text.as_bytes(), action.encode().as_bytes());
            }
        }
    }
}
