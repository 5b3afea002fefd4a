//! Timing GPU work with CUDA events on a stream (a context's: `Context::stream`).
use crate::error::Result;
use cudarc::driver::CudaStream;
use cudarc::driver::sys::CUevent_flags;

/// Runs `work` `warmup` times untimed, then `reps` times each between two events;
/// returns each repetition's milliseconds.
pub fn time_ms(
    stream: &CudaStream,
    warmup: usize,
    reps: usize,
    mut work: impl FnMut() -> Result<()>,
) -> Result<Vec<f64>> {
    for _ in 0..warmup {
        work()?;
    }
    stream.synchronize()?;
    let cuda = stream.context();
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps {
        let start = cuda.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        let end = cuda.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        start.record(stream)?;
        work()?;
        end.record(stream)?;
        end.synchronize()?;
        times.push(start.elapsed_ms(&end)? as f64);
    }
    Ok(times)
}

/// The median of `values` (the mean of the middle two for an even count); NaN if empty.
pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}
