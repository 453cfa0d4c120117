//! Reading cost of hostile descriptions (issue 22, item 7): `cargo bench -p model-description`.
//! Both were quadratic before (the column of every element was counted from the line's start):
//! 50 000 variables on one line, and 200 000 nested elements in a vendor annotation.

use criterion::{black_box, criterion_group, criterion_main, Criterion};

/// A description on one line with `n` Real variables (≈ 64 bytes each).
fn one_line(n: usize) -> String {
    let mut xml = String::from(
        r#"<?xml version="1.0" encoding="UTF-8"?><fmiModelDescription fmiVersion="2.0" modelName="m" guid="{g}"><CoSimulation modelIdentifier="m"/><ModelVariables>"#,
    );
    for i in 0..n {
        xml += &format!(r#"<ScalarVariable name="v{i}" valueReference="{i}"><Real/></ScalarVariable>"#);
    }
    xml += "</ModelVariables><ModelStructure/></fmiModelDescription>";
    xml
}

/// A description whose vendor annotation nests `depth` elements.
fn nested(depth: usize) -> String {
    format!(
        r#"<?xml version="1.0"?><fmiModelDescription fmiVersion="2.0" modelName="m" guid="{{g}}"><VendorAnnotations><Tool name="t">{}{}</Tool></VendorAnnotations><ModelVariables/></fmiModelDescription>"#,
        "<a>".repeat(depth),
        "</a>".repeat(depth)
    )
}

fn read(c: &mut Criterion) {
    let mut g = c.benchmark_group("read");
    g.sample_size(10);
    let wide = one_line(50_000);
    g.bench_function(format!("one line, 50000 variables ({} bytes)", wide.len()), |b| {
        b.iter(|| model_description::from_str(black_box(&wide)).map(|md| md.model_variables.len()))
    });
    let deep = nested(200_000);
    g.bench_function(format!("200000 nested annotation elements ({} bytes)", deep.len()), |b| {
        b.iter(|| model_description::from_str(black_box(&deep)).map(|md| md.vendor_annotations.len()))
    });
    g.finish();
}

criterion_group!(benches, read);
criterion_main!(benches);
