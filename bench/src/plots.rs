//! The benchmark's pictures (SVG, so no fonts are needed to draw them).
use crate::Record;
use plotters::prelude::*;
use rgemm::DeviceProps;
use std::path::Path;

type Fallible = Result<(), Box<dyn std::error::Error>>;

fn kernel_names(rows: &[Record]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for r in rows {
        if !names.contains(&r.kernel) {
            names.push(r.kernel.clone());
        }
    }
    names
}

/// TFLOP/s against the square size, one line per kernel (cuBLAS included).
pub fn throughput(path: &Path, dtype: &str, rows: &[Record]) -> Fallible {
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
    let top = square.iter().map(|r| r.tflops()).fold(1.0, f64::max) * 1.1;
    let root = SVGBackend::new(path, (960, 600)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("rgemm {dtype}: TFLOP/s against size (M = N = K)"),
            ("sans-serif", 22),
        )
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d((lo as f64..hi as f64).log_scale(), 0.0..top)?;
    chart
        .configure_mesh()
        .x_desc("size")
        .y_desc("TFLOP/s")
        .draw()?;
    for (i, name) in kernel_names(rows).into_iter().enumerate() {
        let mut points: Vec<(f64, f64)> = square
            .iter()
            .filter(|r| r.kernel == name)
            .map(|r| (r.shape.0 as f64, r.tflops()))
            .collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let color = Palette99::pick(i).to_rgba();
        let width = if name == "cuBLAS" { 3 } else { 2 };
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(width)))?
            .label(name)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart.draw_series(
            points
                .into_iter()
                .map(|p| Circle::new(p, 3, color.filled())),
        )?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

/// Roofline at the largest square size: each kernel's arithmetic intensity (FLOP per byte
/// of its tiling's global traffic, `bytes_moved`) against its throughput, under the device's
/// memory-bandwidth and compute roofs.
pub fn roofline(
    path: &Path,
    dtype: &str,
    props: &DeviceProps,
    peak: f64,
    rows: &[Record],
) -> Fallible {
    let Some(size) = rows
        .iter()
        .filter(|r| r.shape.0 == r.shape.1 && r.shape.1 == r.shape.2)
        .map(|r| r.shape.0)
        .max()
    else {
        return Ok(());
    };
    let points: Vec<&Record> = rows
        .iter()
        .filter(|r| r.shape == (size, size, size))
        .collect();
    let bandwidth = props.memory_bandwidth();
    let (x_lo, x_hi) = (0.05f64, 1e4f64);
    let (y_lo, y_hi) = (0.01f64, peak / 1e12 * 2.0);
    let root = SVGBackend::new(path, (960, 600)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("rgemm {dtype} roofline at {size}^3 ({})", props.name),
            ("sans-serif", 22),
        )
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d((x_lo..x_hi).log_scale(), (y_lo..y_hi).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("arithmetic intensity (FLOP per byte of modelled global traffic)")
        .y_desc("TFLOP/s")
        .draw()?;
    let roof: Vec<(f64, f64)> = (0..=200)
        .map(|i| {
            let x = x_lo * (x_hi / x_lo).powf(i as f64 / 200.0);
            (x, (x * bandwidth).min(peak) / 1e12)
        })
        .collect();
    chart
        .draw_series(LineSeries::new(roof, BLACK.stroke_width(2)))?
        .label(format!(
            "roofs: {:.2} TB/s, {:.1} TFLOP/s",
            bandwidth / 1e12,
            peak / 1e12
        ))
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(2)));
    for (i, r) in points.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let p = (r.flops() / r.bytes, r.tflops());
        chart
            .draw_series(std::iter::once(Circle::new(p, 6, color.filled())))?
            .label(r.kernel.clone())
            .legend(move |(x, y)| Circle::new((x + 10, y), 5, color.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
