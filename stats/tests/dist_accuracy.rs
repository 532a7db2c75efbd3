//! The pieces of `stats::dist` that are composed from statrs's special functions rather than
//! called from statrs's distributions, at arguments where statrs's own function misses the
//! reference tests' tolerance (the figure beside each case), and the edge cases where statrs
//! would panic. Reference values from mpmath 1.3 at 60 digits (the call beside each), rounded
//! to the nearest f64.

use agora_stats::dist;

/// The criterion of `reference.rs`: within `abs` or `rel` of the reference, whichever is wider.
fn close(got: f64, want: f64, rel: f64, abs: f64, call: &str) {
    let ok = (got - want).abs() <= abs.max(rel * want.abs());
    assert!(ok, "got {got}, reference {want} from `{call}`");
}

#[test]
fn erfc_and_norm_cdf_hold_where_statrs_erfc_is_off_by_1e_10() {
    // statrs::function::erf::erfc: 1.03e-10 relative at 0.5, 9.3e-11 at 0.6.
    close(dist::erfc(0.5), 0.4795001221869535, 1e-10, 1e-16, "mpmath.erfc(0.5)");
    close(dist::erfc(0.6), 0.3961439091520741, 1e-10, 1e-16, "mpmath.erfc(0.6)");
    close(dist::erfc(-0.5), 2.0 - 0.4795001221869535, 1e-10, 1e-16, "2 - mpmath.erfc(0.5)");
    // statrs's Normal::cdf: 1.03e-10 relative.
    close(dist::norm_cdf(-0.71), 0.23885206808998674, 1e-10, 1e-16, "mpmath.ncdf(-0.71)");
}

#[test]
fn t_cdf_holds_near_zero_where_statrs_rounds_to_one_half() {
    // statrs's StudentsT::cdf: 4.2e-9, 3.2e-10, 6.4e-10 and 5.9e-9 relative.
    let call = "1/2 + sign(t) * mpmath.betainc(1/2, df/2, 0, t**2/(df + t**2), regularized=True)/2";
    close(dist::t_cdf(1e-7, 10.0), 0.5000000389108384, 1e-10, 1e-16, call);
    close(dist::t_cdf(-1e-6, 30.0), 0.4999996043678151, 1e-10, 1e-16, call);
    close(dist::t_cdf(1e-9, 1.0), 0.5000000003183099, 1e-10, 1e-16, call);
    close(dist::t_cdf(-1.5e-3, 1e6), 0.4994015869534063, 1e-10, 1e-16, call);
    close(dist::t_sf(1e-7, 10.0), 1.0 - 0.5000000389108384, 1e-10, 1e-16, call);
    assert_eq!(dist::t_cdf(0.0, 7.0), 0.5);
}

#[test]
fn t_ppf_holds_where_statrs_inverse_cdf_is_off() {
    // statrs's StudentsT::inverse_cdf: 1.8e-7, 1.1e-8, 2.8e-9 and 0.79 relative; the last two
    // cases are where the hand-written bisection it replaces was off (2.8e-8 and 5.6e-5).
    let call = "mpmath.findroot(lambda t: mpmath t CDF(t, df) - p, start)";
    close(dist::t_ppf(0.95, 20000.0), 1.6449298189594812, 1e-10, 1e-12, call);
    close(dist::t_ppf(0.1, 5000.0), -1.2817209053357184, 1e-10, 1e-12, call);
    close(dist::t_ppf(0.8, 999.0), 0.8419811822589467, 1e-10, 1e-12, call);
    close(dist::t_ppf(1e-9, 1.0), -318309886.1837906, 1e-10, 1e-12, call);
    close(dist::t_ppf(0.999999999, 2.0), 22360.68005765849, 1e-10, 1e-12, call);
    close(dist::t_ppf(0.999999999999, 1.0), 318316927901.77966, 1e-10, 1e-12, call);
    assert_eq!(dist::t_ppf(0.5, 3.0), 0.0);
}

#[test]
fn edge_cases_give_limits_or_nan_and_never_panic() {
    assert_eq!(dist::erfc(f64::INFINITY), 0.0);
    assert_eq!(dist::erfc(f64::NEG_INFINITY), 2.0);
    assert_eq!(dist::erfc(1e-200), 1.0);
    assert!(dist::erfc(f64::NAN).is_nan());
    assert_eq!(dist::norm_ppf(0.0), f64::NEG_INFINITY);
    assert_eq!(dist::norm_ppf(1.0), f64::INFINITY);
    assert!(dist::norm_ppf(f64::NAN).is_nan());
    assert_eq!(dist::t_cdf(f64::INFINITY, 4.0), 1.0);
    assert_eq!(dist::t_cdf(f64::NEG_INFINITY, 4.0), 0.0);
    assert!(dist::t_cdf(f64::NAN, 4.0).is_nan());
    assert!(dist::t_cdf(1.0, 0.0).is_nan());
    assert!(dist::t_sf(1.0, -2.0).is_nan());
    assert_eq!(dist::t_ppf(0.0, 4.0), f64::NEG_INFINITY);
    assert_eq!(dist::t_ppf(1.0, 4.0), f64::INFINITY);
    assert!(dist::t_ppf(f64::NAN, 4.0).is_nan());
    assert!(dist::t_ppf(0.3, f64::NAN).is_nan());
    assert_eq!(dist::beta_inc(2.0, 3.0, -0.1), 0.0);
    assert_eq!(dist::beta_inc(2.0, 3.0, 1.5), 1.0);
    assert!(dist::beta_inc(0.0, 3.0, 0.5).is_nan());
    // Infinite degrees of freedom: the normal distribution, through `dist::erfc`.
    close(dist::t_cdf(-0.71, f64::INFINITY), 0.23885206808998674, 1e-10, 1e-16, "mpmath.ncdf(-0.71)");
}
