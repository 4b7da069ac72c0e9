//! Spending per month as stacked bars, one colour per category, as
//! server-rendered SVG drawn for a wide and a narrow screen like the line
//! charts (`chart.rs`). Each month is one keyboard stop that reads its
//! total and its categories; each segment's tooltip gives its category and
//! amount; the legend below names the colours.

use super::chart::{Canvas, ticks};
use crate::web::money::MoneyFormat;
use crate::web::page::escape_html as escape;
use chrono::NaiveDate;
use std::fmt::Write as _;
use tributary_domain::money::Decimal;

/// How many categories get a colour of their own; the rest are "Other".
pub const COLOURED: usize = 6;

/// One month's bar: its first day and its amount per category, in the
/// legend's order.
#[derive(Debug, Clone)]
pub struct MonthBar {
    pub month: NaiveDate,
    pub amounts: Vec<Decimal>,
}

impl MonthBar {
    pub fn total(&self) -> Decimal {
        self.amounts.iter().copied().sum()
    }
}

pub struct StackedBars<'a> {
    pub id: &'a str,
    pub title: &'a str,
    pub currency: &'a str,
    /// The categories, in the order of each bar's amounts (at most
    /// `COLOURED` plus "Other").
    pub legend: &'a [String],
    pub months: &'a [MonthBar],
    pub money: &'a MoneyFormat,
}

impl StackedBars<'_> {
    /// Both drawings and the legend, or `None` when nothing was spent.
    pub fn render(&self) -> Option<String> {
        let high = self.months.iter().map(MonthBar::total).max()?;
        if high <= Decimal::ZERO {
            return None;
        }
        let mut html = String::new();
        for canvas in [Canvas::WIDE, Canvas::NARROW] {
            self.draw(&mut html, canvas, high);
        }
        html.push_str(r#"<ul class="legend">"#);
        for (i, name) in self.legend.iter().enumerate() {
            let _ = write!(
                html,
                r#"<li><span class="swatch s{i}" aria-hidden="true"></span>{}</li>"#,
                escape(name)
            );
        }
        html.push_str("</ul>");
        Some(html)
    }

    fn draw(&self, svg: &mut String, canvas: Canvas, high: Decimal) {
        let ticks = ticks(Decimal::ZERO, high);
        let top_value = ticks.last().copied().unwrap_or(high);
        let plot_height = Decimal::from(canvas.plot_bottom() - canvas.top);
        let height_of = |v: Decimal| (v * plot_height / top_value).round_dp(1);
        let y = |v: Decimal| Decimal::from(canvas.plot_bottom()) - height_of(v);
        let slot = canvas.plot_width() / (self.months.len().max(1) as i64);
        let bar = (slot * 2 / 3).max(4);
        let id = format!("{}-{}", self.id, if canvas.width > 400 { "w" } else { "n" });
        let shown = |v: Decimal| self.money.amount(v, self.currency).text;
        let busiest = self
            .months
            .iter()
            .max_by_key(|m| m.total())
            .map(|m| format!("{} ({})", m.month.format("%B %Y"), shown(m.total())))
            .unwrap_or_default();
        canvas.open(
            svg,
            &escape(&id),
            &escape(self.title),
            &escape(&format!(
                "{} months; the most was spent in {busiest}.",
                self.months.len()
            )),
            Decimal::ZERO,
            top_value,
        );
        canvas.amount_axis(svg, &ticks, y, self.money, self.currency);
        let label_every = self
            .months
            .len()
            .div_ceil(canvas.date_labels.max(1) * 2)
            .max(1);
        for (i, month) in self.months.iter().enumerate() {
            let x = canvas.left + slot * i as i64 + (slot - bar) / 2;
            let parts: Vec<String> = self
                .legend
                .iter()
                .zip(&month.amounts)
                .filter(|(_, amount)| !amount.is_zero())
                .map(|(name, amount)| format!("{name} {}", shown(*amount)))
                .collect();
            let label = format!(
                "{}: {} spent{}{}",
                month.month.format("%B %Y"),
                shown(month.total()),
                if parts.is_empty() { "" } else { ": " },
                parts.join(", ")
            );
            let _ = write!(
                svg,
                r#"<g class="bar" tabindex="0" role="img" aria-label="{label}" data-month="{m}" data-total="{total}">"#,
                label = escape(&label),
                m = month.month.format("%Y-%m"),
                total = month.total(),
            );
            let mut base = Decimal::ZERO;
            for (k, amount) in month.amounts.iter().enumerate() {
                if *amount <= Decimal::ZERO {
                    continue;
                }
                let (from, to) = (y(base), y(base + *amount));
                let _ = write!(
                    svg,
                    r#"<rect class="s{k}" x="{x}" y="{to}" width="{bar}" height="{h}"><title>{name}, {month}: {value}</title></rect>"#,
                    h = from - to,
                    name = escape(self.legend.get(k).map_or("", String::as_str)),
                    month = month.month.format("%b %Y"),
                    value = escape(&shown(*amount)),
                );
                base += *amount;
            }
            canvas.tip(
                svg,
                x + bar / 2,
                y(base),
                &format!("{}: {}", month.month.format("%b %Y"), shown(month.total())),
            );
            svg.push_str("</g>");
            if i % label_every == 0 {
                canvas.date_label(svg, x + bar / 2, &month.month.format("%b").to_string());
            }
        }
        svg.push_str("</svg>");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::web::money::NumberStyle;

    #[test]
    fn each_month_reads_its_total_and_categories() {
        let money = MoneyFormat::new(NumberStyle::ENGLISH, ["USD"]);
        let legend = vec!["Housing".to_owned(), "Food & Drink".to_owned()];
        let months = vec![
            MonthBar {
                month: NaiveDate::from_ymd_opt(2026, 9, 1).unwrap(),
                amounts: vec![Decimal::from(1800), Decimal::from(420)],
            },
            MonthBar {
                month: NaiveDate::from_ymd_opt(2026, 10, 1).unwrap(),
                amounts: vec![Decimal::from(1800), Decimal::ZERO],
            },
        ];
        let html = StackedBars {
            id: "s",
            title: "Spending",
            currency: "USD",
            legend: &legend,
            months: &months,
            money: &money,
        }
        .render()
        .unwrap();
        assert!(
            html.contains(
                "September 2026: $2,220.00 spent: Housing $1,800.00, Food &#38; Drink $420.00"
            ),
            "{html}"
        );
        assert!(html.contains(r#"data-total="1800""#));
        assert!(
            html.contains(r#"<span class="swatch s1" aria-hidden="true"></span>Food &#38; Drink"#)
        );
        let nothing = vec![MonthBar {
            month: months[0].month,
            amounts: vec![Decimal::ZERO, Decimal::ZERO],
        }];
        let none = StackedBars {
            id: "s",
            title: "Spending",
            currency: "USD",
            legend: &legend,
            months: &nothing,
            money: &money,
        };
        assert!(none.render().is_none());
    }
}
