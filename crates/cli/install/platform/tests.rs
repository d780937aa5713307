//! Unit tests of the binary header reader: each format as its specification lays it out
//! (ELF, Mach-O thin and universal, PE), what is no binary, the refusal and its message,
//! and the running test binary itself read as this platform.

use super::*;

const X64: Platform = Platform {
    os: Os::Linux,
    cpu: Cpu::X64,
};
const LINUX_ARM64: Platform = Platform {
    os: Os::Linux,
    cpu: Cpu::Arm64,
};
const MAC_X64: Platform = Platform {
    os: Os::Macos,
    cpu: Cpu::X64,
};
const MAC_ARM64: Platform = Platform {
    os: Os::Macos,
    cpu: Cpu::Arm64,
};

/// The first 64 bytes of an ELF file as the ELF specification lays them out.
fn elf_head(little: bool, osabi: u8, machine: u16) -> Vec<u8> {
    let mut head = vec![0u8; 64];
    head[..4].copy_from_slice(b"\x7fELF");
    head[4] = 2; // ELFCLASS64
    head[5] = if little { 1 } else { 2 };
    head[6] = 1; // EV_CURRENT
    head[7] = osabi;
    let bytes = if little {
        machine.to_le_bytes()
    } else {
        machine.to_be_bytes()
    };
    head[18..20].copy_from_slice(&bytes);
    head
}

fn macho_head(cputype: u32) -> Vec<u8> {
    let mut head = vec![0xcf, 0xfa, 0xed, 0xfe];
    head.extend_from_slice(&cputype.to_le_bytes());
    head.extend_from_slice(&[0; 24]);
    head
}

fn universal_head(cputypes: &[u32]) -> Vec<u8> {
    let mut head = vec![0xca, 0xfe, 0xba, 0xbe];
    head.extend_from_slice(&u32::try_from(cputypes.len()).unwrap().to_be_bytes());
    for cputype in cputypes {
        head.extend_from_slice(&cputype.to_be_bytes());
        head.extend_from_slice(&[0; 16]); // subtype, offset, size, align
    }
    head
}

fn pe_head(machine: u16) -> Vec<u8> {
    let mut head = vec![0u8; 0x100];
    head[..2].copy_from_slice(b"MZ");
    head[0x3c..0x40].copy_from_slice(&0x80u32.to_le_bytes());
    head[0x80..0x84].copy_from_slice(b"PE\0\0");
    head[0x84..0x86].copy_from_slice(&machine.to_le_bytes());
    head
}

#[test]
fn each_format_names_its_platform() {
    let cases: [(&str, Vec<u8>, Option<Vec<_>>); 9] = [
        ("ELF x86-64", elf_head(true, 0, 62), Some(vec![X64])),
        (
            "ELF aarch64",
            elf_head(true, 0, 183),
            Some(vec![LINUX_ARM64]),
        ),
        (
            "GNU/Linux ABI",
            elf_head(true, 3, 183),
            Some(vec![LINUX_ARM64]),
        ),
        (
            "FreeBSD",
            elf_head(true, 9, 62),
            Some(vec![Platform {
                os: Os::OtherUnix,
                cpu: Cpu::X64,
            }]),
        ),
        (
            "big-endian ELF",
            elf_head(false, 0, 22),
            Some(vec![Platform {
                os: Os::Linux,
                cpu: Cpu::Other(22),
            }]),
        ),
        (
            "Mach-O arm64",
            macho_head(MACHO_ARM64),
            Some(vec![MAC_ARM64]),
        ),
        (
            "Mach-O x86-64",
            macho_head(MACHO_X86_64),
            Some(vec![MAC_X64]),
        ),
        (
            "universal",
            universal_head(&[MACHO_X86_64, MACHO_ARM64]),
            Some(vec![MAC_X64, MAC_ARM64]),
        ),
        (
            "PE arm64",
            pe_head(0xaa64),
            Some(vec![Platform {
                os: Os::Windows,
                cpu: Cpu::Arm64,
            }]),
        ),
    ];
    for (what, head, expected) in cases {
        assert_eq!(platforms_of(&head), expected, "{what}");
    }
}

#[test]
fn what_is_no_binary_is_not_judged() {
    let mut java = vec![0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 65];
    java.extend_from_slice(&[0; 32]);
    for (what, head) in [
        ("a script", b"#!/bin/sh\nexec pagent \"$@\"\n".to_vec()),
        ("empty", Vec::new()),
        ("ELF cut short", b"\x7fELF\x02\x01".to_vec()),
        ("a Java class file", java),
        ("MZ without a PE header", b"MZ not a program".to_vec()),
    ] {
        assert_eq!(platforms_of(&head), None, "{what}");
        assert_eq!(refusal(&head), None, "{what}");
    }
}

#[test]
fn only_another_platform_is_refused_and_the_message_says_what_to_do() {
    let this = match Platform::THIS {
        X64 => elf_head(true, 0, 62),
        LINUX_ARM64 => elf_head(true, 0, 183),
        MAC_X64 => macho_head(MACHO_X86_64),
        MAC_ARM64 => macho_head(MACHO_ARM64),
        other => panic!("no header for {other} in this test"),
    };
    assert_eq!(refusal(&this), None);
    let both = universal_head(&[MACHO_X86_64, MACHO_ARM64]);
    if Platform::THIS.os == Os::Macos {
        assert_eq!(refusal(&both), None, "a universal binary includes this Mac");
    } else {
        let why = refusal(&both).unwrap();
        assert!(why.contains("darwin-x64 and darwin-arm64"), "{why}");
    }
    let other = if Platform::THIS == LINUX_ARM64 {
        elf_head(true, 0, 62)
    } else {
        elf_head(true, 0, 183)
    };
    let why = refusal(&other).unwrap();
    assert!(
        why.contains(&format!("this pagent is for {}", Platform::THIS)),
        "{why}"
    );
    assert!(why.contains(env!("PAGENT_TARGET")), "{why}");
    assert!(why.contains("--binary"), "{why}");
}

#[test]
fn this_platform_matches_the_target_it_was_built_for() {
    let target = env!("PAGENT_TARGET");
    let expected = match target {
        "x86_64-unknown-linux-gnu" | "x86_64-unknown-linux-musl" => "linux-x64",
        "aarch64-unknown-linux-gnu" | "aarch64-unknown-linux-musl" => "linux-arm64",
        "aarch64-apple-darwin" => "darwin-arm64",
        "x86_64-apple-darwin" => "darwin-x64",
        "x86_64-pc-windows-msvc" | "x86_64-pc-windows-gnu" => "win32-x64",
        other => panic!("a target pagent is not released for: {other}"),
    };
    assert_eq!(Platform::THIS.npm(), expected);
}

#[test]
fn the_running_test_binary_is_read_as_this_platform() {
    let exe = std::env::current_exe().unwrap();
    let head = crate::install::files::read_head(&exe, HEAD).unwrap();
    assert_eq!(
        platforms_of(&head),
        Some(vec![Platform::THIS]),
        "{}",
        exe.display()
    );
}
