//! Just enough ELF reading to tell, without loading it, whether an FMU's binary can be loaded
//! here: a 64-bit little-endian x86-64 shared library that exports every required FMI 2.0
//! function (`cosim info`'s "Runs with cosim").

use super::ffi::REQUIRED_SYMBOLS;

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<usize> {
    usize::try_from(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?)).ok()
}

/// `Ok` when `bytes` is an x86-64 ELF shared library defining every symbol of
/// [`REQUIRED_SYMBOLS`]; else why not, e.g. "is not an ELF file", "does not export
/// fmi2DoStep". A library without section headers is accepted unchecked (only loading tells).
/// For Model Exchange (`model_exchange`) the common and Model Exchange functions are required,
/// the Co-Simulation ones are not.
pub(crate) fn check_fmi_library_as(bytes: &[u8], fmi3: bool, model_exchange: bool) -> Result<(), String> {
    let common: &[&str] = if fmi3 { super::ffi3::REQUIRED_SYMBOLS3 } else { REQUIRED_SYMBOLS };
    let required: Vec<&str> = if model_exchange {
        let me: &[&str] = if fmi3 { fmi_api::Fmi3Me::REQUIRED } else { fmi_api::Fmi2Me::REQUIRED };
        let cs_only = |s: &&str| super::ffi::co_simulation_only(s) || super::ffi3::co_simulation_only3(s);
        common.iter().copied().filter(|s| !cs_only(s)).chain(me.iter().copied()).collect()
    } else {
        common.to_vec()
    };
    let interface = if model_exchange { "common and Model Exchange" } else { "Co-Simulation" };
    let version = if fmi3 { "FMI 3.0" } else { "FMI 2.0" };
    if bytes.get(..4) != Some(b"\x7fELF") || bytes.len() < 64 {
        return Err("is not an ELF file (a Linux shared library)".into());
    }
    if bytes.get(4) != Some(&2) || bytes.get(5) != Some(&1) {
        return Err("is not a 64-bit little-endian ELF file".into());
    }
    let e_type = u16_at(bytes, 16).ok_or("is a truncated ELF file")?;
    let machine = u16_at(bytes, 18).ok_or("is a truncated ELF file")?;
    if machine != 62 {
        return Err(format!("is built for ELF machine {machine}, not x86-64 (62)"));
    }
    if e_type != 3 {
        return Err(format!("is not a shared library (ELF type {e_type}, not ET_DYN)"));
    }
    let truncated = || "is a truncated ELF file (section headers out of range)".to_owned();
    let shoff = u64_at(bytes, 0x28).ok_or_else(truncated)?;
    let shentsize = usize::from(u16_at(bytes, 0x3A).ok_or_else(truncated)?);
    let shnum = usize::from(u16_at(bytes, 0x3C).ok_or_else(truncated)?);
    if shoff == 0 || shnum == 0 {
        return Ok(());
    }
    let section = |k: usize| -> Option<(u32, usize, usize, usize, usize)> {
        let at = shoff.checked_add(k.checked_mul(shentsize)?)?;
        // sh_type, sh_offset, sh_size, sh_link, sh_entsize
        Some((
            u32_at(bytes, at + 4)?,
            u64_at(bytes, at + 0x18)?,
            u64_at(bytes, at + 0x20)?,
            u32_at(bytes, at + 0x28)? as usize,
            u64_at(bytes, at + 0x38)?,
        ))
    };
    const SHT_DYNSYM: u32 = 11;
    let mut defined = std::collections::HashSet::new();
    for k in 0..shnum {
        let (kind, offset, size, link, entsize) = section(k).ok_or_else(truncated)?;
        if kind != SHT_DYNSYM || entsize < 24 {
            continue;
        }
        let (_, str_offset, str_size, _, _) = section(link).ok_or_else(truncated)?;
        let strings = bytes.get(str_offset..str_offset.saturating_add(str_size)).ok_or_else(truncated)?;
        let symbols = bytes.get(offset..offset.saturating_add(size)).ok_or_else(truncated)?;
        for sym in symbols.chunks_exact(entsize) {
            let name = u32_at(sym, 0).unwrap_or(0) as usize;
            let shndx = u16_at(sym, 6).unwrap_or(0);
            if shndx == 0 {
                continue; // undefined: imported, not exported
            }
            let Some(rest) = strings.get(name..) else { continue };
            let end = rest.iter().position(|b| *b == 0).unwrap_or(rest.len());
            defined.insert(&rest[..end]);
        }
    }
    let missing: Vec<&str> = required.iter().copied().filter(|s| !defined.contains(s.as_bytes())).collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!("does not export {} (required {version} {interface} functions)", missing.join(", ")))
    }
}
