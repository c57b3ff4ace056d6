//! Generates the gRPC code at build time, with a protoc from the crate
//! registry, so a fresh clone needs no system package.

fn main() {
    let protoc =
        protoc_bin_vendored::protoc_bin_path().expect("a vendored protoc for this platform");
    // SAFETY: the build script is single-threaded here.
    unsafe { std::env::set_var("PROTOC", protoc) };
    tonic_prost_build::compile_protos("proto/echo.proto").expect("proto/echo.proto compiles");
    println!("cargo:rerun-if-changed=proto/echo.proto");
}
