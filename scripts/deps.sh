#!/usr/bin/env bash
# Installs, with apt-get, the Debian packages that kube32's build and tests need and that are
# missing. Idempotent and quiet: when everything is present it only runs dpkg-query once.
# Add a package here when the code starts to need it, never by hand on one machine.
set -euo pipefail

PKGS=(
	cmake make gcc clang lld            # build: host code, sanitizers, wasm32 pods
	clang-format clang-tidy cppcheck    # make format-check, make lint
	libcmocka-dev                       # unit tests
	libcjson-dev                        # JSON (the same library ESP-IDF ships)
	libhttp-parser-dev                  # HTTP request parsing
	libmbedtls-dev                      # TLS
	zlib1g-dev                          # Content-Encoding: gzip of API answers
	libyaml-dev                         # manifests in kube32-cli
	libclang-rt-14-dev                  # ASan/UBSan/libFuzzer runtimes for clang
	wabt                                # wat2wasm for hand-written test modules
	python3 python3-kubernetes          # second real client for the e2e tests
	openssl curl                        # e2e helpers
	prometheus                          # e2e: a real Prometheus scrapes /metrics
	gcc-arm-none-eabi libnewlib-arm-none-eabi  # make mcu: the Cortex-M cross-build
	qemu-system-arm                     # make test-mcu: pods on an emulated Cortex-M4
	rustc libstd-rust-dev-wasm32        # the Rust pod example (apps/examples/rust, no_std wasm32)
)

missing=()
status=$(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "${PKGS[@]}" 2>/dev/null || true)
for p in "${PKGS[@]}"; do
	if ! grep -qE "^$p ii" <<<"$status"; then
		missing+=("$p")
	fi
done
# kubectl is not taken from Debian (its kubernetes-client is 1.20, too old for the e2e suite):
# the machine image ships kubectl 1.32; the e2e tests say plainly when it is missing.
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps: installing ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
