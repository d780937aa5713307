//! Which platform a binary is for, read from its first bytes, so that `pagent install`
//! never puts a binary in the hooks' place that cannot run where this pagent runs.
//!
//! The npm package picks the platform package by Node's `process.platform` and
//! `process.arch`, and `--binary` takes any path: a copied `node_modules`, a build for the
//! other Mac, or an arm64 file on an x86-64 machine would otherwise be installed without a
//! word, and every hook call would then fail (open, so silently: the loop just never
//! runs). The headers are read as their formats define them (ELF's `e_machine`, Mach-O's
//! `cputype`, including universal files, PE's `Machine`), not guessed from file names.
//! A file in none of these formats (a launcher script, say) is not judged: only a binary
//! known to be for another platform is refused.
//!
//! [`Platform::THIS`] is the platform this pagent was compiled for, from `cfg`; its
//! [`npm`](Platform::npm) name is the one `scripts/release.sh` and `npm/pagent` use, and
//! a unit test ties both to the target triple `pagent --version` prints.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    Linux,
    Macos,
    Windows,
    /// An ELF binary whose header names another system (FreeBSD, ...).
    OtherUnix,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cpu {
    X64,
    Arm64,
    X86,
    Arm,
    /// Anything else, by the format's own number for it.
    Other(u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Platform {
    pub os: Os,
    pub cpu: Cpu,
}

impl Platform {
    /// The platform this pagent was built for.
    pub const THIS: Platform = Platform {
        os: if cfg!(target_os = "macos") {
            Os::Macos
        } else if cfg!(windows) {
            Os::Windows
        } else if cfg!(target_os = "linux") {
            Os::Linux
        } else {
            Os::OtherUnix
        },
        cpu: if cfg!(target_arch = "x86_64") {
            Cpu::X64
        } else if cfg!(target_arch = "aarch64") {
            Cpu::Arm64
        } else if cfg!(target_arch = "x86") {
            Cpu::X86
        } else if cfg!(target_arch = "arm") {
            Cpu::Arm
        } else {
            Cpu::Other(0)
        },
    };

    /// The platform's npm name (`process.platform`-`process.arch`): `linux-x64`,
    /// `darwin-arm64`, `win32-x64`, ...; the package `pagent-<name>` holds its binary.
    pub fn npm(self) -> String {
        let os = match self.os {
            Os::Linux => "linux",
            Os::Macos => "darwin",
            Os::Windows => "win32",
            Os::OtherUnix => "unix",
        };
        let cpu = match self.cpu {
            Cpu::X64 => "x64".to_owned(),
            Cpu::Arm64 => "arm64".to_owned(),
            Cpu::X86 => "ia32".to_owned(),
            Cpu::Arm => "arm".to_owned(),
            Cpu::Other(n) => format!("cpu{n}"),
        };
        format!("{os}-{cpu}")
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.npm())
    }
}

/// How many leading bytes [`platforms_of`] needs at most (a PE header may start late).
pub const HEAD: usize = 4096;

/// The platforms a binary runs on, from its first bytes: one for ELF, PE and thin
/// Mach-O, each architecture of a universal Mach-O; `None` when the bytes are in none of
/// these formats (or cut short).
pub fn platforms_of(head: &[u8]) -> Option<Vec<Platform>> {
    if head.starts_with(b"\x7fELF") {
        return elf(head).map(|p| vec![p]);
    }
    if head.starts_with(b"MZ") {
        return pe(head).map(|p| vec![p]);
    }
    match head.get(..4)? {
        // MH_MAGIC_64 / MH_MAGIC, little-endian (every Mac since the PowerPC).
        [0xcf, 0xfa, 0xed, 0xfe] | [0xce, 0xfa, 0xed, 0xfe] => {
            let cputype = u32::from_le_bytes(head.get(4..8)?.try_into().ok()?);
            Some(vec![macho(cputype)])
        }
        // FAT_MAGIC / FAT_MAGIC_64, big-endian: a universal binary.
        [0xca, 0xfe, 0xba, 0xbe] | [0xca, 0xfe, 0xba, 0xbf] => universal(head),
        _ => None,
    }
}

fn elf(head: &[u8]) -> Option<Platform> {
    let little = match head.get(5)? {
        1 => true,
        2 => false,
        _ => return None,
    };
    let bytes: [u8; 2] = head.get(18..20)?.try_into().ok()?;
    let machine = if little {
        u16::from_le_bytes(bytes)
    } else {
        u16::from_be_bytes(bytes)
    };
    // EI_OSABI: Linux binaries say System V (0) or GNU/Linux (3).
    let os = match head.get(7)? {
        0 | 3 => Os::Linux,
        _ => Os::OtherUnix,
    };
    let cpu = match machine {
        62 => Cpu::X64,
        183 => Cpu::Arm64,
        3 => Cpu::X86,
        40 => Cpu::Arm,
        n => Cpu::Other(u32::from(n)),
    };
    Some(Platform { os, cpu })
}

/// `CPU_TYPE_X86`, `CPU_TYPE_ARM`, and with `CPU_ARCH_ABI64` their 64-bit kinds.
const MACHO_X86: u32 = 7;
const MACHO_ARM: u32 = 12;
const MACHO_X86_64: u32 = 0x0100_0000 | MACHO_X86;
const MACHO_ARM64: u32 = 0x0100_0000 | MACHO_ARM;

fn macho(cputype: u32) -> Platform {
    let cpu = match cputype {
        MACHO_X86_64 => Cpu::X64,
        MACHO_ARM64 => Cpu::Arm64,
        MACHO_X86 => Cpu::X86,
        MACHO_ARM => Cpu::Arm,
        n => Cpu::Other(n),
    };
    Platform { os: Os::Macos, cpu }
}

fn universal(head: &[u8]) -> Option<Vec<Platform>> {
    let be = |at: usize| -> Option<u32> {
        Some(u32::from_be_bytes(head.get(at..at + 4)?.try_into().ok()?))
    };
    let wide = head.get(3)? == &0xbf;
    let count = usize::try_from(be(4)?).ok()?;
    // A Java class file starts with the same magic, then its version (45 or more): a
    // universal binary has a handful of architectures.
    if count == 0 || count > 16 {
        return None;
    }
    let entry = if wide { 32 } else { 20 };
    (0..count)
        .map(|i| be(8 + i * entry).map(macho))
        .collect::<Option<Vec<_>>>()
}

fn pe(head: &[u8]) -> Option<Platform> {
    let at = usize::try_from(u32::from_le_bytes(head.get(0x3c..0x40)?.try_into().ok()?)).ok()?;
    if head.get(at..at.checked_add(4)?)? != b"PE\0\0" {
        return None;
    }
    let machine = u16::from_le_bytes(head.get(at + 4..at + 6)?.try_into().ok()?);
    let cpu = match machine {
        0x8664 => Cpu::X64,
        0xaa64 => Cpu::Arm64,
        0x14c => Cpu::X86,
        0x1c4 => Cpu::Arm,
        n => Cpu::Other(u32::from(n)),
    };
    Some(Platform {
        os: Os::Windows,
        cpu,
    })
}

/// Why a binary may not be installed here, or `None` when it may: it is for this
/// platform (a universal file that includes it counts), or in no format known here.
pub fn refusal(head: &[u8]) -> Option<String> {
    let platforms = platforms_of(head)?;
    if platforms.contains(&Platform::THIS) {
        return None;
    }
    let names: Vec<String> = platforms.iter().map(|p| p.npm()).collect();
    Some(format!(
        "is a binary for {}, and this pagent is for {} ({}): the hooks could not run it here. Pass --binary a {} build, or leave --binary out to install this pagent",
        names.join(" and "),
        Platform::THIS,
        env!("PAGENT_TARGET"),
        Platform::THIS,
    ))
}

#[cfg(test)]
mod tests;
