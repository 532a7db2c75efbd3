//! Integers written as text by hand, as bytes: the record encoding and the record hash write millions of
//! them a second, where `format!` cost more than the rest of a run's encoding.

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

/// Where record text is written: an output buffer itself, or a [`Line`] on the stack that is
/// copied into one whole. The record encoding and the record hash each write a record through
/// one function generic over this, whichever it goes to.
pub trait Sink {
    /// Appends one byte.
    fn put(&mut self, b: u8);

    /// Appends bytes.
    fn put_slice(&mut self, s: &[u8]);

    /// Appends `n` in decimal, as `{}` writes it.
    fn dec(&mut self, n: u64);

    /// Appends `n` in lower-case hexadecimal, as `{:x}` writes it.
    fn hex(&mut self, n: u64);

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

    #[inline]
    fn hex(&mut self, n: u64) {
        push_hex(self, n);
    }
}

/// Appends `n` in lower-case hexadecimal, as `{:x}` writes it.
pub fn push_hex(out: &mut Vec<u8>, n: u64) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    if n >> 60 != 0 {
        // Sixteen digits (the bits of almost every f64 the records hold): one fixed-size copy.
        out.extend_from_slice(&hex16(n));
        return;
    }
    let mut digits = [0u8; 16];
    let mut i = digits.len();
    let mut n = n;
    loop {
        i -= 1;
        digits[i] = HEX[(n & 0xf) as usize];
        n >>= 4;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// Bytes a [`Line`] holds: the longest record line the record encoding and the record hash
/// write on their fast path (a decision row is at most about 210 bytes with a role of
/// [`Line::ROLE`] bytes and a one-number action).
const LINE: usize = 256;

/// One record's text built in a fixed buffer on the stack, then appended to its output in one
/// copy, so that the output's capacity is checked once a record rather than at every byte.
pub struct Line {
    buf: [u8; LINE],
    len: usize,
}

impl Default for Line {
    fn default() -> Self {
        Line { buf: [0; LINE], len: 0 }
    }
}

impl Line {
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

    /// Empties the line.
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// The bytes written so far.
    #[inline]
    pub fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl Sink for Line {
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

    /// Numbers below 10,000 (steps, seats, names) from a table of digit pairs without a call.
    #[inline]
    fn dec(&mut self, n: u64) {
        if n < 10 {
            self.put(b'0' + n as u8);
        } else if n < 100 {
            self.put_slice(&pair(n));
        } else if n < 10_000 {
            let (hi, lo) = (n / 100, n % 100);
            if hi < 10 {
                self.put(b'0' + hi as u8);
            } else {
                self.put_slice(&pair(hi));
            }
            self.put_slice(&pair(lo));
        } else {
            self.put_slice(itoa::Buffer::new().format(n).as_bytes());
        }
    }

    #[inline]
    fn hex(&mut self, n: u64) {
        let digits = hex16(n);
        // `{:x}` writes no leading zeros (and "0" for zero).
        let skip = ((n | 1).leading_zeros() / 4) as usize;
        self.put_slice(&digits[skip..]);
    }
}

/// The two decimal digits of `n` (below 100).
#[inline]
fn pair(n: u64) -> [u8; 2] {
    [b'0' + (n / 10) as u8, b'0' + (n % 10) as u8]
}

/// The sixteen hexadecimal digits of `n`.
#[inline]
fn hex16(n: u64) -> [u8; 16] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    std::array::from_fn(|k| HEX[((n >> (60 - 4 * k)) & 0xf) as usize])
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
            let (mut d, mut h) = (Vec::new(), Vec::new());
            push_dec(&mut d, n);
            push_hex(&mut h, n);
            assert_eq!((d, h), (format!("{n}").into_bytes(), format!("{n:x}").into_bytes()));
            let mut line = Line::default();
            line.dec(n);
            line.put(b'|');
            line.hex(n);
            line.put(b'|');
            line.signed(n as i64);
            assert_eq!(line.bytes(), format!("{n}|{n:x}|{}", n as i64).as_bytes());
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
                let mut line = Line::default();
                line.action(&action);
                assert_eq!(line.bytes(), action.encode().as_bytes());
            }
        }
    }
}
