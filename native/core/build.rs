//! Compiles the decompressor of libdeflate 1.26 (libdeflate/, MIT; the sources of the
//! libdeflate-sys 1.26.1 crate, decompression only), the fast path of gzip and zlib values
//! (src/deflate.rs). Three changes, each marked "cqlsh-ext:", only narrow what it accepts to
//! streams zlib decodes the same way; everything it refuses is decoded by zlib (src/libz.rs).

fn main() {
    let files = [
        "libdeflate/lib/deflate_decompress.c",
        "libdeflate/lib/gzip_decompress.c",
        "libdeflate/lib/zlib_decompress.c",
        "libdeflate/lib/crc32.c",
        "libdeflate/lib/adler32.c",
        "libdeflate/lib/utils.c",
        "libdeflate/lib/x86/cpu_features.c",
        "libdeflate/lib/arm/cpu_features.c",
    ];
    let mut build = cc::Build::new();
    build.files(files).include("libdeflate").warnings(false);
    build.compile("cqlsh_ext_libdeflate");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=libdeflate");
}
