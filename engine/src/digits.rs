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

/// Appends `n` in decimal with its sign, as `{}` writes an `i64`.
pub fn push_signed(out: &mut Vec<u8>, n: i64) {
    if n < 0 {
        out.push(b'-');
    }
    push_dec(out, n.unsigned_abs());
}

/// Appends an action's compact text, the bytes [`Action::encode`] returns (`c1`, `a17`,
/// `[0,3,0]`), without a new string per action.
pub fn push_action(out: &mut Vec<u8>, action: &Action) {
    match action {
        Action::Choice(i) => {
            out.push(b'c');
            push_dec(out, u64::from(*i));
        }
        Action::Amount(a) => {
            out.push(b'a');
            push_signed(out, *a);
        }
        Action::Allocation(v) => {
            out.push(b'[');
            for (k, x) in v.iter().enumerate() {
                if k > 0 {
                    out.push(b',');
                }
                push_signed(out, *x);
            }
            out.push(b']');
        }
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

    /// Appends one byte.
    #[inline]
    pub fn push(&mut self, b: u8) {
        self.buf[self.len] = b;
        self.len += 1;
    }

    /// Appends bytes.
    #[inline]
    pub fn extend(&mut self, s: &[u8]) {
        self.buf[self.len..self.len + s.len()].copy_from_slice(s);
        self.len += s.len();
    }

    /// Appends `n` in decimal, as [`push_dec`] does; numbers below 10,000 (steps, seats,
    /// names) from a table of digit pairs without a call.
    #[inline]
    pub fn dec(&mut self, n: u64) {
        if n < 10 {
            self.push(b'0' + n as u8);
        } else if n < 100 {
            let d = pair(n);
            self.extend(&d);
        } else if n < 10_000 {
            let (hi, lo) = (n / 100, n % 100);
            if hi < 10 {
                self.push(b'0' + hi as u8);
            } else {
                self.extend(&pair(hi));
            }
            self.extend(&pair(lo));
        } else {
            self.extend(itoa::Buffer::new().format(n).as_bytes());
        }
    }

    /// Appends `n` in decimal with its sign, as [`push_signed`] does.
    #[inline]
    pub fn signed(&mut self, n: i64) {
        if n < 0 {
            self.push(b'-');
        }
        self.dec(n.unsigned_abs());
    }

    /// Appends `n` in lower-case hexadecimal, as [`push_hex`] does.
    #[inline]
    pub fn hex(&mut self, n: u64) {
        let digits = hex16(n);
        // `{:x}` writes no leading zeros (and "0" for zero).
        let skip = ((n | 1).leading_zeros() / 4) as usize;
        self.extend(&digits[skip..]);
    }

    /// Appends an action's compact text, as [`push_action`] does (the action must
    /// [`fit`](Line::fits)).
    #[inline]
    pub fn action(&mut self, action: &Action) {
        match action {
            Action::Choice(i) => {
                self.push(b'c');
                self.dec(u64::from(*i));
            }
            Action::Amount(a) => {
                self.push(b'a');
                self.signed(*a);
            }
            Action::Allocation(v) => {
                self.push(b'[');
                for (k, x) in v.iter().enumerate() {
                    if k > 0 {
                        self.push(b',');
                    }
                    self.signed(*x);
                }
                self.push(b']');
            }
        }
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
            line.push(b'|');
            line.hex(n);
            line.push(b'|');
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
            push_action(&mut out, &action);
            assert_eq!(out, format!("x{}", action.encode()).into_bytes());
            if Line::fits(&action) {
                let mut line = Line::default();
                line.action(&action);
                assert_eq!(line.bytes(), action.encode().as_bytes());
            }
        }
    }
}
