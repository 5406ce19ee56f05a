//! Finds the installed DPDK with pkg-config, generates bindings with bindgen
//! and compiles the C shim for DPDK's `static inline` functions.

use std::env;
use std::path::PathBuf;

#[path = "build/version.rs"]
mod version;

fn main() {
    for (name, _) in version::CFGS {
        println!("cargo::rustc-check-cfg=cfg({name})");
    }
    let dpdk = pkg_config::Config::new()
        .probe("libdpdk")
        .unwrap_or_else(|e| panic!("DPDK not found by pkg-config: install dpdk-dev and libdpdk-dev (make deps): {e}"));
    let found = match version::check(&dpdk.version) {
        Ok((found, warning)) => {
            if let Some(warning) = warning {
                println!("cargo::warning={warning}");
            }
            found
        }
        Err(why) => panic!("{why}"),
    };
    for cfg in version::cfgs(found) {
        println!("cargo::rustc-cfg={cfg}");
    }
    println!("cargo::rustc-env=DPDK_BUILT_ON={}", dpdk.version);
    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap());
    std::fs::write(
        out_dir.join("release.rs"),
        format!("pub const RELEASE: u32 = {};\n", found.year * 100 + found.month),
    )
    .expect("write release.rs");
    println!("cargo::rerun-if-env-changed=PKG_CONFIG_PATH");

    // DPDK's cflags carry `-include rte_config.h` and `-march=...`: both the
    // shim and bindgen must see the same configuration as the libraries.
    let flags = dpdk_cflags();

    let mut shim = cc::Build::new();
    shim.file("csrc/shim.c").opt_level(3).warnings(true);
    for f in &flags {
        shim.flag(f);
    }
    shim.compile("dpdk_shim");

    let bindings = bindgen::Builder::default()
        .header("csrc/wrapper.h")
        .clang_args(&flags)
        .allowlist_function("rte_.*|shim_.*|pthread_join")
        .allowlist_type("rte_.*")
        .allowlist_var("RTE_.*|shim_.*|EINVAL|ENOENT|ENOMEM|ENOSPC|ENOTSUP|ESRCH|EALREADY")
        // Packed-and-aligned types bindgen cannot lay out; l3fwd-rs reads
        // them as bytes.
        .opaque_type("rte_l2tpv2_combined_msg_hdr|rte_arp_hdr|rte_arp_ipv4|rte_gtp_psc_generic_hdr")
        .derive_default(true)
        .layout_tests(false)
        .generate_comments(false)
        .generate()
        .expect("bindgen could not generate DPDK bindings");
    let out = PathBuf::from(env::var("OUT_DIR").unwrap()).join("bindings.rs");
    bindings.write_to_file(out).expect("write bindings");

    println!("cargo:rerun-if-changed=csrc");
}

/// `pkg-config --cflags libdpdk`: the pkg-config crate keeps only include
/// paths and defines, not `-include` or `-march`.
fn dpdk_cflags() -> Vec<String> {
    let out = std::process::Command::new("pkg-config")
        .args(["--cflags", "libdpdk"])
        .output()
        .expect("run pkg-config");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}
