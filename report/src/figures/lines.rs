//! Line and bar charts: series against a continuous x axis, and the 11–20 distributions.

use plotters::prelude::*;

use super::{Fig, PALETTE};
use crate::queries::{RequestDistribution, Series};

/// A shaded reference band on a line chart: a range of y (an anchor) or of x (a bracket).
pub enum Band<'a> {
    Rows(f64, f64, &'a str),
    Columns(f64, f64, &'a str),
}

/// A line chart of several named series.
pub fn lines(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[Series],
    y_max: f64,
    band: Option<Band>,
    thresholds: &[Option<f64>],
) -> Fig {
    let xs = || series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let x_min = xs().fold(f64::INFINITY, f64::min);
    let x_min = if x_min.is_finite() { x_min } else { 0.0 };
    let x_max = xs().fold(x_min, f64::max);
    let x_max = if x_max > x_min { x_max } else { x_min + 1.0 };
    // Put the legend where the data leave room: the top right if the right part of the chart
    // stays low, else the bottom right if it stays high, else the middle right.
    let right: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter())
        .filter(|p| p.0 >= x_min + 0.5 * (x_max - x_min))
        .map(|p| p.1)
        .collect();
    let legend_at = if right.iter().all(|y| *y < 0.75 * y_max) {
        SeriesLabelPosition::UpperRight
    } else if right.iter().all(|y| *y > 0.4 * y_max) {
        SeriesLabelPosition::LowerRight
    } else {
        SeriesLabelPosition::MiddleRight
    };
    figure!(760, 420, |root| {
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(56)
            .build_cartesian_2d(x_min..x_max, 0f64..y_max)?;
        chart.configure_mesh().x_desc(x_desc).y_desc(y_desc).draw()?;
        if let Some(band) = &band {
            let (corners, label) = match band {
                Band::Rows(lo, hi, label) => ([(x_min, *lo), (x_max, *hi)], label),
                Band::Columns(lo, hi, label) => ([(*lo, 0.0), (*hi, y_max)], label),
            };
            chart
                .draw_series(std::iter::once(Rectangle::new(corners, PALETTE[4].mix(0.25).filled())))?
                .label(label.to_string())
                .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 16, y + 5)], PALETTE[4].mix(0.35).filled()));
        }
        for (i, Series { name, points: pts }) in series.iter().enumerate() {
            let c = PALETTE[i % PALETTE.len()];
            chart
                .draw_series(LineSeries::new(pts.iter().copied(), c.stroke_width(2)))?
                .label(name.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2)));
            chart.draw_series(pts.iter().map(|p| Circle::new(*p, 3, c.filled())))?;
            // A series' threshold: a vertical line from the axis to the one-half line.
            if let Some(Some(x)) = thresholds.get(i) {
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(*x, 0.0), (*x, y_max * 0.5)],
                    c.stroke_width(3),
                )))?;
            }
        }
        if thresholds.iter().any(Option::is_some) {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x_min, y_max * 0.5), (x_max, y_max * 0.5)],
                    BLACK.mix(0.5).stroke_width(1),
                )))?
                .label("one half; thick tick: threshold")
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], BLACK.mix(0.5)));
        }
        chart
            .configure_series_labels()
            .position(legend_at.clone())
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()?;
        Ok(())
    })
}

/// Bars of the 11–20 distributions against the published one.
pub fn money_request(observed: &[RequestDistribution], human: &[f64]) -> Fig {
    let k = observed.len() + 1;
    figure!(760, 420, |root| {
        let mut chart = ChartBuilder::on(&root)
            .caption("11–20 game: choice distribution against the published one", ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(56)
            .build_cartesian_2d(10.5f64..20.5f64, 0f64..0.6f64)?;
        chart.configure_mesh().x_desc("request (11..20)").y_desc("share of choices").draw()?;
        let w = 0.8 / k as f64;
        let mut all: Vec<(String, Vec<f64>)> = vec![("humans (Arad & Rubinstein 2012)".into(), human.to_vec())];
        all.extend(observed.iter().map(|d| (d.roster.clone(), d.shares.clone())));
        for (i, (name, shares)) in all.iter().enumerate() {
            let c = PALETTE[i % PALETTE.len()];
            chart
                .draw_series(shares.iter().enumerate().map(|(j, s)| {
                    let x = 11.0 + j as f64 - 0.4 + i as f64 * w;
                    Rectangle::new([(x, 0.0), (x + w, *s)], c.filled())
                }))?
                .label(name.clone())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 16, y + 5)], c.filled()));
        }
        chart.configure_series_labels().background_style(WHITE.mix(0.85)).border_style(BLACK).draw()?;
        Ok(())
    })
}
