//! Tolerant reader: `modelDescription.xml` → [`ModelDescription`].
//!
//! The reader walks the events of [`quick_xml::Reader`] and builds the typed model directly
//! (no serde). It is tolerant where real FMUs differ from the schema without harm:
//!
//! - unknown attributes and unknown elements (vendor extensions anywhere) are skipped;
//! - the `<Tool>` elements of `<VendorAnnotations>` and of a variable's `<Annotations>` are kept
//!   verbatim as inner-XML strings;
//! - booleans accept `true`/`false`/`1`/`0`, numbers may carry surrounding whitespace;
//! - a UTF-8 byte-order mark is ignored.
//!
//! Everything else is a [`ReadError`] that carries the 1-based line and column (in characters)
//! of the offending element or attribute.

use crate::model::*;

#[path = "read3.rs"]
pub mod read3;
mod xml;

pub use xml::ReadError;
use xml::*;

/// Reads an FMI 2.0 `modelDescription.xml`.
///
/// Returns [`ReadError::UnsupportedVersion`] for FMI 1.0 and 3.0 descriptions, so that an
/// importer can tell the user which standard the FMU follows.
pub fn from_str(xml: &str) -> Result<ModelDescription, ReadError> {
    let src = xml.strip_prefix('\u{feff}').unwrap_or(xml);
    let mut p = Parser::new(src);
    let root = match p.next()? {
        Ev::Elem(e) => e,
        Ev::End(at) => return Err(p.xml_error_at(at, "end tag without a start tag".into())),
        Ev::Eof => return Err(p.xml_error_at(src.len(), "no root element".into())),
    };
    let md = p.model_description(root)?;
    match p.next()? {
        Ev::Elem(e) => {
            Err(p.xml_error_at_pos(e.pos, format!("element <{}> after the end of the root element", e.name)))
        }
        Ev::End(at) => Err(p.xml_error_at(at, "end tag without a start tag".into())),
        Ev::Eof => Ok(md),
    }
}

impl Parser<'_> {
    fn model_description(&mut self, e: Elem) -> Result<ModelDescription, ReadError> {
        if e.name != "fmiModelDescription" {
            return Err(ReadError::WrongRoot { line: e.pos.line, column: e.pos.column, found: e.name });
        }
        let version = e.req("fmiVersion")?;
        let version = version.trim();
        if version != "2.0" {
            let pos = e.get("fmiVersion").map_or(e.pos, |(_, _, p)| *p);
            return Err(ReadError::UnsupportedVersion {
                line: pos.line,
                column: pos.column,
                version: version.to_owned(),
            });
        }
        let mut md = ModelDescription {
            fmi_version: version.to_owned(),
            model_name: e.req("modelName")?,
            guid: e.req("guid")?,
            description: e.opt("description"),
            author: e.opt("author"),
            version: e.opt("version"),
            copyright: e.opt("copyright"),
            license: e.opt("license"),
            generation_tool: e.opt("generationTool"),
            generation_date_and_time: e.opt("generationDateAndTime"),
            variable_naming_convention: e
                .parse("variableNamingConvention", CONVENTION, NamingConvention::parse)?
                .unwrap_or_default(),
            number_of_event_indicators: e.u32("numberOfEventIndicators")?,
            ..ModelDescription::default()
        };
        self.children(&e, |p, c| {
            match c.name.as_str() {
                "ModelExchange" => {
                    md.model_exchange = Some(ModelExchange {
                        model_identifier: c.req("modelIdentifier")?,
                        can_get_and_set_fmu_state: c.flag("canGetAndSetFMUstate")?,
                        can_serialize_fmu_state: c.flag("canSerializeFMUstate")?,
                    });
                    p.ignore(c)?;
                }
                "CoSimulation" => md.co_simulation = Some(p.co_simulation(c)?),
                "UnitDefinitions" => p.children(&c, |p, u| {
                    if u.name == "Unit" {
                        md.unit_definitions.push(p.unit(u)?);
                        Ok(())
                    } else {
                        p.ignore(u)
                    }
                })?,
                "TypeDefinitions" => p.children(&c, |p, t| {
                    if t.name == "SimpleType" {
                        md.type_definitions.push(p.simple_type(t)?);
                        Ok(())
                    } else {
                        p.ignore(t)
                    }
                })?,
                "LogCategories" => p.children(&c, |p, cat| {
                    if cat.name == "Category" {
                        md.log_categories
                            .push(LogCategory { name: cat.req("name")?, description: cat.opt("description") });
                    }
                    p.ignore(cat)
                })?,
                "DefaultExperiment" => {
                    md.default_experiment = Some(DefaultExperiment {
                        start_time: c.f64("startTime")?,
                        stop_time: c.f64("stopTime")?,
                        tolerance: c.f64("tolerance")?,
                        step_size: c.f64("stepSize")?,
                    });
                    p.ignore(c)?;
                }
                "VendorAnnotations" => md.vendor_annotations = p.tools(c)?,
                "ModelVariables" => p.children(&c, |p, v| {
                    if v.name == "ScalarVariable" {
                        md.model_variables.push(p.variable(v)?);
                        Ok(())
                    } else {
                        p.ignore(v)
                    }
                })?,
                "ModelStructure" => md.model_structure = p.model_structure(c)?,
                _ => p.ignore(c)?,
            }
            Ok(())
        })?;
        Ok(md)
    }

    fn co_simulation(&mut self, e: Elem) -> Result<CoSimulation, ReadError> {
        let mut cs = CoSimulation {
            model_identifier: e.req("modelIdentifier")?,
            needs_execution_tool: e.flag("needsExecutionTool")?,
            can_handle_variable_communication_step_size: e.flag("canHandleVariableCommunicationStepSize")?,
            can_interpolate_inputs: e.flag("canInterpolateInputs")?,
            max_output_derivative_order: e.u32("maxOutputDerivativeOrder")?.unwrap_or(0),
            can_run_asynchronuously: e.flag("canRunAsynchronuously")?,
            can_be_instantiated_only_once_per_process: e.flag("canBeInstantiatedOnlyOncePerProcess")?,
            can_not_use_memory_management_functions: e.flag("canNotUseMemoryManagementFunctions")?,
            can_get_and_set_fmu_state: e.flag("canGetAndSetFMUstate")?,
            can_serialize_fmu_state: e.flag("canSerializeFMUstate")?,
            provides_directional_derivative: e.flag("providesDirectionalDerivative")?,
            source_files: Vec::new(),
        };
        self.children(&e, |p, c| {
            if c.name == "SourceFiles" {
                p.children(&c, |p, f| {
                    if f.name == "File" {
                        cs.source_files.push(f.req("name")?);
                    }
                    p.ignore(f)
                })
            } else {
                p.ignore(c)
            }
        })?;
        Ok(cs)
    }

    fn unit(&mut self, e: Elem) -> Result<Unit, ReadError> {
        let mut unit = Unit { name: e.req("name")?, base_unit: None, display_units: Vec::new() };
        self.children(&e, |p, c| {
            match c.name.as_str() {
                "BaseUnit" => {
                    let exp = |k: &str| c.i32(k).map(Option::unwrap_or_default);
                    unit.base_unit = Some(BaseUnit {
                        kg: exp("kg")?,
                        m: exp("m")?,
                        s: exp("s")?,
                        a: exp("A")?,
                        k: exp("K")?,
                        mol: exp("mol")?,
                        cd: exp("cd")?,
                        rad: exp("rad")?,
                        factor: c.f64("factor")?.unwrap_or(1.0),
                        offset: c.f64("offset")?.unwrap_or(0.0),
                    });
                }
                "DisplayUnit" => unit.display_units.push(DisplayUnit {
                    name: c.req("name")?,
                    factor: c.f64("factor")?.unwrap_or(1.0),
                    offset: c.f64("offset")?.unwrap_or(0.0),
                }),
                _ => {}
            }
            p.ignore(c)
        })?;
        Ok(unit)
    }

    fn simple_type(&mut self, e: Elem) -> Result<SimpleType, ReadError> {
        let name = e.req("name")?;
        let description = e.opt("description");
        let mut kind = None;
        self.children(&e, |p, c| {
            if kind.is_some() {
                return p.ignore(c);
            }
            match c.name.as_str() {
                "Real" => kind = Some(SimpleTypeKind::Real(real_attributes(&c)?)),
                "Integer" => kind = Some(SimpleTypeKind::Integer(integer_attributes(&c)?)),
                "Boolean" => kind = Some(SimpleTypeKind::Boolean),
                "String" => kind = Some(SimpleTypeKind::String),
                "Enumeration" => {
                    let quantity = c.opt("quantity");
                    let mut items = Vec::new();
                    p.children(&c, |p, item| {
                        if item.name == "Item" {
                            items.push(EnumerationItem {
                                name: item.req("name")?,
                                value: item.req_parse("value", INT, parse_i32)?,
                                description: item.opt("description"),
                            });
                        }
                        p.ignore(item)
                    })?;
                    kind = Some(SimpleTypeKind::Enumeration { quantity, items });
                    return Ok(());
                }
                _ => {}
            }
            p.ignore(c)
        })?;
        let kind = kind.ok_or_else(|| ReadError::MissingTypeElement {
            line: e.pos.line,
            column: e.pos.column,
            element: e.name.clone(),
            name: Some(name.clone()),
        })?;
        Ok(SimpleType { name, description, kind })
    }

    fn variable(&mut self, e: Elem) -> Result<ScalarVariable, ReadError> {
        let name = e.req("name")?;
        let value_reference = e.req_parse("valueReference", UINT, parse_u32)?;
        let mut kind = None;
        let mut annotations = Vec::new();
        self.children(&e, |p, c| {
            match c.name.as_str() {
                "Annotations" => {
                    annotations.extend(p.tools(c)?);
                    return Ok(());
                }
                "Real" | "Integer" | "Boolean" | "String" | "Enumeration" if kind.is_none() => {
                    kind = Some(variable_kind(&c)?);
                }
                _ => {}
            }
            p.ignore(c)
        })?;
        let kind = kind.ok_or_else(|| ReadError::MissingTypeElement {
            line: e.pos.line,
            column: e.pos.column,
            element: e.name.clone(),
            name: Some(name.clone()),
        })?;
        Ok(ScalarVariable {
            name,
            value_reference,
            description: e.opt("description"),
            causality: e.parse("causality", CAUSALITY, Causality::parse)?.unwrap_or_default(),
            variability: e.parse("variability", VARIABILITY, Variability::parse)?.unwrap_or_default(),
            initial: e.parse("initial", INITIAL, Initial::parse)?,
            can_handle_multiple_set_per_time_instant: e.bool("canHandleMultipleSetPerTimeInstant")?,
            kind,
            annotations,
            line: e.pos.line,
        })
    }

    /// The `<Tool>` children of `<VendorAnnotations>` or `<Annotations>`, inner XML verbatim.
    fn tools(&mut self, e: Elem) -> Result<Vec<ToolAnnotation>, ReadError> {
        let mut tools = Vec::new();
        self.children(&e, |p, c| {
            if c.name != "Tool" {
                return p.ignore(c);
            }
            let name = c.req("name")?;
            let end = p.skip(&c)?;
            let content = p.src.get(c.end..end).unwrap_or_default().to_owned();
            tools.push(ToolAnnotation { name, content });
            Ok(())
        })?;
        Ok(tools)
    }

    fn model_structure(&mut self, e: Elem) -> Result<ModelStructure, ReadError> {
        let mut ms = ModelStructure::default();
        self.children(&e, |p, c| {
            let list = match c.name.as_str() {
                "Outputs" => &mut ms.outputs,
                "Derivatives" => &mut ms.derivatives,
                "InitialUnknowns" => &mut ms.initial_unknowns,
                _ => return p.ignore(c),
            };
            p.children(&c, |p, u| {
                if u.name == "Unknown" {
                    list.push(Unknown {
                        index: u.req_parse("index", UINT, parse_u32)?,
                        dependencies: u.parse("dependencies", UINT_LIST, parse_u32_list)?,
                        dependencies_kind: u.parse("dependenciesKind", KIND_LIST, parse_kind_list)?,
                        line: u.pos.line,
                    });
                }
                p.ignore(u)
            })
        })?;
        Ok(ms)
    }
}

fn real_attributes(e: &Elem) -> Result<RealAttributes, ReadError> {
    Ok(RealAttributes {
        quantity: e.opt("quantity"),
        unit: e.opt("unit"),
        display_unit: e.opt("displayUnit"),
        relative_quantity: e.bool("relativeQuantity")?,
        min: e.f64("min")?,
        max: e.f64("max")?,
        nominal: e.f64("nominal")?,
        unbounded: e.bool("unbounded")?,
    })
}

fn integer_attributes(e: &Elem) -> Result<IntegerAttributes, ReadError> {
    Ok(IntegerAttributes { quantity: e.opt("quantity"), min: e.i32("min")?, max: e.i32("max")? })
}

fn variable_kind(e: &Elem) -> Result<VariableKind, ReadError> {
    let declared_type = e.opt("declaredType");
    Ok(match e.name.as_str() {
        "Real" => VariableKind::Real {
            declared_type,
            attrs: real_attributes(e)?,
            start: e.f64("start")?,
            derivative: e.u32("derivative")?,
            reinit: e.bool("reinit")?,
        },
        "Integer" => VariableKind::Integer {
            declared_type,
            attrs: integer_attributes(e)?,
            start: e.i32("start")?.map(i128::from),
        },
        "Boolean" => VariableKind::Boolean { declared_type, start: e.bool("start")? },
        "String" => VariableKind::String { declared_type, start: e.opt("start") },
        _ => VariableKind::Enumeration {
            declared_type: e.req("declaredType")?,
            quantity: e.opt("quantity"),
            min: e.i32("min")?,
            max: e.i32("max")?,
            start: e.i32("start")?,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="2.0" modelName="m" guid="{g}">
"#;

    fn doc(body: &str) -> String {
        format!("{HEAD}{body}</fmiModelDescription>\n")
    }

    fn err(xml: &str) -> ReadError {
        match from_str(xml) {
            Ok(md) => panic!("expected an error, got {md:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn reads_a_small_description() {
        let xml = doc(r#"  <CoSimulation modelIdentifier="m" canHandleVariableCommunicationStepSize="1"
      canGetAndSetFMUstate="0" maxOutputDerivativeOrder=" 2 "/>
  <ModelVariables>
    <ScalarVariable name="x" valueReference="7" causality="output" initial="exact">
      <Real start=" 1.5 " unit="m" reinit="true"/>
    </ScalarVariable>
    <ScalarVariable name="b" valueReference="0" variability="discrete">
      <Boolean start="0"/>
    </ScalarVariable>
  </ModelVariables>
  <ModelStructure>
    <Outputs><Unknown index="1" dependencies="" dependenciesKind=""/></Outputs>
    <InitialUnknowns>
      <Unknown index="1"/>
    </InitialUnknowns>
  </ModelStructure>
"#);
        let md = from_str(&xml).unwrap();
        assert_eq!(md.fmi_version, "2.0");
        assert_eq!(md.model_name, "m");
        assert_eq!(md.guid, "{g}");
        let cs = md.co_simulation.as_ref().unwrap();
        assert!(cs.can_handle_variable_communication_step_size);
        assert!(!cs.can_get_and_set_fmu_state);
        assert_eq!(cs.max_output_derivative_order, 2);
        let x = &md.model_variables[0];
        assert_eq!(x.value_reference, 7);
        assert_eq!(x.causality, Causality::Output);
        assert_eq!(x.variability, Variability::Continuous);
        assert_eq!(x.initial, Some(Initial::Exact));
        assert_eq!(x.line, 6);
        match &x.kind {
            VariableKind::Real { start, attrs, reinit, .. } => {
                assert_eq!(*start, Some(1.5));
                assert_eq!(attrs.unit.as_deref(), Some("m"));
                assert_eq!(*reinit, Some(true));
            }
            k => panic!("{k:?}"),
        }
        assert_eq!(md.model_variables[1].kind, VariableKind::Boolean { declared_type: None, start: Some(false) });
        assert_eq!(md.model_variables[1].line, 9);
        let out = &md.model_structure.outputs[0];
        assert_eq!((out.index, out.line), (1, 14));
        assert_eq!(out.dependencies, Some(vec![]));
        assert_eq!(out.dependencies_kind, Some(vec![]));
        let init = &md.model_structure.initial_unknowns[0];
        assert_eq!((init.dependencies.as_ref(), init.line), (None, 16));
    }

    #[test]
    fn byte_order_mark_is_ignored() {
        let xml = format!("\u{feff}{}", doc("  <ModelVariables/>\n"));
        assert_eq!(from_str(&xml).unwrap().model_name, "m");
        // Columns are not shifted by the invisible BOM.
        let bad = format!("\u{feff}{}", doc("  <DefaultExperiment stopTime=\"x\"/>\n"));
        let e = err(&bad);
        assert_eq!((e.line(), e.column()), (3, 22), "{e}");
    }

    /// Line and column of a malformed-XML error (panics on other errors).
    fn xml_at(xml: &str) -> (u32, u32, String) {
        match err(xml) {
            e @ ReadError::Xml { .. } => (e.line(), e.column(), e.to_string()),
            e => panic!("expected malformed XML, got {e}"),
        }
    }

    #[test]
    fn malformed_xml_has_line_and_column() {
        // Mismatched end tag.
        let (line, column, msg) = xml_at(&doc("  <ModelVariables>\n  </ModelVariablez>\n"));
        assert_eq!((line, column), (4, 3), "{msg}");
        assert!(msg.starts_with("line 4, column 3: malformed XML: "), "{msg}");

        // Duplicated attribute: points at the second one.
        let (line, column, msg) = xml_at(&doc("  <ModelVariables x=\"1\" x=\"2\"/>\n"));
        assert_eq!((line, column), (3, 25), "{msg}");

        // Unquoted value.
        let (line, column, msg) = xml_at(&doc("  <ModelVariables x=1/>\n"));
        assert_eq!((line, column), (3, 21), "{msg}");

        // Unknown entity: points at the attribute.
        let (line, column, msg) = xml_at(&doc("  <ModelVariables x=\"&foo;\"/>\n"));
        assert_eq!((line, column), (3, 19), "{msg}");

        // Unclosed element at the end of the input.
        let (line, column, msg) = xml_at(&format!("{HEAD}  <ModelVariables>\n"));
        assert_eq!((line, column), (4, 1), "{msg}");
        assert!(msg.contains("<ModelVariables> of line 3, column 3 is not closed"), "{msg}");

        // Unclosed comment: the error points at its start.
        let (line, column, msg) = xml_at(&doc("  <!-- never closed\n"));
        assert_eq!((line, column), (3, 3), "{msg}");

        // A second root element.
        let (line, column, msg) = xml_at(&format!("{}<again/>", doc("")));
        assert_eq!((line, column), (4, 1), "{msg}");

        // Empty input.
        let (line, column, msg) = xml_at("");
        assert_eq!((line, column), (1, 1), "{msg}");
    }

    #[test]
    fn bad_attribute_value_has_line_column_and_message() {
        let xml = doc(
            "  <ModelVariables>\n    <ScalarVariable name=\"x\" valueReference=\"abc\">\n      <Real/>\n    </ScalarVariable>\n  </ModelVariables>\n",
        );
        let e = err(&xml);
        assert_eq!(
            e,
            ReadError::InvalidAttribute {
                line: 4,
                column: 30,
                element: "ScalarVariable".into(),
                name: Some("x".into()),
                attribute: "valueReference".into(),
                value: "abc".into(),
                expected: UINT,
            }
        );
        assert_eq!(
            e.to_string(),
            "line 4, column 30: <ScalarVariable name=\"x\">: attribute valueReference=\"abc\" is \
             not an unsigned integer"
        );

        // Columns count characters, not bytes; attributes on their own lines are found.
        let xml = doc(
            "  <ModelVariables>\n    <ScalarVariable name=\"äöü\"\n        valueReference=\"1\" causality=\"sideways\"><Real/></ScalarVariable>\n  </ModelVariables>\n",
        );
        let e = err(&xml);
        assert_eq!((e.line(), e.column()), (5, 28), "{e}");
        assert!(
            e.to_string()
                .contains("<ScalarVariable name=\"äöü\">: attribute causality=\"sideways\" is not a causality"),
            "{e}"
        );

        for (attr, expected) in [("start=\"1.0.0\"", DOUBLE), ("reinit=\"yes\"", BOOL), ("derivative=\"-1\"", UINT)] {
            let xml = doc(&format!(
                "<ModelVariables><ScalarVariable name=\"x\" valueReference=\"1\"><Real {attr}/></ScalarVariable></ModelVariables>"
            ));
            match err(&xml) {
                ReadError::InvalidAttribute { element, expected: e, name, .. } => {
                    assert_eq!((element.as_str(), e, name), ("Real", expected, None));
                }
                e => panic!("{e}"),
            }
        }
        let xml = doc(r#"<ModelStructure><Outputs><Unknown index="1" dependencies="1 x"/></Outputs></ModelStructure>"#);
        assert!(matches!(err(&xml), ReadError::InvalidAttribute { expected: UINT_LIST, .. }));
        let xml = doc(
            r#"<ModelStructure><Outputs><Unknown index="1" dependencies="1" dependenciesKind="linear"/></Outputs></ModelStructure>"#,
        );
        assert!(matches!(err(&xml), ReadError::InvalidAttribute { expected: KIND_LIST, .. }));
    }

    #[test]
    fn missing_required_attribute_names_element_and_attribute() {
        let xml =
            doc("  <ModelVariables>\n    <ScalarVariable name=\"x\"><Real/></ScalarVariable>\n  </ModelVariables>\n");
        let e = err(&xml);
        assert_eq!(
            e,
            ReadError::MissingAttribute {
                line: 4,
                column: 5,
                element: "ScalarVariable".into(),
                name: Some("x".into()),
                attribute: "valueReference".into(),
            }
        );
        assert_eq!(
            e.to_string(),
            "line 4, column 5: <ScalarVariable name=\"x\">: missing required attribute valueReference"
        );
        let e = err("<fmiModelDescription fmiVersion=\"2.0\" guid=\"g\"/>");
        assert!(e.to_string().contains("<fmiModelDescription>: missing required attribute modelName"), "{e}");
        let e = err(&doc("<ModelVariables><ScalarVariable name=\"e\" valueReference=\"1\"><Enumeration/></ScalarVariable></ModelVariables>"));
        assert!(matches!(e, ReadError::MissingAttribute { ref attribute, .. } if attribute == "declaredType"), "{e}");
        let e = err(&doc("<UnitDefinitions><Unit/></UnitDefinitions>"));
        assert!(matches!(e, ReadError::MissingAttribute { ref element, .. } if element == "Unit"), "{e}");
    }

    #[test]
    fn other_fmi_versions_are_named() {
        let fmi3 = r#"<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="3.0" modelName="FMU3Model" instantiationToken="{x}">
  <ModelVariables><Float64 name="t" valueReference="0" causality="independent"/></ModelVariables>
</fmiModelDescription>"#;
        let e = err(fmi3);
        assert_eq!(e, ReadError::UnsupportedVersion { line: 2, column: 22, version: "3.0".into() });
        assert!(e.to_string().contains("this is an FMI 3.0 model description"), "{e}");

        let fmi1 = r#"<fmiModelDescription fmiVersion="1.0" modelName="m" modelIdentifier="m" guid="{g}" numberOfContinuousStates="0" numberOfEventIndicators="0"/>"#;
        let e = err(fmi1);
        assert!(matches!(e, ReadError::UnsupportedVersion { ref version, .. } if version == "1.0"), "{e}");
        assert!(e.to_string().contains("FMI 1.0"), "{e}");
    }

    #[test]
    fn wrong_root_element() {
        let e = err("<?xml version=\"1.0\"?>\n<fmiModelDescripton fmiVersion=\"2.0\"/>");
        assert_eq!(e, ReadError::WrongRoot { line: 2, column: 1, found: "fmiModelDescripton".into() });
    }

    #[test]
    fn scalar_variable_without_type_element() {
        let xml = doc("<ModelVariables>\n  <ScalarVariable name=\"x\" valueReference=\"1\">\n    <Annotations/>\n  </ScalarVariable>\n</ModelVariables>");
        let e = err(&xml);
        assert_eq!(
            e,
            ReadError::MissingTypeElement {
                line: 4,
                column: 3,
                element: "ScalarVariable".into(),
                name: Some("x".into()),
            }
        );
        assert!(e.to_string().contains("<ScalarVariable name=\"x\">: no type element"), "{e}");
        let e = err(&doc("<ModelVariables><ScalarVariable name=\"y\" valueReference=\"1\"/></ModelVariables>"));
        assert!(matches!(e, ReadError::MissingTypeElement { .. }), "{e}");
    }

    #[test]
    fn unknown_attributes_and_elements_are_skipped() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<!-- comment before the root -->
<?processing instruction?>
<fmiModelDescription xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
    xsi:noNamespaceSchemaLocation="fmi2ModelDescription.xsd"
    fmiVersion="2.0" modelName="m" guid="{g}" vendorAttribute="yes">
  <VendorExtension><ModelVariables><ScalarVariable name="fake" valueReference="9"><Real/></ScalarVariable></ModelVariables></VendorExtension>
  <ModelExchange modelIdentifier="m" completedIntegratorStepNotNeeded="true">
    <SourceFiles><File name="a.c"/></SourceFiles>
  </ModelExchange>
  <CoSimulation modelIdentifier="m" futureFlag="true"><Extra/><SourceFiles><File name="a.c"/><Other/></SourceFiles></CoSimulation>
  <UnitDefinitions><Unit name="m"><BaseUnit m="1" future="2"/><Alias/><DisplayUnit name="mm" factor="1000" inverse="false"/></Unit></UnitDefinitions>
  <TypeDefinitions><SimpleType name="T"><Extra/><Real unit="m"/></SimpleType></TypeDefinitions>
  <ModelVariables>
    <ScalarVariable name="x" valueReference="1" clocks="3" causality="output">
      <Extra><Integer/></Extra>
      <Real declaredType="T" newAttr="1"/>
      <Annotations>
        <Tool name="a"><x y="1"><!-- kept --><z/></x></Tool>
        <NotATool/>
        <Tool name="b"/>
      </Annotations>
      <Dimension start="3"/>
    </ScalarVariable>
    <Variable name="not-fmi2" valueReference="2"/>
  </ModelVariables>
  <ModelStructure>
    <Outputs><Unknown index="1" extra="1"/><Other index="5"/></Outputs>
    <EventIndicators><Unknown index="1"/></EventIndicators>
    <InitialUnknowns><Unknown index="1"><Inner/></Unknown></InitialUnknowns>
  </ModelStructure>
  <Trailer/>
</fmiModelDescription>
<!-- comment after the root -->
"#;
        let md = from_str(xml).unwrap();
        assert_eq!(md.model_variables.len(), 1);
        let x = &md.model_variables[0];
        assert_eq!(x.kind.declared_type(), Some("T"));
        assert_eq!(
            x.annotations,
            vec![
                ToolAnnotation { name: "a".into(), content: "<x y=\"1\"><!-- kept --><z/></x>".into() },
                ToolAnnotation { name: "b".into(), content: String::new() },
            ]
        );
        assert_eq!(md.model_exchange.as_ref().unwrap().model_identifier, "m");
        assert_eq!(md.co_simulation.as_ref().unwrap().source_files, vec!["a.c".to_owned()]);
        assert_eq!(md.unit_definitions[0].display_units[0].factor, 1000.0);
        assert_eq!(md.unit_definitions[0].base_unit.as_ref().unwrap().m, 1);
        assert_eq!(md.model_structure.outputs.len(), 1);
        assert!(md.model_structure.derivatives.is_empty());
        assert_eq!(md.model_structure.initial_unknowns.len(), 1);
    }

    #[test]
    fn defaults_of_optional_attributes() {
        let xml = doc(r#"<UnitDefinitions><Unit name="u"><BaseUnit/><DisplayUnit name="d"/></Unit></UnitDefinitions>
<ModelVariables><ScalarVariable name="x" valueReference="0"><String/></ScalarVariable></ModelVariables>"#);
        let md = from_str(&xml).unwrap();
        assert_eq!(md.unit_definitions[0].base_unit, Some(BaseUnit::si([0; 8])));
        assert_eq!(md.unit_definitions[0].display_units[0], DisplayUnit { name: "d".into(), factor: 1.0, offset: 0.0 });
        let x = &md.model_variables[0];
        assert_eq!((x.causality, x.variability, x.initial), (Causality::Local, Variability::Continuous, None));
        assert_eq!(md.variable_naming_convention, NamingConvention::Flat);
        assert!(md.co_simulation.is_none());
    }

    #[test]
    fn special_doubles_and_entities() {
        let xml = doc(r#"<ModelVariables>
<ScalarVariable name="a&amp;b &#x3B1;" valueReference="0" description="&lt;&#10;&gt;"><Real min="-INF" max="INF" nominal="NaN" start="1E-3"/></ScalarVariable>
</ModelVariables>"#);
        let md = from_str(&xml).unwrap();
        let v = &md.model_variables[0];
        assert_eq!(v.name, "a&b α");
        assert_eq!(v.description.as_deref(), Some("<\n>"));
        match &v.kind {
            VariableKind::Real { attrs, start, .. } => {
                assert_eq!(attrs.min, Some(f64::NEG_INFINITY));
                assert_eq!(attrs.max, Some(f64::INFINITY));
                assert!(attrs.nominal.is_some_and(f64::is_nan));
                assert_eq!(*start, Some(0.001));
            }
            k => panic!("{k:?}"),
        }
    }
}
