//! The window against the same points held in memory: bit for bit at every query a run makes
//! (t_n, sub-steps, the chord's end), with jumps (repeated times), rows closer than a step and
//! steps longer than many rows; a query back in time reopens the file; a file changed since it
//! was checked is an error.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;
use crate::system::input_file;

fn write(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cosim-input-stream-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn source(path: &std::path::Path, transform: Option<(f64, f64)>) -> Arc<FileSource> {
    let c = input_file::check(path, None, |_| true, |_, _, _| Ok(())).unwrap();
    let len = std::fs::metadata(path).unwrap().len();
    Arc::new(FileSource { path: path.to_owned(), time: None, columns: c.names, transform, rows: c.rows, len })
}

/// Rows: a ramp with jumps every 7th row (a repeated time) and irregular spacing.
fn table(n: usize) -> (String, Vec<f64>, Vec<f64>) {
    let mut text = String::from("time,u\n");
    let (mut times, mut values) = (Vec::new(), Vec::new());
    let mut t = 0.0f64;
    for k in 0..n {
        let v = (k as f64 * 0.37).sin() * 3.0 + k as f64 * 1e-3;
        times.push(t);
        values.push(v);
        text.push_str(&format!("{t:?},{v:?}\n"));
        if k % 7 != 3 {
            t += 0.001 * (1 + k % 5) as f64;
        }
    }
    (text, times, values)
}

#[test]
fn the_window_is_the_table_in_memory_bit_for_bit() {
    let (text, times, values) = table(5000);
    let path = write("ramp.csv", &text);
    let src = source(&path, None);
    for h in [0.0005, 0.00390625, 0.07] {
        for linear in [true, false] {
            let mut w = Window::new(src.clone());
            let mut t = -0.01;
            while t < times.last().unwrap() + 0.1 {
                w.advance(t);
                for tau in [0.0, h / 3.0, 2.0 * h / 3.0] {
                    let mem = crate::system::table_at(&times, &values, linear, t + tau);
                    let got = w.at(0, linear, t + tau).unwrap();
                    assert_eq!((got.0.to_bits(), got.1.to_bits()), (mem.0.to_bits(), mem.1.to_bits()), "at {t}+{tau}");
                    let mem = crate::system::table_before(&times, &values, linear, t + tau + h / 3.0);
                    let got = w.before(0, linear, t + tau + h / 3.0).unwrap();
                    assert_eq!(got.to_bits(), mem.to_bits(), "before {t}+{tau}+h/3, h = {h}");
                }
                t += h;
            }
            // Only the rows around t were held.
            assert!(w.times.len() - w.start < 200, "{} rows held", w.times.len() - w.start);
            assert!(w.times.capacity() < 2 * COMPACT + 400, "capacity {}", w.times.capacity());
            // Back in time: read again from the start.
            let mem = crate::system::table_at(&times, &values, linear, 0.0105);
            assert_eq!(w.at(0, linear, 0.0105).unwrap(), mem);
        }
    }
}

#[test]
fn scale_and_offset_are_applied_as_the_table_in_memory_had_them() {
    let path = write("scaled.csv", "time,u\n0,1\n1,2\n1,-3\n2,0.1\n");
    let mut w = Window::new(source(&path, Some((2.5, -0.5))));
    let times = [0.0, 1.0, 1.0, 2.0];
    let values: Vec<f64> = [1.0, 2.0, -3.0, 0.1].iter().map(|x| 2.5 * x + -0.5).collect();
    for t in [0.0, 0.5, 1.0, 1.5, 2.0, 3.0] {
        assert_eq!(w.at(0, true, t).unwrap(), crate::system::table_at(&times, &values, true, t));
        assert_eq!(w.before(0, true, t).unwrap(), crate::system::table_before(&times, &values, true, t));
    }
}

#[test]
fn a_file_changed_since_it_was_checked_is_an_error() {
    let path = write("changed.csv", "time,u\n0,1\n1,2\n");
    let src = source(&path, None);
    std::fs::write(&path, "time,u\n0,1\n1,2\n2,3\n").unwrap();
    let e = Window::new(src).at(0, true, 0.5).unwrap_err();
    assert!(e.to_string().contains("the file changed since it was checked"), "{e}");
    // Same length, one row fewer (a longer number): found at the end.
    let path = write("changed2.csv", "time,u\n0,1\n1,2\n2,3\n");
    let src = source(&path, None);
    std::fs::write(&path, "time,u\n0,1\n1,2.003\n").unwrap();
    let e = Window::new(src).at(0, true, 5.0).unwrap_err();
    assert!(e.to_string().contains("2 rows, 3 when checked"), "{e}");
}
