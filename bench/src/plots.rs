//! The benchmark's pictures (SVG, so no fonts are needed to draw them). Each picture is
//! the chart on the left and its legend in a panel of its own on the right, so no label
//! lands on a line or a point.
use crate::Record;
use plotters::chart::MeshStyle;
use plotters::coord::Shift;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::prelude::*;
use std::path::Path;

type Fallible = Result<(), Box<dyn std::error::Error>>;

/// What the pictures say about the device: its name (in every title) and the memory
/// bandwidth of the roofline's slanted roof, bytes/s.
pub struct Gpu {
    pub name: String,
    pub bandwidth: f64,
}

const SIZE: (u32, u32) = (1200, 680);
/// Width of the legend panel, right of the chart.
const LEGEND_WIDTH: u32 = 300;
const FONT: &str = "sans-serif";

/// Ten clearly different hues; series past the tenth reuse them with another line and
/// marker (see [`Look`]). cuBLAS is always black.
const PALETTE: [RGBColor; 10] = [
    RGBColor(230, 25, 75),   // red
    RGBColor(0, 110, 220),   // blue
    RGBColor(0, 160, 70),    // green
    RGBColor(245, 130, 0),   // orange
    RGBColor(145, 30, 180),  // purple
    RGBColor(0, 185, 200),   // cyan
    RGBColor(190, 150, 0),   // ochre
    RGBColor(240, 50, 200),  // magenta
    RGBColor(125, 75, 30),   // brown
    RGBColor(120, 120, 120), // grey
];

/// How one series is drawn: a colour, a line (solid, dashed, dotted) and a marker.
#[derive(Clone, Copy)]
struct Look {
    color: RGBColor,
    /// 0: solid line, circles; 1: dashed, triangles; 2 and on: dotted, squares.
    variant: usize,
    width: u32,
}

impl Look {
    fn of(index: usize, name: &str) -> Look {
        if name == "cuBLAS" {
            return Look {
                color: BLACK,
                variant: 0,
                width: 3,
            };
        }
        Look {
            color: PALETTE[index % PALETTE.len()],
            variant: index / PALETTE.len(),
            width: 2,
        }
    }

    fn marker<DB: DrawingBackend>(
        &self,
        at: (i32, i32),
        size: i32,
    ) -> DynElement<'static, DB, (i32, i32)> {
        let style = self.color.filled();
        let (x, y) = at;
        match self.variant {
            0 => Circle::new(at, size, style).into_dyn(),
            1 => Polygon::new(
                vec![
                    (x, y - size - 1),
                    (x - size - 1, y + size),
                    (x + size + 1, y + size),
                ],
                style,
            )
            .into_dyn(),
            _ => Rectangle::new([(x - size, y - size), (x + size, y + size)], style).into_dyn(),
        }
    }

    /// The line's dash and gap, pixels (none for a solid line).
    fn dashes(&self) -> Option<(i32, i32)> {
        match self.variant {
            0 => None,
            1 => Some((10, 5)),
            _ => Some((3, 4)),
        }
    }
}

/// One line of a legend.
struct Entry {
    name: String,
    look: Look,
    line: bool,
    marker: bool,
}

/// The series' names in the order they first appear, each with its [`Look`] (cuBLAS
/// aside, each kernel's place picks it: the same in both pictures of a type).
fn kernel_looks(rows: &[Record]) -> Vec<(String, Look)> {
    let mut names: Vec<(String, Look)> = Vec::new();
    let mut kernels = 0;
    for r in rows {
        if names.iter().all(|(n, _)| *n != r.kernel) {
            let look = Look::of(kernels, &r.kernel);
            if r.kernel != "cuBLAS" {
                kernels += 1;
            }
            names.push((r.kernel.clone(), look));
        }
    }
    names
}

/// A picture's two parts: the chart's area and the legend's.
type Areas<'a> = (
    DrawingArea<SVGBackend<'a>, Shift>,
    DrawingArea<SVGBackend<'a>, Shift>,
);

/// Splits the canvas into the chart's area and the legend's.
fn canvas(path: &Path) -> Result<Areas<'_>, Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    Ok(root.split_horizontally(SIZE.0 - LEGEND_WIDTH))
}

/// The legend: one entry per series (its line, its marker, its name), top to bottom,
/// spaced to fit the panel.
fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    entries: &[Entry],
) -> Fallible
where
    DB::ErrorType: 'static,
{
    let (_, height) = area.dim_in_pixel();
    let top = 60;
    let step = ((height as i32 - top - 20) / entries.len().max(1) as i32).clamp(12, 26);
    let font = (step - 6).clamp(11, 16);
    area.draw(&Text::new(title, (10, top - 28), (FONT, 17).into_font()))?;
    for (i, entry) in entries.iter().enumerate() {
        let (look, y) = (entry.look, top + i as i32 * step + step / 2);
        let style = look.color.stroke_width(look.width);
        if entry.line {
            match look.dashes() {
                None => area.draw(&PathElement::new(vec![(10, y), (50, y)], style))?,
                Some((dash, gap)) => {
                    let mut x = 10;
                    while x < 50 {
                        area.draw(&PathElement::new(
                            vec![(x, y), ((x + dash).min(50), y)],
                            style,
                        ))?;
                        x += dash + gap;
                    }
                }
            }
        }
        if entry.marker {
            area.draw(&look.marker::<DB>((30, y), 5))?;
        }
        area.draw(&Text::new(
            entry.name.as_str(),
            (60, y - font / 2 - 1),
            (FONT, font).into_font(),
        ))?;
    }
    Ok(())
}

/// A chart in `area` titled `title`, with room for the axes' labels.
fn chart_on<'a, 'p>(
    area: &'a DrawingArea<SVGBackend<'p>, Shift>,
    title: String,
) -> ChartBuilder<'a, 'static, SVGBackend<'p>> {
    let mut builder = ChartBuilder::on(area);
    builder
        .caption(title, (FONT, 22))
        .margin(20)
        .x_label_area_size(55)
        .y_label_area_size(75);
    builder
}

/// Draws the axes as both pictures have them: TFLOP/s up the side, `x_desc` along the
/// bottom, a faint grid.
fn draw_mesh<X, Y>(mesh: &mut MeshStyle<'_, '_, X, Y, SVGBackend<'_>>, x_desc: &str) -> Fallible
where
    X: Ranged + ValueFormatter<X::ValueType>,
    Y: Ranged + ValueFormatter<Y::ValueType>,
{
    mesh.label_style((FONT, 15))
        .axis_desc_style((FONT, 17))
        .x_desc(x_desc)
        .y_desc("TFLOP/s")
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(BLACK.mix(0.12))
        .draw()?;
    Ok(())
}

/// TFLOP/s against the square size, one line per kernel (cuBLAS included).
pub fn throughput(path: &Path, dtype: &str, gpu: &Gpu, rows: &[Record]) -> Fallible {
    let square: Vec<&Record> = rows
        .iter()
        .filter(|r| r.shape.0 == r.shape.1 && r.shape.1 == r.shape.2)
        .collect();
    let (Some(lo), Some(hi)) = (
        square.iter().map(|r| r.shape.0).min(),
        square.iter().map(|r| r.shape.0).max(),
    ) else {
        return Ok(());
    };
    // log2 of the size on a linear axis: ticks fall on the powers of two.
    let (x_lo, x_hi) = ((lo as f64).log2() - 0.25, (hi as f64).log2() + 0.25);
    let top = square.iter().map(|r| r.tflops()).fold(1.0, f64::max) * 1.08;
    let (chart_area, legend_area) = canvas(path)?;
    let title = format!(
        "rgemm {dtype} on {}: TFLOP/s against size (M = N = K)",
        gpu.name
    );
    let mut chart = chart_on(&chart_area, title).build_cartesian_2d(x_lo..x_hi, 0.0..top)?;
    let power_of_two = |v: &f64| {
        let rounded = v.round();
        if (v - rounded).abs() < 1e-6 {
            format!("{}", 2f64.powf(rounded) as u64)
        } else {
            String::new()
        }
    };
    let whole = |v: &f64| format!("{v:.0}");
    let mut mesh = chart.configure_mesh();
    mesh.x_labels(((x_hi - x_lo).ceil() as usize + 1).max(2))
        .x_label_formatter(&power_of_two)
        .y_labels(10)
        .y_label_formatter(&whole);
    draw_mesh(&mut mesh, "size S (S x S x S)")?;
    let mut entries = Vec::new();
    for (name, look) in kernel_looks(rows) {
        let mut points: Vec<(f64, f64)> = square
            .iter()
            .filter(|r| r.kernel == name)
            .map(|r| ((r.shape.0 as f64).log2(), r.tflops()))
            .collect();
        if points.is_empty() {
            continue;
        }
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let style = look.color.stroke_width(look.width);
        match look.dashes() {
            None => {
                chart.draw_series(LineSeries::new(points.clone(), style))?;
            }
            Some((dash, gap)) => {
                chart.draw_series(DashedLineSeries::new(points.clone(), dash, gap, style))?;
            }
        }
        chart.draw_series(
            points
                .into_iter()
                .map(|p| EmptyElement::at(p) + look.marker::<SVGBackend>((0, 0), 4)),
        )?;
        entries.push(Entry {
            name,
            look,
            line: true,
            marker: true,
        });
    }
    legend(&legend_area, "kernel", &entries)?;
    chart_area.present()?;
    legend_area.present()?;
    Ok(())
}

/// Roofline at the largest square size: each kernel's arithmetic intensity (FLOP per byte
/// of its tiling's global traffic, `bytes_moved`) against its throughput, under the device's
/// memory-bandwidth and compute (`peak`, FLOP/s) roofs.
pub fn roofline(path: &Path, dtype: &str, gpu: &Gpu, peak: f64, rows: &[Record]) -> Fallible {
    let Some(size) = rows
        .iter()
        .filter(|r| r.shape.0 == r.shape.1 && r.shape.1 == r.shape.2)
        .map(|r| r.shape.0)
        .max()
    else {
        return Ok(());
    };
    if !(peak.is_finite() && peak > 0.0 && gpu.bandwidth.is_finite() && gpu.bandwidth > 0.0) {
        return Err("the roofline needs the device's peak and memory bandwidth".into());
    }
    let points: Vec<&Record> = rows
        .iter()
        .filter(|r| r.shape == (size, size, size))
        .collect();
    let bandwidth = gpu.bandwidth;
    // Whole decades around the points and the ridge (where the roofs meet).
    let ridge = peak / bandwidth;
    let spread = |values: &mut dyn Iterator<Item = f64>| {
        let (lo, hi) = values
            .filter(|v| v.is_finite() && *v > 0.0)
            .fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
        if lo > hi {
            return (0.1, 1e4);
        }
        (
            10f64.powf((lo / 2.0).log10().floor()),
            10f64.powf((hi * 2.0).log10().ceil()),
        )
    };
    let (x_lo, x_hi) = spread(&mut points.iter().map(|r| r.flops() / r.bytes).chain([ridge]));
    let (y_lo, _) = spread(&mut points.iter().map(|r| r.tflops()));
    // Room above the compute roof, and for a point above it (a peak recorded too low).
    let fastest = points.iter().map(|r| r.tflops()).fold(0.0, f64::max);
    let y_hi = (peak / 1e12).max(fastest) * 2.0;
    let y_lo = y_lo.min(y_hi / 1e3);
    let (chart_area, legend_area) = canvas(path)?;
    let title = format!("rgemm {dtype} roofline at {size}^3 on {}", gpu.name);
    let mut chart = chart_on(&chart_area, title)
        .build_cartesian_2d((x_lo..x_hi).log_scale(), (y_lo..y_hi).log_scale())?;
    // Only the powers of ten are named: the ticks between them would collide.
    let decade = |v: &f64| {
        let e = v.log10();
        if (e - e.round()).abs() < 1e-9 {
            let p = 10f64.powf(e.round());
            if p >= 1.0 {
                format!("{p:.0}")
            } else {
                format!("{p}")
            }
        } else {
            String::new()
        }
    };
    let mut mesh = chart.configure_mesh();
    mesh.x_label_formatter(&decade).y_label_formatter(&decade);
    draw_mesh(
        &mut mesh,
        "arithmetic intensity (FLOP per byte of modelled global traffic)",
    )?;
    // From where the slanted roof enters the chart, so none of it is drawn clipped flat.
    let x_start = x_lo.max(y_lo * 1e12 / bandwidth);
    let roof: Vec<(f64, f64)> = (0..=200)
        .map(|i| {
            let x = x_start * (x_hi / x_start).powf(i as f64 / 200.0);
            (x, (x * bandwidth).min(peak) / 1e12)
        })
        .collect();
    chart.draw_series(LineSeries::new(roof, BLACK.stroke_width(2)))?;
    let mut entries = vec![Entry {
        name: format!(
            "roofs: {:.2} TB/s, {:.0} TFLOP/s",
            bandwidth / 1e12,
            peak / 1e12
        ),
        look: Look {
            color: BLACK,
            variant: 0,
            width: 2,
        },
        line: true,
        marker: false,
    }];
    // The same look per kernel as in the throughput picture (same order of names).
    let looks = kernel_looks(rows);
    for r in &points {
        let Some(look) = looks.iter().find(|(n, _)| *n == r.kernel).map(|(_, l)| *l) else {
            continue;
        };
        let p = (r.flops() / r.bytes, r.tflops());
        chart.draw_series(std::iter::once(
            EmptyElement::at(p) + look.marker::<SVGBackend>((0, 0), 6),
        ))?;
        entries.push(Entry {
            name: r.kernel.clone(),
            look,
            line: false,
            marker: true,
        });
    }
    legend(&legend_area, "kernel", &entries)?;
    chart_area.present()?;
    legend_area.present()?;
    Ok(())
}
