//! Integers written as text by hand: the record encoding and the record hash write millions of
//! them a second, where `format!` cost more than the rest of a run's encoding.

/// Appends `n` in decimal (as `{}` writes it, without the formatting machinery, which cost
/// more than the rest of a run's encoding).
pub fn push_dec(out: &mut String, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in &digits[i..] {
        out.push(d as char);
    }
}

/// Appends `n` in lower-case hexadecimal, as `{:x}` writes it.
pub fn push_hex(out: &mut String, n: u64) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
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
    for &d in &digits[i..] {
        out.push(d as char);
    }
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
            let (mut d, mut h) = (String::new(), String::new());
            push_dec(&mut d, n);
            push_hex(&mut h, n);
            assert_eq!((d, h), (format!("{n}"), format!("{n:x}")));
        }
    }
}
