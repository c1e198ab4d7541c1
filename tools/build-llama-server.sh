#!/usr/bin/env bash
# Build llama-server from the llama.cpp sources vendored in the llama-cpp-python sdist (PyPI is
# reachable where GitHub is not). ~13 min on 2 idle cores, 25–33 min on busy ones; 19 MB binary.
#   tools/build-llama-server.sh [PREFIX]   → PREFIX/bin/llama-server (default build/llama.cpp)
# Flags: no libcurl (no model downloads), the web UI off (by default it fetches UI assets at
# build time), GGML_NATIVE off (a binary not tied to this exact CPU), static.
# LLAMA_CPU=avx2 (default): AVX, AVX2, FMA, F16C on (x86-64-v3: Intel since 2013, AMD since
# 2015) — about 3× the tokens/s of the baseline. LLAMA_CPU=baseline: none of them, any x86-64;
# the shipped recordings were made with that build (docs/local-models.md), so reproducing them
# byte for byte needs it.
set -euo pipefail
PREFIX="${1:-build/llama.cpp}"
VERSION="0.3.36"
case "${LLAMA_CPU:-avx2}" in
  avx2) CPU_FLAGS="-DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON" ;;
  baseline) CPU_FLAGS="" ;;
  *) echo "LLAMA_CPU must be avx2 or baseline" >&2; exit 2 ;;
esac
mkdir -p "$PREFIX"
PREFIX="$(cd "$PREFIX" && pwd)"
SRC="$PREFIX/src"
if [ ! -d "$SRC/llama_cpp_python-$VERSION" ]; then
  mkdir -p "$SRC"
  # pip reads the sdist's metadata with --no-deps only (about a minute); nothing is installed.
  python3 -m pip download --quiet --no-deps --no-binary :all: "llama-cpp-python==$VERSION" -d "$SRC"
  tar -xzf "$SRC/llama_cpp_python-$VERSION.tar.gz" -C "$SRC"
fi
cmake -S "$SRC/llama_cpp_python-$VERSION/vendor/llama.cpp" -B "$PREFIX" \
  -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DGGML_NATIVE=OFF \
  -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF -DBUILD_SHARED_LIBS=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF $CPU_FLAGS > "$PREFIX/cmake.log"
cmake --build "$PREFIX" --target llama-server -j "$(nproc)" > "$PREFIX/build.log"
"$PREFIX/bin/llama-server" --version
