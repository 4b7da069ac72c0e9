//! Balance charts as server-rendered SVG: no JavaScript, no external
//! assets, readable axes, and each point titled with its date and amount so
//! screen readers and tooltips give the exact figure.
//!
//! A chart plots one value per day: the last balance read that day. Years
//! of hourly syncs stay a few hundred points.

use chrono::{NaiveDate, NaiveDateTime};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use tributary_domain::money::Decimal;

/// The drawing's size in SVG units; the page scales it to its width.
pub const WIDTH: i64 = 640;
pub const HEIGHT: i64 = 220;
/// Room for the amount labels on the left and the dates below.
pub const LEFT: i64 = 96;
pub const RIGHT: i64 = 12;
pub const TOP: i64 = 12;
pub const BOTTOM: i64 = 36;

/// One plotted day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DayBalance {
    pub day: NaiveDate,
    pub value: Decimal,
}

/// The last balance of each day, oldest first, from snapshots in any order.
pub fn daily(snapshots: impl IntoIterator<Item = (NaiveDateTime, Decimal)>) -> Vec<DayBalance> {
    let mut last: BTreeMap<NaiveDate, (NaiveDateTime, Decimal)> = BTreeMap::new();
    for (at, value) in snapshots {
        let day = at.date();
        if last.get(&day).is_none_or(|(seen, _)| *seen <= at) {
            last.insert(day, (at, value));
        }
    }
    last.into_iter()
        .map(|(day, (_, value))| DayBalance { day, value })
        .collect()
}

/// The total of several accounts' daily balances: on each day any of them
/// has a balance, the sum of each account's latest balance up to that day
/// (an account counts from its first balance on).
pub fn total(accounts: &[Vec<DayBalance>]) -> Vec<DayBalance> {
    let days: std::collections::BTreeSet<NaiveDate> = accounts
        .iter()
        .flat_map(|series| series.iter().map(|p| p.day))
        .collect();
    let mut cursors = vec![0usize; accounts.len()];
    let mut current: Vec<Option<Decimal>> = vec![None; accounts.len()];
    days.into_iter()
        .map(|day| {
            for (i, series) in accounts.iter().enumerate() {
                while let Some(point) = series.get(cursors[i]).filter(|p| p.day <= day) {
                    current[i] = Some(point.value);
                    cursors[i] += 1;
                }
            }
            DayBalance {
                day,
                value: current.iter().flatten().copied().sum(),
            }
        })
        .collect()
}

/// Where a point is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plotted {
    pub x: i64,
    /// SVG y, rounded to a tenth.
    pub y: Decimal,
}

/// The scale of a chart: the days and amounts its corners stand for.
#[derive(Debug, Clone, Copy)]
struct Scale {
    first: NaiveDate,
    days: i64,
    low: Decimal,
    high: Decimal,
}

impl Scale {
    fn of(points: &[DayBalance]) -> Option<Self> {
        let first = points.first()?.day;
        let last = points.last()?.day;
        let low = points.iter().map(|p| p.value).min()?;
        let high = points.iter().map(|p| p.value).max()?;
        Some(Self {
            first,
            days: (last - first).num_days(),
            low,
            high,
        })
    }

    fn plot(&self, point: &DayBalance) -> Plotted {
        let width = WIDTH - LEFT - RIGHT;
        let height = Decimal::from(HEIGHT - TOP - BOTTOM);
        let x = if self.days == 0 {
            LEFT + width / 2
        } else {
            LEFT + (point.day - self.first).num_days() * width / self.days
        };
        let y = if self.high == self.low {
            Decimal::from(TOP) + height / Decimal::TWO
        } else {
            Decimal::from(TOP) + (self.high - point.value) * height / (self.high - self.low)
        };
        Plotted {
            x,
            y: y.round_dp(1),
        }
    }
}

/// Where each point of `points` is drawn, in order.
pub fn plot(points: &[DayBalance]) -> Vec<Plotted> {
    Scale::of(points)
        .map(|scale| points.iter().map(|p| scale.plot(p)).collect())
        .unwrap_or_default()
}

fn amount(value: Decimal, currency: &str) -> String {
    format!("{} {currency}", value.round_dp(2))
}

fn escape(text: &str) -> String {
    askama::filters::escape(text, askama::filters::Html)
        .map(|escaped| escaped.to_string())
        .unwrap_or_default()
}

/// The chart's SVG markup, or `None` when there is no history to draw:
/// fewer than two days (one day is the balance the page already shows).
/// `id` makes its title and description referable from the page.
pub fn render(id: &str, title: &str, currency: &str, points: &[DayBalance]) -> Option<String> {
    if points.len() < 2 {
        return None;
    }
    let scale = Scale::of(points)?;
    let last = points.last()?;
    let plotted = plot(points);
    let (title, currency, id) = (escape(title), escape(currency), escape(id));
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-labelledby="{id}-title {id}-desc" data-low="{low}" data-high="{high}" data-first="{first}" data-last="{last_day}">"#,
        low = scale.low,
        high = scale.high,
        first = scale.first,
        last_day = last.day,
    );
    let _ = write!(
        svg,
        r#"<title id="{id}-title">{title}</title><desc id="{id}-desc">{count} days from {first} to {last_day}; lowest {low}, highest {high}, last {latest}.</desc>"#,
        count = points.len(),
        first = scale.first,
        last_day = last.day,
        low = amount(scale.low, &currency),
        high = amount(scale.high, &currency),
        latest = amount(last.value, &currency),
    );
    // Axes: the highest amount at the top, the lowest at the bottom, the
    // first and last day under the ends.
    let bottom = HEIGHT - BOTTOM;
    let right = WIDTH - RIGHT;
    let _ = write!(
        svg,
        r#"<line class="axis" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{bottom}"/><line class="axis" x1="{LEFT}" y1="{bottom}" x2="{right}" y2="{bottom}"/>"#
    );
    let label_x = LEFT - 6;
    let _ = write!(
        svg,
        r#"<text class="label" x="{label_x}" y="{top}" text-anchor="end">{high}</text><text class="label" x="{label_x}" y="{bottom}" text-anchor="end">{low}</text>"#,
        top = TOP + 4,
        high = amount(scale.high, &currency),
        low = amount(scale.low, &currency),
    );
    let date_y = bottom + 20;
    let _ = write!(
        svg,
        r#"<text class="label" x="{LEFT}" y="{date_y}" text-anchor="start">{first}</text>"#,
        first = scale.first.format("%Y-%m-%d"),
    );
    if last.day != scale.first {
        let _ = write!(
            svg,
            r#"<text class="label" x="{right}" y="{date_y}" text-anchor="end">{last_day}</text>"#,
            last_day = last.day.format("%Y-%m-%d"),
        );
    }
    let line: Vec<String> = plotted.iter().map(|p| format!("{},{}", p.x, p.y)).collect();
    let _ = write!(
        svg,
        r#"<polyline class="line" fill="none" points="{}"/>"#,
        line.join(" ")
    );
    svg.push_str(r#"<g class="points">"#);
    for (point, at) in points.iter().zip(&plotted) {
        let _ = write!(
            svg,
            r#"<circle cx="{x}" cy="{y}" r="3"><title>{day}: {value}</title></circle>"#,
            x = at.x,
            y = at.y,
            day = point.day.format("%Y-%m-%d"),
            value = amount(point.value, &currency),
        );
    }
    svg.push_str("</g></svg>");
    Some(svg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tributary_domain::money::parse_decimal;

    fn day(text: &str) -> NaiveDate {
        NaiveDate::parse_from_str(text, "%Y-%m-%d").unwrap()
    }

    fn at(text: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M").unwrap()
    }

    fn point(d: &str, v: &str) -> DayBalance {
        DayBalance {
            day: day(d),
            value: parse_decimal(v).unwrap(),
        }
    }

    #[test]
    fn a_day_is_plotted_at_its_last_balance() {
        let series = daily([
            (at("2026-11-02 18:00"), parse_decimal("20").unwrap()),
            (at("2026-11-01 09:00"), parse_decimal("5").unwrap()),
            (at("2026-11-02 08:00"), parse_decimal("10").unwrap()),
        ]);
        assert_eq!(
            series,
            [point("2026-11-01", "5"), point("2026-11-02", "20")]
        );
    }

    #[test]
    fn the_total_carries_each_account_forward() {
        let a = vec![point("2026-11-01", "100"), point("2026-11-03", "50")];
        let b = vec![point("2026-11-02", "-30")];
        assert_eq!(
            total(&[a, b]),
            [
                point("2026-11-01", "100"),
                point("2026-11-02", "70"),
                point("2026-11-03", "20"),
            ]
        );
    }

    #[test]
    fn corners_stand_for_the_extremes_and_time_is_proportional() {
        let points = [
            point("2026-11-01", "100"),
            point("2026-11-03", "300"),
            point("2026-11-05", "200"),
        ];
        let plotted = plot(&points);
        assert_eq!(plotted[0].x, LEFT);
        assert_eq!(plotted[2].x, WIDTH - RIGHT);
        assert_eq!(plotted[1].x, LEFT + (WIDTH - LEFT - RIGHT) / 2);
        assert_eq!(plotted[1].y, Decimal::from(TOP), "highest at the top");
        assert_eq!(
            plotted[0].y,
            Decimal::from(HEIGHT - BOTTOM),
            "lowest at the bottom"
        );
        assert_eq!(
            plotted[2].y,
            Decimal::from(TOP + (HEIGHT - TOP - BOTTOM) / 2)
        );
        let svg = render("c", "Giro <EUR>", "EUR", &points).unwrap();
        assert!(svg.contains("<title>2026-11-03: 300 EUR</title>"));
        assert!(
            svg.contains("Giro &#60;EUR&#62;") && !svg.contains("<EUR>"),
            "escaped: {svg}"
        );
        assert!(render("c", "empty", "EUR", &[]).is_none());
        assert!(render("c", "one day", "EUR", &points[..1]).is_none());
        let flat = plot(&[point("2026-11-01", "7")]);
        assert_eq!(flat[0].x, LEFT + (WIDTH - LEFT - RIGHT) / 2);
    }
}
