//! The report's figures, drawn with plotters: each figure is a function of typed data that
//! draws it twice, as SVG for the report and as PNG for papers and slides.

use agora_analysis::analyze::Analysis;
use anyhow::Context as _;
use plotters::prelude::*;

use super::queries::{RequestDistribution, Series, TippingRun};

/// Colour-blind-safe palette (Okabe & Ito 2008).
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
    RGBColor(240, 228, 66),
    RGBColor(0, 0, 0),
];

/// A figure drawn twice from the same code: SVG for the report, PNG for papers and slides.
pub struct Figure {
    pub svg: String,
    pub png: Vec<u8>,
}

type Fig = anyhow::Result<Figure>;

/// The font the PNG figures are drawn with (DejaVu Sans; licence in `assets/fonts/`). SVG
/// figures name the `sans-serif` family and leave the font to the browser.
static FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");

fn register_font() -> anyhow::Result<()> {
    static ONCE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let ok = *ONCE.get_or_init(|| {
        ["sans-serif", "serif", "monospace"]
            .iter()
            .all(|family| plotters::style::register_font(family, FontStyle::Normal, FONT).is_ok())
    });
    anyhow::ensure!(ok, "the bundled font could not be read");
    Ok(())
}

fn encode_png(rgb: &[u8], w: u32, h: u32) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc.write_header()?;
        writer.write_image_data(rgb)?;
    }
    Ok(out)
}

/// Draws the body once on an SVG backend and once on a bitmap backend (the body is expanded
/// for each, so it is generic over the backend without naming it).
macro_rules! figure {
    ($w:expr, $h:expr, |$root:ident| $body:block) => {{
        let (w, h): (u32, u32) = ($w, $h);
        // Both backends measure text with the registered font when laying out a chart.
        $crate::figures::register_font()?;
        let mut svg = String::new();
        {
            let $root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
            $root.fill(&WHITE).map_err(|e| anyhow::anyhow!("{e}"))?;
            let drawn: Result<(), Box<dyn std::error::Error>> = (|| $body)();
            drawn.map_err(|e| anyhow::anyhow!("{e}"))?;
            $root.present().map_err(|e| anyhow::anyhow!("{e}"))?;
        }
        let mut rgb = vec![255u8; (w * h * 3) as usize];
        {
            let $root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
            $root.fill(&WHITE).map_err(|e| anyhow::anyhow!("{e}"))?;
            let drawn: Result<(), Box<dyn std::error::Error>> = (|| $body)();
            drawn.map_err(|e| anyhow::anyhow!("{e}"))?;
            $root.present().map_err(|e| anyhow::anyhow!("{e}"))?;
        }
        Ok($crate::figures::Figure { svg, png: $crate::figures::encode_png(&rgb, w, h)? })
    }};
}

// After the macro, so that they can use it.
mod lines;
pub mod profile;
mod rows;
mod tipping;
pub mod tree;

/// A human anchor as a band (low, high) from the shipped anchor table: a range as given, a
/// point with its equivalence margin.
pub fn anchor_band(id: &str) -> anyhow::Result<(f64, f64)> {
    use agora_analysis::anchors::{AnchorTable, AnchorValue};
    let a = AnchorTable::shipped().get(id).with_context(|| format!("anchor {id} is not in the anchor table"))?;
    match (&a.value, a.margin) {
        (AnchorValue::Range { low, high }, _) => Ok((*low, *high)),
        (AnchorValue::Point(x), Some(m)) => Ok((x - m, x + m)),
        _ => anyhow::bail!("anchor {id} is neither a range nor a point with a margin"),
    }
}

/// What the report's figures are drawn from: the analysis and the store's own series.
pub struct Inputs<'a> {
    pub analysis: &'a Analysis,
    pub contribution_by_round: &'a [Series],
    pub matching_over_time: &'a [Series],
    pub tipping_run: Option<&'a TippingRun>,
    pub request_distributions: &'a [RequestDistribution],
    /// The reasoning tree of the audit's chosen prompt, and its title.
    pub tree: Option<(&'a tree::Node, &'a str)>,
    /// The behavioural profiles in the store (`agora profile`), one per model.
    pub profiles: &'a [crate::profile::StoredProfile],
}

/// Every figure the data allow, in report order, with its caption.
pub fn build(d: &Inputs) -> anyhow::Result<Vec<(&'static str, Figure)>> {
    let a = d.analysis;
    let mut figures: Vec<(&'static str, Figure)> = Vec::new();
    if !a.equivalence.is_empty() {
        figures.push(("Equivalence forest plot", rows::forest(&a.equivalence)?));
    }
    if !d.contribution_by_round.is_empty() {
        figures.push(("Public-goods trajectories, with and without punishment", contributions(d)?));
    }
    if !a.punishment_effect.is_empty() {
        let human = anchor_band("pgg-punishment")?;
        figures.push((
            "Punishment effect on final-round contributions",
            rows::punishment_effect(&a.punishment_effect, human)?,
        ));
    }
    if !a.contrasts.is_empty() {
        figures.push(("Audit grid", rows::audit_grid(&a.contrasts)?));
    }
    if !a.acceptance.is_empty() {
        figures.push(("Acceptance functions (fixed-offer arm)", acceptance(a)?));
    }
    if !d.matching_over_time.is_empty() {
        figures.push(("Convention formation", convention(d)?));
    }
    if a.convergence.iter().any(|r| r.time_median.is_some()) {
        figures.push(("Time to convention", rows::convergence_times(&a.convergence)?));
    }
    if !a.tipping.is_empty() {
        figures.push(("Tipping curves", tipping_curves(a)?));
    }
    if let Some(run) = d.tipping_run {
        figures.push(("One tipping run as a social process", tipping::social_process(run)?));
        figures.push(("The same tipping run as an interaction network over time", tipping::social_network(run)?));
    }
    if let (false, Some(agora_analysis::anchors::AnchorValue::Distribution { shares, .. })) = (
        d.request_distributions.is_empty(),
        agora_analysis::anchors::AnchorTable::shipped().get("money-request-distribution").map(|a| a.value.clone()),
    ) {
        figures.push(("11–20 distributions", lines::money_request(d.request_distributions, &shares)?));
    }
    if let Some((root, title)) = d.tree {
        figures.push(("Reasoning tree", tree::reasoning_tree(root, title)?));
    }
    if !profile::drawn_measures(d.profiles).is_empty() {
        figures.push((profile::CAPTION, profile::profile(d.profiles)?));
    }
    Ok(figures)
}

/// Public goods: contribution by round against the human first-round anchor.
fn contributions(d: &Inputs) -> Fig {
    let (low, high) = anchor_band("pgg-round1")?;
    let band = format!("human round 1, {:.1} ± {:.2}", (low + high) / 2.0, (high - low) / 2.0);
    lines::lines(
        "Public goods: contribution by round (band: human first-round anchor ± margin)",
        "round",
        "contribution (share of endowment)",
        d.contribution_by_round,
        1.0,
        Some(lines::Band::Rows(low, high, &band)),
        &[],
    )
}

/// Acceptance by offer in the fixed-offer arm, each series' threshold marked.
fn acceptance(a: &Analysis) -> Fig {
    let acc: Vec<Series> = a
        .acceptance
        .iter()
        .map(|r| Series { name: format!("{} · {}", r.model, r.variant), points: r.acceptance.clone() })
        .collect();
    let thresholds: Vec<Option<f64>> = a.acceptance.iter().map(|r| r.threshold).collect();
    lines::lines(
        "Acceptance by offer, canonical (C0) and divergent (C3) payoffs",
        "offer (points of 100)",
        "share accepted",
        &acc,
        1.0,
        None,
        &thresholds,
    )
}

/// Naming game: the share of matching interactions over time.
fn convention(d: &Inputs) -> Fig {
    lines::lines(
        "Naming game: share of matching interactions over time (bins of 50)",
        "interaction",
        "share matching",
        d.matching_over_time,
        1.0,
        None,
        &[],
    )
}

/// Tipping curves against the human critical-mass bracket.
fn tipping_curves(a: &Analysis) -> Fig {
    let tip: Vec<Series> = a
        .tipping
        .iter()
        .map(|c| Series { name: c.roster.clone(), points: c.points.iter().map(|p| (p.0, p.4)).collect() })
        .collect();
    let (low, high) = anchor_band("naming-critical-mass")?;
    let band = format!("human critical mass {low:.2}–{high:.2} (Centola et al. 2018)");
    lines::lines(
        "Share of runs in which the committed minority overturned the convention",
        "committed fraction",
        "share of runs overturned",
        &tip,
        1.0,
        Some(lines::Band::Columns(low, high, &band)),
        &[],
    )
}
