use super::*;
use chrono::Weekday;

fn date(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap()
}

/// A business day: a Saturday or Sunday moves to the Monday after.
fn business(d: NaiveDate) -> NaiveDate {
    match d.weekday() {
        Weekday::Sat => d + Duration::days(2),
        Weekday::Sun => d + Duration::days(1),
        _ => d,
    }
}

fn history(merchant: &str, dates: &[NaiveDate], cents: &[i64]) -> Vec<Posted> {
    dates
        .iter()
        .enumerate()
        .map(|(i, d)| Posted {
            id: i as i64 + 1,
            account_id: 1,
            date: *d,
            amount: Decimal::new(cents[i % cents.len()], 2),
            currency: "EUR".into(),
            merchant: Some(merchant.into()),
            subcategory: crate::taxonomy::Subcategory::from_id("housing.rent"),
        })
        .collect()
}

fn monthly_on(day: u32, months: u32, skip: Option<u32>) -> Vec<NaiveDate> {
    (0..months)
        .filter(|m| Some(*m) != skip)
        .map(|m| {
            let first = date(2025, 1, 1)
                .checked_add_months(chrono::Months::new(m))
                .unwrap();
            let last = first
                .checked_add_months(chrono::Months::new(1))
                .unwrap()
                .pred_opt()
                .unwrap();
            business(date(first.year(), first.month(), day.min(last.day())))
        })
        .collect()
}

fn only(streams: &[Stream]) -> &Stream {
    assert_eq!(streams.len(), 1, "{streams:#?}");
    &streams[0]
}

#[test]
fn monthly_rent_with_weekend_shifts_and_a_missed_month() {
    let dates = monthly_on(1, 12, Some(6));
    let today = date(2025, 12, 20);
    let s = only(&detect(&history("Landlord", &dates, &[-120000]), today)).clone();
    assert_eq!(s.frequency, Frequency::Monthly);
    assert!(!s.inflow);
    assert_eq!(s.transaction_ids.len(), 11);
    assert_eq!(s.first_date, date(2025, 1, 1));
    assert_eq!(
        s.next_date,
        s.last_date
            .checked_add_months(chrono::Months::new(1))
            .unwrap()
    );
    assert_eq!(s.status, Status::Active);
    assert_eq!(s.average_amount, Decimal::new(-120000, 2).normalize());
    assert_eq!(s.category, Some("Housing"));
}

#[test]
fn a_utility_bill_that_drifts_is_one_monthly_stream() {
    let dates = monthly_on(18, 10, None);
    let s = only(&detect(
        &history(
            "City Power",
            &dates,
            &[-7012, -15631, -9209, -18840, -11219],
        ),
        date(2025, 10, 20),
    ))
    .clone();
    assert_eq!(s.frequency, Frequency::Monthly);
}

#[test]
fn pay_on_the_15th_and_the_last_day_is_semi_monthly() {
    let mut dates = Vec::new();
    for d in monthly_on(15, 8, None)
        .into_iter()
        .zip(monthly_on(31, 8, None))
    {
        dates.extend([d.0, d.1]);
    }
    let s = only(&detect(
        &history("Acme", &dates, &[261779]),
        date(2025, 9, 1),
    ))
    .clone();
    assert_eq!(s.frequency, Frequency::SemiMonthly);
    assert!(s.inflow);
}

#[test]
fn every_other_friday_is_biweekly_and_every_monday_weekly() {
    let fridays: Vec<NaiveDate> = (0..12)
        .map(|i| date(2025, 1, 3) + Duration::days(14 * i))
        .collect();
    let s = only(&detect(
        &history("Employer", &fridays, &[150000]),
        date(2025, 6, 10),
    ))
    .clone();
    assert_eq!(s.frequency, Frequency::Biweekly);
    let mondays: Vec<NaiveDate> = (0..10)
        .map(|i| date(2025, 1, 6) + Duration::days(7 * i))
        .collect();
    let s = only(&detect(
        &history("Gym", &mondays, &[-1500]),
        date(2025, 3, 15),
    ))
    .clone();
    assert_eq!(s.frequency, Frequency::Weekly);
}

#[test]
fn quarterly_and_annual_streams() {
    let quarters = [
        date(2025, 1, 15),
        date(2025, 4, 14),
        date(2025, 7, 15),
        date(2025, 10, 16),
    ];
    let s = only(&detect(
        &history("Water board", &quarters, &[-9000, -9800]),
        date(2025, 11, 1),
    ))
    .clone();
    assert_eq!(s.frequency, Frequency::Quarterly);
    let years = [date(2023, 3, 2), date(2024, 3, 1), date(2025, 3, 3)];
    let s = only(&detect(
        &history("Insurer", &years, &[-48000]),
        date(2025, 4, 1),
    ))
    .clone();
    assert_eq!(s.frequency, Frequency::Annually);
}

#[test]
fn a_stream_that_stopped_is_late_then_ended() {
    let dates = monthly_on(7, 6, None);
    let last = *dates.last().unwrap();
    let history = history("Netflix", &dates, &[-1549]);
    let status = |days| detect(&history, last + Duration::days(days))[0].status;
    assert_eq!(status(20), Status::Active);
    assert_eq!(status(40), Status::Late);
    assert_eq!(status(80), Status::Ended);
}

#[test]
fn irregular_purchases_are_no_stream() {
    // A café on no schedule: gaps of 2 to 11 days.
    let mut day = date(2025, 1, 1);
    let mut dates = Vec::new();
    for gap in [3, 7, 2, 11, 5, 4, 9, 3, 6, 8, 2, 10, 5, 7, 3] {
        day += Duration::days(gap);
        dates.push(day);
    }
    assert!(
        detect(
            &history("Café", &dates, &[-450, -520, -380]),
            date(2025, 4, 1)
        )
        .is_empty()
    );
    // Two occurrences are no monthly stream, and amounts far apart are not
    // one stream.
    assert!(
        detect(
            &history("Shop", &monthly_on(3, 2, None), &[-1000]),
            date(2025, 3, 1)
        )
        .is_empty()
    );
    assert!(
        detect(
            &history("Shop", &monthly_on(3, 6, None), &[-1000, -90000]),
            date(2025, 7, 1)
        )
        .is_empty()
    );
}

#[test]
fn the_id_is_stable_and_tells_streams_apart() {
    let dates = monthly_on(1, 6, None);
    let a = detect(&history("Landlord", &dates, &[-100000]), date(2025, 7, 1));
    let b = detect(
        &history("LANDLORD", &dates[1..], &[-100000]),
        date(2025, 7, 1),
    );
    assert_eq!(a[0].id, b[0].id);
    let c = detect(&history("Other", &dates, &[-100000]), date(2025, 7, 1));
    assert_ne!(a[0].id, c[0].id);
}
