//! Line charts as server-rendered SVG: no JavaScript, no external assets.
//! Each chart is drawn twice, for a wide and a narrow screen (the
//! stylesheet shows one), so its labels stay legible on a phone. Axes carry
//! dates and amounts at round values; every point can be hovered (its
//! tooltip) or reached with the keyboard (its label shows on focus), and
//! says its date and amount to a screen reader.
//!
//! A chart plots one value per day: the last balance read that day. Years
//! of hourly syncs stay a few hundred points.

use crate::web::money::MoneyFormat;
use crate::web::page::escape_html as escape;
use chrono::{Datelike, NaiveDate, NaiveDateTime};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use tributary_domain::money::Decimal;

/// The least room between the middles of two date labels, in SVG units.
const MIN_LABEL_GAP: i64 = 72;

/// A drawing surface: its size in SVG units and the room kept around the
/// plot for the axes' labels.
#[derive(Debug, Clone, Copy)]
pub(super) struct Canvas {
    pub class: &'static str,
    pub width: i64,
    pub height: i64,
    pub left: i64,
    pub right: i64,
    pub top: i64,
    pub bottom: i64,
    /// How many date labels fit under the plot.
    pub date_labels: usize,
}

impl Canvas {
    pub const WIDE: Canvas = Canvas {
        class: "chart chart-wide",
        width: 720,
        height: 240,
        left: 84,
        right: 16,
        top: 16,
        bottom: 36,
        date_labels: 7,
    };
    /// Fewer units across, so that a phone's 360 CSS pixels show the
    /// labels near their natural size.
    pub const NARROW: Canvas = Canvas {
        class: "chart chart-narrow",
        width: 360,
        height: 220,
        left: 72,
        right: 12,
        top: 16,
        bottom: 36,
        date_labels: 3,
    };

    pub fn plot_width(&self) -> i64 {
        self.width - self.left - self.right
    }

    pub fn plot_bottom(&self) -> i64 {
        self.height - self.bottom
    }

    /// The opening tag, its accessible name and description, and the plot
    /// box as data attributes (what tests read the drawing back with).
    pub fn open(
        &self,
        svg: &mut String,
        id: &str,
        title: &str,
        desc: &str,
        low: Decimal,
        high: Decimal,
    ) {
        let _ = write!(
            svg,
            r#"<svg class="{class}" viewBox="0 0 {w} {h}" role="group" aria-labelledby="{id}-title" aria-describedby="{id}-desc" data-plot="{l} {t} {r} {b}" data-low="{low}" data-high="{high}"><title id="{id}-title">{title}</title><desc id="{id}-desc">{desc}</desc>"#,
            class = self.class,
            w = self.width,
            h = self.height,
            l = self.left,
            t = self.top,
            r = self.width - self.right,
            b = self.plot_bottom(),
        );
    }

    /// The amount axis: a grid line and a label at each tick.
    pub fn amount_axis(
        &self,
        svg: &mut String,
        ticks: &[Decimal],
        y: impl Fn(Decimal) -> Decimal,
        money: &MoneyFormat,
        currency: &str,
    ) {
        for tick in ticks {
            let at = y(*tick);
            let _ = write!(
                svg,
                r#"<line class="grid" x1="{l}" y1="{at}" x2="{r}" y2="{at}"/><text class="label" x="{lx}" y="{ty}" text-anchor="end">{label}</text>"#,
                l = self.left,
                r = self.width - self.right,
                lx = self.left - 6,
                ty = at + Decimal::from(4),
                label = escape(&money.whole(*tick, currency).text),
            );
        }
    }

    /// How a date label at `x` is anchored: from its start near the left
    /// edge, to its end near the right one, else around `x`.
    fn date_anchor(&self, x: i64) -> &'static str {
        if x - self.left < 24 {
            "start"
        } else if self.width - self.right - x < 24 {
            "end"
        } else {
            "middle"
        }
    }

    /// Where a date label at `x` is seen: the middle of its text (about
    /// 60 units wide).
    pub fn date_label_middle(&self, x: i64) -> i64 {
        match self.date_anchor(x) {
            "start" => x + 30,
            "end" => x - 30,
            _ => x,
        }
    }

    /// A date label under the plot at `x`.
    pub fn date_label(&self, svg: &mut String, x: i64, text: &str) {
        let anchor = self.date_anchor(x);
        let _ = write!(
            svg,
            r#"<text class="label" x="{x}" y="{y}" text-anchor="{anchor}">{text}</text>"#,
            y = self.plot_bottom() + 22,
            text = escape(text),
        );
    }

    /// A label shown while its point is hovered or focused, kept inside the
    /// drawing.
    pub fn tip(&self, svg: &mut String, x: i64, y: Decimal, text: &str) {
        let anchor = if x - self.left < 80 {
            "start"
        } else if self.width - self.right - x < 80 {
            "end"
        } else {
            "middle"
        };
        let above = y - Decimal::from(10);
        let ty = if above < Decimal::from(self.top + 4) {
            y + Decimal::from(20)
        } else {
            above
        };
        let _ = write!(
            svg,
            r#"<text class="tip" x="{x}" y="{ty}" text-anchor="{anchor}" aria-hidden="true">{text}</text>"#,
            text = escape(text),
        );
    }
}

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

/// Round axis values covering `low..=high`: about four steps of 1, 2 or 5
/// times a power of ten, zero included when the range crosses it.
pub(super) fn ticks(low: Decimal, high: Decimal) -> Vec<Decimal> {
    let span = (high - low).abs();
    let rough = if span.is_zero() {
        low.abs().max(Decimal::ONE) / Decimal::from(2)
    } else {
        span / Decimal::from(4)
    };
    let mut magnitude = Decimal::ONE;
    while magnitude * Decimal::TEN <= rough {
        magnitude *= Decimal::TEN;
    }
    while magnitude > rough && magnitude > Decimal::new(1, 2) {
        magnitude /= Decimal::TEN;
    }
    let step = [1, 2, 5, 10]
        .into_iter()
        .map(|m| magnitude * Decimal::from(m))
        .find(|step| *step >= rough)
        .unwrap_or(magnitude * Decimal::TEN);
    let first = (low / step).floor() * step;
    let mut ticks = vec![first];
    while ticks.last().is_some_and(|t| *t < high) && ticks.len() < 12 {
        let next = ticks[ticks.len() - 1] + step;
        ticks.push(next);
    }
    if ticks.len() < 2 {
        ticks.push(first + step);
    }
    ticks
}

/// How a point's date reads: `30 Nov 2025`.
pub(super) fn day_text(day: NaiveDate) -> String {
    day.format("%-d %b %Y").to_string()
}

/// Where a point is drawn.
#[cfg(test)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plotted {
    pub x: i64,
    /// SVG y, rounded to a tenth.
    pub y: Decimal,
}

/// The scale of one drawing: the days and the axis amounts its plot's
/// corners stand for.
#[derive(Debug, Clone, Copy)]
struct Scale {
    canvas: Canvas,
    first: NaiveDate,
    days: i64,
    low: Decimal,
    high: Decimal,
}

impl Scale {
    fn x(&self, day: NaiveDate) -> i64 {
        let width = self.canvas.plot_width();
        if self.days == 0 {
            self.canvas.left + width / 2
        } else {
            self.canvas.left + (day - self.first).num_days() * width / self.days
        }
    }

    fn y(&self, value: Decimal) -> Decimal {
        let top = Decimal::from(self.canvas.top);
        let height = Decimal::from(self.canvas.plot_bottom() - self.canvas.top);
        (top + (self.high - value) * height / (self.high - self.low)).round_dp(1)
    }
}

/// What a line chart's points are, which decides its date labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Points {
    /// Balances on days: the axis marks the start of each month.
    Days,
    /// One point per month (its last day, the newest dated by its last
    /// report): each point is labelled with its month.
    MonthEnds,
}

/// A line chart of one currency's values over days.
pub struct LineChart<'a> {
    /// Makes the chart's title and description referable from the page.
    pub id: &'a str,
    pub title: &'a str,
    pub currency: &'a str,
    pub points: &'a [DayBalance],
    pub kind: Points,
    pub money: &'a MoneyFormat,
}

impl LineChart<'_> {
    /// The chart's SVG markup (both drawings), or `None` when there is no
    /// history to draw: fewer than two days (one day is the balance the
    /// page already shows).
    pub fn render(&self) -> Option<String> {
        if self.points.len() < 2 {
            return None;
        }
        let mut svg = String::new();
        for canvas in [Canvas::WIDE, Canvas::NARROW] {
            self.draw(&mut svg, canvas)?;
        }
        Some(svg)
    }

    /// Where each point is drawn on `canvas`, in order.
    #[cfg(test)]
    pub fn plot(&self, canvas: Canvas) -> Vec<Plotted> {
        self.scale(canvas)
            .map(|scale| {
                self.points
                    .iter()
                    .map(|p| Plotted {
                        x: scale.x(p.day),
                        y: scale.y(p.value),
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    fn scale(&self, canvas: Canvas) -> Option<Scale> {
        let first = self.points.first()?.day;
        let last = self.points.last()?.day;
        let low = self.points.iter().map(|p| p.value).min()?;
        let high = self.points.iter().map(|p| p.value).max()?;
        let ticks = ticks(low, high);
        Some(Scale {
            canvas,
            first,
            days: (last - first).num_days(),
            low: *ticks.first()?,
            high: *ticks.last()?,
        })
    }

    fn draw(&self, svg: &mut String, canvas: Canvas) -> Option<()> {
        let scale = self.scale(canvas)?;
        let first = self.points.first()?;
        let last = self.points.last()?;
        let low = self.points.iter().map(|p| p.value).min()?;
        let high = self.points.iter().map(|p| p.value).max()?;
        let id = format!("{}-{}", self.id, if canvas.width > 400 { "w" } else { "n" });
        let shown = |value| self.money.amount(value, self.currency).text;
        canvas.open(
            svg,
            &escape(&id),
            &escape(self.title),
            &escape(&format!(
                "{count} points from {from} to {to}: lowest {low}, highest {high}, last {latest}.",
                count = self.points.len(),
                from = day_text(first.day),
                to = day_text(last.day),
                low = shown(low),
                high = shown(high),
                latest = shown(last.value),
            )),
            scale.low,
            scale.high,
        );
        canvas.amount_axis(
            svg,
            &ticks(low, high),
            |v| scale.y(v),
            self.money,
            self.currency,
        );
        let labels = match self.kind {
            Points::Days => month_labels(first.day, last.day, canvas.date_labels),
            Points::MonthEnds => {
                let step = self.points.len().div_ceil(canvas.date_labels.max(1));
                // Thinned from the newest, so the current month is named.
                let mut labels: Vec<(NaiveDate, String)> = self
                    .points
                    .iter()
                    .rev()
                    .step_by(step)
                    .map(|p| (p.day, p.day.format("%b %Y").to_string()))
                    .collect();
                labels.reverse();
                labels
            }
        };
        // Newest first: a label too close to the one after it is left out.
        let mut kept: Vec<(i64, String)> = Vec::new();
        for (day, text) in labels.into_iter().rev() {
            let x = scale.x(day);
            let seen = |x| canvas.date_label_middle(x);
            if kept
                .last()
                .is_none_or(|(next, _)| seen(*next) - seen(x) >= MIN_LABEL_GAP)
            {
                kept.push((x, text));
            }
        }
        for (x, text) in kept.into_iter().rev() {
            canvas.date_label(svg, x, &text);
        }
        let line: Vec<String> = self
            .points
            .iter()
            .map(|p| format!("{},{}", scale.x(p.day), scale.y(p.value)))
            .collect();
        let _ = write!(
            svg,
            r#"<polyline class="line" fill="none" points="{}"/>"#,
            line.join(" ")
        );
        for point in self.points {
            let (x, y) = (scale.x(point.day), scale.y(point.value));
            let label = format!("{}: {}", day_text(point.day), shown(point.value));
            let _ = write!(
                svg,
                r#"<g class="point" tabindex="0" role="img" aria-label="{label}"><title>{label}</title><circle cx="{x}" cy="{y}" r="4" data-day="{day}" data-amount="{amount}"/>"#,
                label = escape(&label),
                day = point.day,
                amount = point.value,
            );
            canvas.tip(svg, x, y, &label);
            svg.push_str("</g>");
        }
        svg.push_str("</svg>");
        Some(())
    }
}

/// Labels for the first day of each month between `first` and `last`, at
/// most `room` of them evenly thinned; a short span labels its two ends.
pub(super) fn month_labels(
    first: NaiveDate,
    last: NaiveDate,
    room: usize,
) -> Vec<(NaiveDate, String)> {
    let mut starts = Vec::new();
    let mut month = NaiveDate::from_ymd_opt(first.year(), first.month(), 1);
    while let Some(start) = month.filter(|m| *m <= last) {
        if start >= first {
            starts.push(start);
        }
        month = start.checked_add_months(chrono::Months::new(1));
    }
    if starts.len() < 2 {
        return vec![(first, day_text(first)), (last, day_text(last))];
    }
    let step = starts.len().div_ceil(room.max(1));
    starts
        .into_iter()
        .step_by(step)
        .map(|day| (day, day.format("%b %Y").to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::web::money::NumberStyle;
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
    fn ticks_are_round_and_cover_the_range() {
        let dec = |t: &str| parse_decimal(t).unwrap();
        let t = ticks(dec("103.20"), dec("987.65"));
        assert_eq!(t.first(), Some(&dec("0")));
        assert_eq!(t.last(), Some(&dec("1000")));
        assert!(t.len() <= 7, "{t:?}");
        let t = ticks(dec("-120"), dec("900.25"));
        assert!(t.contains(&Decimal::ZERO) && t[0] <= dec("-120"), "{t:?}");
        let flat = ticks(dec("7"), dec("7"));
        assert!(flat[0] <= dec("7") && *flat.last().unwrap() >= dec("7") && flat.len() >= 2);
    }

    #[test]
    fn time_is_proportional_and_amounts_read_back() {
        let points = [
            point("2026-11-01", "100"),
            point("2026-11-03", "300"),
            point("2026-11-05", "200"),
        ];
        let money = MoneyFormat::new(NumberStyle::ENGLISH, ["EUR"]);
        let chart = LineChart {
            id: "c",
            title: "Giro <EUR>",
            currency: "EUR",
            points: &points,
            kind: Points::Days,
            money: &money,
        };
        let canvas = Canvas::WIDE;
        let plotted = chart.plot(canvas);
        assert_eq!(plotted[0].x, canvas.left);
        assert_eq!(plotted[2].x, canvas.width - canvas.right);
        assert_eq!(plotted[1].x, canvas.left + canvas.plot_width() / 2);
        assert!(plotted[1].y < plotted[2].y && plotted[2].y < plotted[0].y);
        let svg = chart.render().unwrap();
        assert!(svg.contains("3 Nov 2026: €300.00"), "{svg}");
        assert!(svg.contains("chart-wide") && svg.contains("chart-narrow"));
        assert!(
            svg.contains("Giro &#60;EUR&#62;") && !svg.contains("<EUR>"),
            "escaped: {svg}"
        );
        let one = LineChart {
            points: &points[..1],
            ..chart
        };
        assert!(one.render().is_none());
    }

    #[test]
    fn month_labels_never_crowd_each_other() {
        // Thirteen month-ends and today, a week after the last one.
        let mut points: Vec<DayBalance> = (0..13)
            .map(|i| {
                let end = day("2025-12-01")
                    .checked_add_months(chrono::Months::new(i))
                    .unwrap()
                    .pred_opt()
                    .unwrap();
                DayBalance {
                    day: end,
                    value: Decimal::from(i),
                }
            })
            .collect();
        points.push(point("2026-11-21", "5"));
        let money = MoneyFormat::new(NumberStyle::ENGLISH, ["USD"]);
        let chart = LineChart {
            id: "w",
            title: "Net worth",
            currency: "USD",
            points: &points,
            kind: Points::MonthEnds,
            money: &money,
        };
        let svg = chart.render().unwrap();
        for canvas in [Canvas::WIDE, Canvas::NARROW] {
            let drawing = svg
                .split("<svg ")
                .find(|d| d.contains(canvas.class))
                .unwrap();
            let y = format!(r#"y="{}""#, canvas.plot_bottom() + 22);
            let middles: Vec<i64> = drawing
                .split(r#"<text class="label" x=""#)
                .skip(1)
                .filter(|t| t.contains(&y))
                .map(|t| canvas.date_label_middle(t.split('"').next().unwrap().parse().unwrap()))
                .collect();
            assert!(middles.len() >= 2, "{middles:?}");
            assert!(
                middles.windows(2).all(|w| w[1] - w[0] >= MIN_LABEL_GAP),
                "{}: {middles:?}",
                canvas.class
            );
            assert!(drawing.contains(">Nov 2026<"), "the newest month is named");
        }
    }

    #[test]
    fn a_year_is_labelled_by_month_within_the_room() {
        let labels = month_labels(day("2025-11-15"), day("2026-11-28"), 7);
        assert!(labels.len() <= 7 && labels.len() >= 4, "{labels:?}");
        assert_eq!(labels[0].1, "Dec 2025");
        let short = month_labels(day("2026-10-01"), day("2026-10-20"), 7);
        assert_eq!(short.len(), 2);
    }
}
