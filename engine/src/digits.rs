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
        let digits: [u8; 16] = std::array::from_fn(|k| HEX[((n >> (60 - 4 * k)) & 0xf) as usize]);
        out.extend_from_slice(&digits);
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
        }
    }
}
