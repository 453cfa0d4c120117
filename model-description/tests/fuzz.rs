#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Fuzzing the reader and the validator (issue 7 §4) with proptest on stable Rust: arbitrary
//! strings, XML-like token soup, and mutations of real descriptions (one embedded, plus every
//! packaged FMU's in `$FMU_DIR` or `target/fmu` when they exist). Properties: `from_str` and
//! `validate` never panic; whatever the reader accepts, the writer writes and the reader reads
//! back to the same variables.
//!
//! Bounded for CI (a few seconds each); `FUZZ_CASES=N` sets the number of cases of every
//! property (e.g. `FUZZ_CASES=200000 cargo test --release -p model-description --test fuzz`).

use model_description::{from_str, to_xml, validate};
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};
use std::io::Read;
use std::path::PathBuf;

/// A real description: `testing-faulty.fmu`'s, as the export layer writes it (enumeration type,
/// units, log categories, model structure).
const FAULTY: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="2.0" modelName="TestingFaulty" guid="{9b91229c-20cf-fd87-81e9-6acb5221a020}" description="Test FMU x&apos; = u, y = x whose steps fail on request (parameters fault, fault_time)" author="hydraulic-cosim developers" version="0.1.0" license="MIT OR Apache-2.0" generationTool="hydraulic-cosim fmu-export 0.1.0" variableNamingConvention="structured">
  <CoSimulation modelIdentifier="testing_faulty" canHandleVariableCommunicationStepSize="true" canInterpolateInputs="true" maxOutputDerivativeOrder="1" canNotUseMemoryManagementFunctions="true" canGetAndSetFMUstate="true" canSerializeFMUstate="true"/>
  <UnitDefinitions>
    <Unit name="s">
      <BaseUnit s="1"/>
      <DisplayUnit name="ms" factor="1000"/>
    </Unit>
  </UnitDefinitions>
  <TypeDefinitions>
    <SimpleType name="Fault" description="What fmi2DoStep does from fault_time on">
      <Enumeration>
        <Item name="none" value="1" description="no fault"/>
        <Item name="warning" value="2" description="return fmi2Warning with a message"/>
        <Item name="discard" value="3" description="return fmi2Discard: the step cannot be completed"/>
        <Item name="error" value="4" description="return fmi2Error: the model fails"/>
        <Item name="nan" value="5" description="the output y becomes NaN"/>
        <Item name="panic" value="6" description="panic in model code"/>
        <Item name="abort" value="7" description="abort the process (SIGABRT)"/>
      </Enumeration>
    </SimpleType>
  </TypeDefinitions>
  <LogCategories>
    <Category name="logStatusWarning" description="Messages of calls that return fmi2Warning"/>
    <Category name="logStatusError" description="Messages of calls that return fmi2Error (always logged)"/>
    <Category name="logAll" description="Everything, including informational messages of every call"/>
  </LogCategories>
  <DefaultExperiment startTime="0" stopTime="1" stepSize="0.001"/>
  <ModelVariables>
    <!-- Index of variable = "1" -->
    <ScalarVariable name="x0" valueReference="0" description="Initial value of x" causality="parameter" variability="fixed">
      <Real start="1"/>
    </ScalarVariable>
    <!-- Index of variable = "2" -->
    <ScalarVariable name="fault" valueReference="1" description="What fmi2DoStep does from fault_time on" causality="parameter" variability="fixed">
      <Enumeration declaredType="Fault" start="1"/>
    </ScalarVariable>
    <!-- Index of variable = "3" -->
    <ScalarVariable name="fault_time" valueReference="2" description="Steps starting at or after this time misbehave as fault says" causality="parameter" variability="fixed">
      <Real unit="s" start="0"/>
    </ScalarVariable>
    <!-- Index of variable = "4" -->
    <ScalarVariable name="u" valueReference="3" description="Rate of x" causality="input">
      <Real start="0"/>
    </ScalarVariable>
    <!-- Index of variable = "5" -->
    <ScalarVariable name="y" valueReference="4" description="y = x" causality="output">
      <Real/>
    </ScalarVariable>
  </ModelVariables>
  <ModelStructure>
    <Outputs>
      <Unknown index="5" dependencies=""/>
    </Outputs>
    <InitialUnknowns>
      <Unknown index="5"/>
    </InitialUnknowns>
  </ModelStructure>
</fmiModelDescription>
"#;

/// Case count: `$FUZZ_CASES` or `default`.
fn config(default: u32) -> Config {
    let cases = std::env::var("FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default);
    // Failures are turned into named regression tests below, not persisted files.
    Config { cases, failure_persistence: Some(Box::new(FileFailurePersistence::Off)), ..Config::default() }
}

/// The embedded description and every packaged FMU's description that can be found.
fn seeds() -> &'static [String] {
    static SEEDS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    SEEDS.get_or_init(|| {
        let mut v = vec![FAULTY.to_owned()];
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        let dir = std::env::var_os("FMU_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target/fmu"));
        let mut fmus: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|d| {
                d.filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|e| e == "fmu"))
                    .collect()
            })
            .unwrap_or_default();
        fmus.sort();
        for p in fmus {
            let Ok(file) = std::fs::File::open(&p) else { continue };
            let Ok(mut zip) = zip::ZipArchive::new(file) else { continue };
            let Ok(mut entry) = zip.by_name("modelDescription.xml") else { continue };
            let mut xml = String::new();
            if entry.read_to_string(&mut xml).is_ok() {
                v.push(xml);
            }
        }
        v
    })
}

/// Fragments that steer random text towards the reader's deeper paths.
const TOKENS: &[&str] = &[
    "<",
    ">",
    "/>",
    "</",
    "<?xml version=\"1.0\"?>",
    "<!--",
    "-->",
    "<![CDATA[",
    "]]>",
    "<!DOCTYPE x [<!ENTITY e \"&e;&e;\">]>",
    "fmiModelDescription",
    "fmiVersion=\"2.0\"",
    "fmiVersion=\"1.0\"",
    "fmiVersion=\"3.0\"",
    "modelName=\"m\"",
    "guid=\"{1}\"",
    "<CoSimulation modelIdentifier=\"m\"/>",
    "<ModelExchange modelIdentifier=\"m\"/>",
    "<ModelVariables>",
    "</ModelVariables>",
    "<ScalarVariable",
    "</ScalarVariable>",
    "name=\"x\"",
    "valueReference=\"0\"",
    "valueReference=\"4294967296\"",
    "causality=\"output\"",
    "causality=\"input\"",
    "causality=\"parameter\"",
    "variability=\"fixed\"",
    "initial=\"exact\"",
    "<Real",
    "<Integer",
    "<Boolean",
    "<String",
    "<Enumeration",
    "declaredType=\"T\"",
    "start=\"1e999\"",
    "start=\"NaN\"",
    "start=\"-0\"",
    "min=\"2\" max=\"1\"",
    "derivative=\"0\"",
    "derivative=\"99\"",
    "<ModelStructure>",
    "</ModelStructure>",
    "<Outputs>",
    "<Derivatives>",
    "<InitialUnknowns>",
    "<Unknown index=\"1\"",
    "index=\"0\"",
    "dependencies=\"1 2 x\"",
    "dependenciesKind=\"fixed dependent\"",
    "<TypeDefinitions>",
    "<SimpleType name=\"T\">",
    "<Item name=\"a\" value=\"1\"/>",
    "<UnitDefinitions>",
    "<Unit name=\"s\">",
    "<BaseUnit s=\"1\" factor=\"0\"/>",
    "<DisplayUnit name=\"ms\" factor=\"1000\"/>",
    "<LogCategories>",
    "<Category name=\"c\"/>",
    "<DefaultExperiment stepSize=\"-1\"/>",
    "<VendorAnnotations><Tool name=\"t\"><x/></Tool></VendorAnnotations>",
    "&amp;",
    "&lt;",
    "&#0;",
    "&#x110000;",
    "&bogus;",
    "\"",
    "'",
    "=",
    " ",
    "\n",
    "\u{0}",
    "\u{feff}",
    "ä",
];

/// Values substituted for attribute values of real descriptions.
const VALUES: &[&str] = &[
    "",
    "0",
    "-1",
    "1",
    "2",
    "4294967295",
    "4294967296",
    "-2147483649",
    "99999999999999999999",
    "1e999",
    "-1e999",
    "NaN",
    "inf",
    "0x10",
    "true",
    "false",
    "1 2",
    "x",
    "&amp;",
    "&lt;",
    "ß\u{0}",
    "{}",
    "2.0",
    "1.0",
    "3.0",
    "exact",
    "calculated",
    "output",
    "local",
    "independent",
    "constant",
    "continuous",
    "structured",
];

#[derive(Debug, Clone)]
enum Mutation {
    /// Remove `len` bytes at `at` (fractions of the text length).
    Delete { at: f64, len: usize },
    /// Insert a token.
    Insert { at: f64, token: usize },
    /// Copy a span elsewhere.
    Duplicate { from: f64, len: usize, to: f64 },
    /// Replace the n-th attribute value.
    Value { n: usize, value: usize },
    /// Rename the n-th element (start or end tag name).
    Element { n: usize, token: usize },
    /// Flip one byte.
    Byte { at: f64, value: u8 },
    /// Cut the text.
    Truncate { at: f64 },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let frac = 0.0..1.0f64;
    prop_oneof![
        (frac.clone(), 1..64usize).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (frac.clone(), 0..TOKENS.len()).prop_map(|(at, token)| Mutation::Insert { at, token }),
        (frac.clone(), 1..200usize, frac.clone()).prop_map(|(from, len, to)| Mutation::Duplicate { from, len, to }),
        (0..400usize, 0..VALUES.len()).prop_map(|(n, value)| Mutation::Value { n, value }),
        (0..200usize, 0..TOKENS.len()).prop_map(|(n, token)| Mutation::Element { n, token }),
        (frac.clone(), any::<u8>()).prop_map(|(at, value)| Mutation::Byte { at, value }),
        frac.prop_map(|at| Mutation::Truncate { at }),
    ]
}

fn pos(bytes: &[u8], f: f64) -> usize {
    ((bytes.len() as f64 * f) as usize).min(bytes.len())
}

/// Applies the mutations to the bytes of `seed`; invalid UTF-8 is replaced (the reader takes
/// `&str`, as the master passes it after reading the file as UTF-8).
fn mutate(seed: &str, mutations: &[Mutation]) -> String {
    let mut b = seed.as_bytes().to_vec();
    for m in mutations {
        match m {
            Mutation::Delete { at, len } => {
                let i = pos(&b, *at);
                let j = (i + len).min(b.len());
                b.drain(i..j);
            }
            Mutation::Insert { at, token } => {
                let i = pos(&b, *at);
                b.splice(i..i, TOKENS[*token].bytes());
            }
            Mutation::Duplicate { from, len, to } => {
                let i = pos(&b, *from);
                let span = b[i..(i + len).min(b.len())].to_vec();
                let k = pos(&b, *to);
                b.splice(k..k, span);
            }
            Mutation::Value { n, value } => {
                // The n-th `="…"` (modulo their number).
                let starts: Vec<usize> =
                    b.windows(2).enumerate().filter(|(_, w)| w == b"=\"").map(|(i, _)| i + 2).collect();
                if let Some(&s) = starts.get(n % starts.len().max(1)) {
                    if let Some(e) = b[s..].iter().position(|c| *c == b'"') {
                        b.splice(s..s + e, VALUES[*value].bytes());
                    }
                }
            }
            Mutation::Element { n, token } => {
                let starts: Vec<usize> = b
                    .windows(2)
                    .enumerate()
                    .filter(|(_, w)| w[0] == b'<' && w[1].is_ascii_alphabetic())
                    .map(|(i, _)| i + 1)
                    .collect();
                if let Some(&s) = starts.get(n % starts.len().max(1)) {
                    let e = b[s..].iter().position(|c| !c.is_ascii_alphanumeric()).map_or(b.len(), |e| s + e);
                    let name: String = TOKENS[*token].chars().filter(|c| c.is_ascii_alphanumeric()).collect();
                    b.splice(s..e, name.bytes());
                }
            }
            Mutation::Byte { at, value } => {
                if !b.is_empty() {
                    let i = pos(&b, *at).min(b.len() - 1);
                    b[i] = *value;
                }
            }
            Mutation::Truncate { at } => {
                let i = pos(&b, *at);
                b.truncate(i);
            }
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

/// The properties every input must satisfy.
fn check(xml: &str) {
    let Ok(md) = from_str(xml) else { return };
    let _ = validate(&md);
    // What the reader accepts, the writer writes and the reader reads back.
    let again = to_xml(&md);
    let md2 = from_str(&again).unwrap_or_else(|e| panic!("written description does not read back: {e}\n{again}"));
    assert_eq!(md2.model_variables.len(), md.model_variables.len());
    for (a, b) in md.model_variables.iter().zip(&md2.model_variables) {
        assert_eq!((&a.name, a.value_reference, a.causality), (&b.name, b.value_reference, b.causality));
    }
    let _ = validate(&md2);
}

proptest! {
    #![proptest_config(config(3000))]

    #[test]
    fn arbitrary_strings_never_panic(s in any::<String>()) {
        check(&s);
    }

    #[test]
    fn token_soup_never_panics(tokens in prop::collection::vec(0..TOKENS.len(), 0..80)) {
        let s: String = tokens.iter().map(|t| TOKENS[*t]).collect();
        check(&s);
    }
}

proptest! {
    #![proptest_config(config(2000))]

    #[test]
    fn mutated_real_descriptions_never_panic(
        seed in any::<prop::sample::Index>(),
        mutations in prop::collection::vec(mutation(), 1..8),
    ) {
        let seeds = seeds();
        let xml = mutate(&seeds[seed.index(seeds.len())], &mutations);
        check(&xml);
    }
}

/// FMI 3.0: the seeds written as 3.0 (`to_xml3`), mutated; `from_str3` never panics, and what it
/// accepts validates without panicking.
fn seeds3() -> &'static [String] {
    static SEEDS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    SEEDS.get_or_init(|| {
        seeds()
            .iter()
            .filter_map(|xml| from_str(xml).ok())
            .map(|md| model_description::to_xml3(&md, |v| v.causality == model_description::Causality::Output))
            .collect()
    })
}

proptest! {
    #![proptest_config(config(2000))]

    #[test]
    fn mutated_fmi3_descriptions_never_panic(
        seed in any::<prop::sample::Index>(),
        mutations in prop::collection::vec(mutation(), 1..8),
    ) {
        let seeds = seeds3();
        let xml = mutate(&seeds[seed.index(seeds.len())], &mutations);
        if let Ok((md, x)) = model_description::from_str3(&xml) {
            let _ = validate(&md);
            prop_assert_eq!(x.types.len(), md.model_variables.len());
        }
    }
}

#[test]
fn the_fmi3_seeds_read_back() {
    for xml in seeds3() {
        let (md, x) = model_description::from_str3(xml).unwrap();
        assert!(x.unsupported.is_empty());
        assert!(validate(&md).iter().all(|p| p.severity != model_description::Severity::Error), "{xml}");
    }
}

#[test]
fn the_seeds_are_valid_descriptions() {
    for xml in seeds() {
        let md = from_str(xml).unwrap();
        assert!(!md.model_variables.is_empty());
        check(xml);
    }
}
