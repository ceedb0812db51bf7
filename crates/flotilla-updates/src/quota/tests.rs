use proptest::prelude::*;

use super::*;

#[test]
fn counts_parse_as_written() {
    let cases = [
        ("1", Ok(Count::Fixed(1))),
        ("50", Ok(Count::Fixed(50))),
        ("0", Ok(Count::Fixed(0))),
        ("25%", Ok(Count::Percent(25))),
        ("100%", Ok(Count::Percent(100))),
        ("0%", Ok(Count::Percent(0))),
        ("101%", Err(())),
        ("01", Err(())),
        ("-1", Err(())),
        ("+1", Err(())),
        ("%", Err(())),
        ("", Err(())),
        ("1.5", Err(())),
        ("two", Err(())),
    ];
    for (text, want) in cases {
        assert_eq!(Count::parse(text).map_err(|_| ()), want, "{text}");
    }
}

#[test]
fn concurrency_rounds_down_with_a_minimum_of_one() {
    let cases = [
        (None, 7, 1, 1),
        (None, 7, 50, 50),
        (Some("25%"), 7, 1, 1),
        (Some("25%"), 8, 1, 2),
        (Some("50%"), 9, 1, 4),
        (Some("100%"), 9, 1, 9),
        (Some("1%"), 10, 1, 1),
        (Some("3"), 10, 1, 3),
    ];
    for (value, size, default, want) in cases {
        assert_eq!(
            concurrency(value, size, default),
            Ok(want),
            "{value:?} of {size}"
        );
    }
}

#[test]
fn failures_round_up_and_default_to_none() {
    let cases = [
        (None, 10, 0),
        (Some("0"), 10, 0),
        (Some("2"), 10, 2),
        (Some("0%"), 9, 0),
        (Some("10%"), 9, 1),
        (Some("10%"), 10, 1),
        (Some("25%"), 5, 2),
        (Some("50%"), 5, 3),
        (Some("100%"), 5, 5),
    ];
    for (value, size, want) in cases {
        assert_eq!(
            allowed_failures(value, size),
            Ok(want),
            "{value:?} of {size}"
        );
    }
    assert!(allowed_failures(Some("x"), 3).is_err());
}

proptest! {
    #[test]
    fn a_percentage_rounded_up_is_the_least_count_covering_it(p in 0u32..=100, size in 0u32..100_000) {
        let n = Count::Percent(p).of_rounding_up(size);
        prop_assert!(n <= size);
        prop_assert!(u64::from(n) * 100 >= u64::from(size) * u64::from(p));
        prop_assert!(n == 0 || (u64::from(n) - 1) * 100 < u64::from(size) * u64::from(p));
    }

    #[test]
    fn a_percentage_never_exceeds_the_segment(p in 0u32..=100, size in 0u32..100_000) {
        let n = Count::Percent(p).of(size);
        prop_assert!(n <= size);
        prop_assert!(u64::from(n) * 100 <= u64::from(size) * u64::from(p));
        prop_assert!((u64::from(n) + 1) * 100 > u64::from(size) * u64::from(p));
    }

    #[test]
    fn concurrency_is_at_least_one(p in 1u32..=100, size in 0u32..100_000) {
        let n = concurrency(Some(&format!("{p}%")), size, 1).unwrap();
        prop_assert!(n >= 1);
        prop_assert!(n <= size.max(1));
    }
}
