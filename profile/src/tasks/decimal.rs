//! C3's later amounts at 50-digit precision (the profile methods §C3): L = 100(1 + r)^(d/365), computed
//! in fixed point with 60 decimal digits after the point, then rounded once, half up, to two
//! decimal places.
//!
//! The arithmetic is a small unsigned fixed-point decimal: limbs of ten decimal digits, least
//! significant first, scaled by 10^60. Only what the formula needs is here: ln x for a small
//! rational x through ln x = 2·atanh((x − 1)/(x + 1)) (the series argument is a ratio of small
//! integers, so it needs no division of two long numbers), multiplication and division by
//! small integers, and exp t by its Taylor series (t < 1 here).

const LIMB: u128 = 10_000_000_000;
/// Digits after the decimal point: 60 (six limbs), ten more than the seed's 50.
const SCALE_LIMBS: usize = 6;

/// An unsigned fixed-point decimal: the value is limbs / 10^60.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Fixed(Vec<u128>);

impl Fixed {
    fn from_int(n: u64) -> Fixed {
        let mut limbs = vec![0u128; SCALE_LIMBS];
        limbs.push(u128::from(n) % LIMB);
        limbs.push(u128::from(n) / LIMB);
        Fixed(limbs).trimmed()
    }

    fn trimmed(mut self) -> Fixed {
        while self.0.len() > SCALE_LIMBS + 1 && self.0.last() == Some(&0) {
            self.0.pop();
        }
        self
    }

    fn is_zero(&self) -> bool {
        self.0.iter().all(|l| *l == 0)
    }

    fn add(&self, other: &Fixed) -> Fixed {
        let n = self.0.len().max(other.0.len());
        let mut out = Vec::with_capacity(n + 1);
        let mut carry = 0u128;
        for i in 0..n {
            let s = self.0.get(i).copied().unwrap_or(0) + other.0.get(i).copied().unwrap_or(0) + carry;
            out.push(s % LIMB);
            carry = s / LIMB;
        }
        out.push(carry);
        Fixed(out).trimmed()
    }

    fn mul_small(&self, k: u64) -> Fixed {
        let mut out = Vec::with_capacity(self.0.len() + 2);
        let mut carry = 0u128;
        for l in &self.0 {
            let p = l * u128::from(k) + carry;
            out.push(p % LIMB);
            carry = p / LIMB;
        }
        while carry > 0 {
            out.push(carry % LIMB);
            carry /= LIMB;
        }
        Fixed(out).trimmed()
    }

    fn div_small(&self, k: u64) -> Fixed {
        let k = u128::from(k);
        let mut out = vec![0u128; self.0.len()];
        let mut rem = 0u128;
        for i in (0..self.0.len()).rev() {
            let cur = rem * LIMB + self.0[i];
            out[i] = cur / k;
            rem = cur % k;
        }
        Fixed(out).trimmed()
    }

    /// The product of two fixed-point numbers, truncated to the scale.
    fn mul(&self, other: &Fixed) -> Fixed {
        let mut acc = vec![0u128; self.0.len() + other.0.len() + 1];
        for (i, a) in self.0.iter().enumerate() {
            let mut carry = 0u128;
            for (j, b) in other.0.iter().enumerate() {
                let cur = acc[i + j] + a * b + carry;
                acc[i + j] = cur % LIMB;
                carry = cur / LIMB;
            }
            let mut k = i + other.0.len();
            while carry > 0 {
                let cur = acc[k] + carry;
                acc[k] = cur % LIMB;
                carry = cur / LIMB;
                k += 1;
            }
        }
        Fixed(acc[SCALE_LIMBS..].to_vec()).trimmed()
    }

    /// Rounds once, half up, to `places` decimal places; returns the value times 10^places.
    fn round_half_up(&self, places: u32) -> u64 {
        // The integer part and the first 20 fractional digits suffice to decide.
        let int = self.0[SCALE_LIMBS..].iter().rev().fold(0u128, |a, l| a * LIMB + l);
        let frac20 = self.0[SCALE_LIMBS - 1] * LIMB + self.0[SCALE_LIMBS - 2];
        let shift = 10u128.pow(20 - places);
        let kept = frac20 / shift;
        let rest = frac20 % shift;
        // Half up: the dropped digits are at least one half of the last kept place (the digits
        // past the first twenty only add to what is dropped).
        let up = rest >= shift / 2;
        let scaled = int * 10u128.pow(places) + kept + u128::from(up);
        u64::try_from(scaled).unwrap_or(u64::MAX)
    }
}

/// ln((num/den)) for num > den > 0, by 2·Σ y^(2k+1)/(2k+1) with y = (num − den)/(num + den).
fn ln_ratio(num: u64, den: u64) -> Fixed {
    let (p, q) = (num - den, num + den);
    // term = y^(2k+1), starting at y.
    let mut power = Fixed::from_int(p).div_small(q);
    let mut sum = Fixed::from_int(0);
    let mut k = 0u64;
    while !power.is_zero() {
        sum = sum.add(&power.div_small(2 * k + 1));
        power = power.mul_small(p * p).div_small(q * q);
        k += 1;
    }
    sum.mul_small(2)
}

/// e^t for 0 ≤ t < 1 by its Taylor series.
fn exp(t: &Fixed) -> Fixed {
    let mut term = Fixed::from_int(1);
    let mut sum = Fixed::from_int(1);
    let mut n = 1u64;
    loop {
        term = term.mul(t).div_small(n);
        if term.is_zero() {
            return sum;
        }
        sum = sum.add(&term);
        n += 1;
    }
}

/// C3's later amount for an annual return of `return_percent` % and a wait of `days` days, in
/// hundredths of a credit: 100(1 + r)^(d/365) at 60-digit precision, rounded once, half up,
/// to two decimal places (so 105.86 is 10586).
pub fn later_amount_cents(return_percent: u64, days: u64) -> u64 {
    // 1 + r = (100 + percent)/100.
    let ln = ln_ratio(100 + return_percent, 100);
    let t = ln.mul_small(days).div_small(365);
    exp(&t).mul_small(100).round_half_up(2)
}

/// Hundredths of a credit as the text the model reads ("105.86").
pub fn cents_text(cents: u64) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The profile methods §C3's table of later amounts (gap in days × annual return grade).
    #[test]
    fn the_amounts_table_of_c3() {
        let table: [(u64, [&str; 4]); 3] = [
            (7, ["100.50", "101.34", "102.69", "103.80"]),
            (30, ["102.18", "105.86", "112.07", "117.34"]),
            (90, ["106.68", "118.64", "140.75", "161.58"]),
        ];
        for (days, row) in table {
            for (grade, want) in [30, 100, 300, 600].into_iter().zip(row) {
                assert_eq!(cents_text(later_amount_cents(grade, days)), want, "r = {grade} %, d = {days}");
            }
        }
    }

    #[test]
    fn the_fixed_point_arithmetic_is_exact_where_it_should_be() {
        // ln 2 to 40 digits.
        let ln2 = ln_ratio(2, 1);
        let digits: String = ln2.0[..SCALE_LIMBS].iter().rev().map(|l| format!("{l:010}")).collect();
        assert!(digits.starts_with("6931471805599453094172321214581765680755"), "{digits}");
        // e^0 = 1 and e^(ln 2) = 2 (rounded to 2 places).
        assert_eq!(exp(&Fixed::from_int(0)).round_half_up(2), 100);
        assert_eq!(exp(&ln2).round_half_up(2), 200);
        // Half up: 0.125 → 0.13.
        assert_eq!(Fixed::from_int(125).div_small(1000).round_half_up(2), 13);
        assert_eq!(Fixed::from_int(124).div_small(1000).round_half_up(2), 12);
    }
}
