//! What a file given to `cosim run` is (an FMU, an SSP or a system file), decided by its
//! content ([`detect`]), not by its name. Below the front ends: the system file reader uses it
//! to name an FMU or SSP given where a system file was expected.

use crate::error::{MasterError, Result};
use std::io::Read;
use std::path::Path;

/// What `cosim run` was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// A zip archive with `modelDescription.xml`: an FMU, run as one instance ([`crate::single`]).
    Fmu,
    /// A zip archive with `SystemStructure.ssd`, or an XML file whose root element is
    /// `ssd:SystemStructureDescription`: an SSP (System Structure and Parameterization).
    Ssp,
    /// Anything else: a system file (TOML).
    Toml,
}

impl Input {
    /// How it is read, for the line `cosim run` prints ("reading X as …").
    pub fn describe(self) -> &'static str {
        match self {
            Self::Fmu => "an FMU (FMI 2.0 or 3.0 Co-Simulation)",
            Self::Ssp => "an SSP (System Structure and Parameterization)",
            Self::Toml => "a system file (TOML)",
        }
    }
}

/// Decides what the file at `path` is by its content: a zip archive holding
/// `modelDescription.xml` is an FMU, one holding `SystemStructure.ssd` an SSP (a zip with
/// neither is an error naming what it holds); a text file whose XML root element is
/// `SystemStructureDescription` (any prefix, normally `ssd:`) is an SSP's `.ssd`; anything else
/// is read as TOML (whose parser then names any problem).
pub fn detect(path: &Path) -> Result<Input> {
    let io = |source| MasterError::Io { path: path.to_path_buf(), source };
    crate::fmu::archive::regular_file(path, "cosim runs a system file (TOML), an FMU or an SSP")?;
    let mut file = std::fs::File::open(path).map_err(io)?;
    let mut head = Vec::with_capacity(4096);
    file.by_ref().take(4096).read_to_end(&mut head).map_err(io)?;
    if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
        let mut zip = zip::ZipArchive::new(std::fs::File::open(path).map_err(io)?).map_err(|e| MasterError::Fmu {
            path: path.to_path_buf(),
            message: format!("a zip archive that cannot be read: {e}"),
        })?;
        let names: Vec<&str> = zip.file_names().collect();
        if names.contains(&"modelDescription.xml") {
            drop(names);
            // Named before "reading X as an FMU (FMI 2.0 Co-Simulation)" is announced.
            if let Some(v) = fmi_version(&mut zip).filter(|v| v != "2.0" && !v.starts_with("3.")) {
                return Err(MasterError::Fmu {
                    path: path.to_path_buf(),
                    message: format!(
                        "modelDescription.xml: fmiVersion=\"{v}\": an FMI {v} FMU; only FMI 2.0 and 3.0 are supported \
                         (cosim runs FMI 2.0 and FMI 3.0 Co-Simulation FMUs)"
                    ),
                });
            }
            return Ok(Input::Fmu);
        }
        if names.contains(&"SystemStructure.ssd") {
            return Ok(Input::Ssp);
        }
        let mut shown: Vec<&str> = names.iter().copied().take(8).collect();
        shown.sort_unstable();
        return Err(MasterError::Unsupported {
            path: path.to_path_buf(),
            message: format!(
                "a zip archive with neither modelDescription.xml (an FMU) nor SystemStructure.ssd (an SSP) at its \
                 root; it holds: {}{}",
                shown.join(", "),
                if names.len() > shown.len() { ", …" } else { "" }
            ),
        });
    }
    if xml_root(&head).is_some_and(|name| name.rsplit(':').next() == Some("SystemStructureDescription")) {
        return Ok(Input::Ssp);
    }
    Ok(Input::Toml)
}

/// The `fmiVersion` attribute of the root element of an archive's `modelDescription.xml` (read
/// from its first 64 KiB), if it can be read.
fn fmi_version<R: std::io::Read + std::io::Seek>(zip: &mut zip::ZipArchive<R>) -> Option<String> {
    let mut head = Vec::new();
    zip.by_name("modelDescription.xml").ok()?.take(64 * 1024).read_to_end(&mut head).ok()?;
    let text = String::from_utf8_lossy(&head);
    let mut reader = quick_xml::Reader::from_str(&text);
    loop {
        match reader.read_event() {
            Ok(quick_xml::events::Event::Start(e) | quick_xml::events::Event::Empty(e)) => {
                let a = e.try_get_attribute("fmiVersion").ok()??;
                return a.unescape_value().ok().map(|v| v.trim().to_owned());
            }
            Ok(quick_xml::events::Event::Eof) | Err(_) => return None,
            Ok(_) => {}
        }
    }
}

/// The name of the root element of an XML document starting with `head` (after a BOM, the XML
/// declaration, processing instructions, comments and a DOCTYPE), if it looks like XML.
fn xml_root(head: &[u8]) -> Option<&str> {
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        // Cut inside a multi-byte character at the 4 KiB boundary.
        Err(e) => std::str::from_utf8(&head[..e.valid_up_to()]).ok()?,
    };
    let mut rest = text.trim_start_matches('\u{feff}');
    loop {
        rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix("<?") {
            rest = &r[r.find("?>")? + 2..];
        } else if let Some(r) = rest.strip_prefix("<!--") {
            rest = &r[r.find("-->")? + 3..];
        } else if let Some(r) = rest.strip_prefix("<!") {
            rest = &r[r.find('>')? + 1..];
        } else {
            let r = rest.strip_prefix('<')?;
            let end = r.find(|c: char| c.is_whitespace() || c == '>' || c == '/').unwrap_or(r.len());
            return Some(&r[..end]).filter(|n| !n.is_empty());
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    #[test]
    fn the_xml_root_element_is_found_after_prologue_and_comments() {
        let ssd = "\u{feff}<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- a comment -->\n\
                   <ssd:SystemStructureDescription xmlns:ssd=\"http://ssp-standard.org/SSP1/SystemStructureDescription\">";
        assert_eq!(xml_root(ssd.as_bytes()), Some("ssd:SystemStructureDescription"));
        assert_eq!(xml_root(b"<fmiModelDescription/>"), Some("fmiModelDescription"));
        assert_eq!(xml_root(b"[simulation]\nstop = 1"), None);
        assert_eq!(xml_root(b"<?xml version=\"1.0\""), None, "cut prologue");
    }

    #[test]
    fn detection_is_by_content() {
        let dir = std::env::temp_dir().join(format!("cosim-detect-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let zip_with = |name: &str, entry: &str| {
            let p = dir.join(name);
            let mut z = zip::ZipWriter::new(std::fs::File::create(&p).unwrap());
            z.start_file(entry, zip::write::SimpleFileOptions::default()).unwrap();
            std::io::Write::write_all(&mut z, b"<x/>").unwrap();
            z.finish().unwrap();
            p
        };
        assert_eq!(detect(&zip_with("a.toml", "modelDescription.xml")).unwrap(), Input::Fmu);
        assert_eq!(detect(&zip_with("b.fmu", "SystemStructure.ssd")).unwrap(), Input::Ssp);
        let e = detect(&zip_with("c.fmu", "readme.txt")).unwrap_err().to_string();
        assert!(e.contains("c.fmu") && e.contains("neither modelDescription.xml") && e.contains("readme.txt"), "{e}");
        let ssd = dir.join("d.xml");
        std::fs::write(&ssd, "<?xml version=\"1.0\"?>\n<ssd:SystemStructureDescription version=\"1.0\"/>").unwrap();
        assert_eq!(detect(&ssd).unwrap(), Input::Ssp);
        let toml = dir.join("e.fmu");
        std::fs::write(&toml, "[simulation]\nstop = 1.0\n").unwrap();
        assert_eq!(detect(&toml).unwrap(), Input::Toml);
        assert!(matches!(detect(&dir.join("missing")), Err(MasterError::Io { .. })));
        // An SSD without a system: the SSP reader names what is missing.
        let e = crate::ssp::read_in(&ssd, &crate::host::Host::default()).unwrap_err().to_string();
        assert!(e.contains("d.xml"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
