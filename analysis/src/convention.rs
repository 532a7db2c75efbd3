//! The convention rule, applied to a stored sequence of naming-game interactions.
//!
//! A convention is recorded at the first interaction at which at least `threshold` of the last
//! `window` interactions matched (95 % of 50 in the instrument); its name is the name most
//! matched on in that window.

/// When and on what a convention was first recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConventionEvent {
    /// 1-based interaction at which the rule first held.
    pub t: u32,
    pub name: u32,
}

/// Scans interactions `(t, matched name or None)` in order and returns the first time the rule
/// holds with a name accepted by `accept` (any name for convention formation, the alternative
/// for tipping).
pub fn first_convention(
    interactions: impl IntoIterator<Item = (u32, Option<u32>)>,
    window: usize,
    threshold: f64,
    accept: impl Fn(u32) -> bool,
) -> Option<ConventionEvent> {
    let needed = ((threshold * window as f64) - 1e-9).ceil().max(1.0) as usize;
    let mut recent: std::collections::VecDeque<Option<u32>> = std::collections::VecDeque::with_capacity(window + 1);
    let mut matches = 0usize;
    for (t, m) in interactions {
        if recent.len() == window {
            if let Some(Some(_)) = recent.pop_front() {
                matches -= 1;
            }
        }
        if m.is_some() {
            matches += 1;
        }
        recent.push_back(m);
        if recent.len() == window && matches >= needed {
            let mut counts: Vec<(u32, usize)> = Vec::new();
            for n in recent.iter().flatten() {
                match counts.iter_mut().find(|(x, _)| x == n) {
                    Some((_, c)) => *c += 1,
                    None => counts.push((*n, 1)),
                }
            }
            let name = counts.into_iter().max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0))).map(|(n, _)| n);
            if let Some(name) = name.filter(|n| accept(*n)) {
                return Some(ConventionEvent { t, name });
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_time_the_rule_holds() {
        let seq: Vec<(u32, Option<u32>)> = (1..=60).map(|t| (t, if t <= 5 { None } else { Some(2) })).collect();
        // Interactions 6..=t all match; at t = 52 the window 3..=52 holds 3 misses: 47/50.
        // At t = 53 it holds 2 misses: 48/50.
        assert_eq!(first_convention(seq.clone(), 50, 0.95, |_| true), Some(ConventionEvent { t: 53, name: 2 }));
        assert_eq!(first_convention(seq, 50, 0.95, |n| n == 1), None);
    }
}
