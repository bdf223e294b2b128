#!/usr/bin/env bash
# Packs this machine's elastix and transformix with the shared libraries they
# load (as ldd lists them), so that run_elastix.sh can run them on a machine
# without elastix (the GPU machine): there, unpack and set ELASTIX_DIR to the
# folder.
#
#   bench/registration/pack_elastix.sh [OUT.tar.xz]    (default: elastix-bundle.tar.xz)
#
# glibc's own libraries (libc, libm, libpthread, libdl, librt, the loader...)
# stay behind: they must match the target's loader, and every Linux has them;
# the target's glibc must be at least as new as this machine's. Everything
# else (ITK, libstdc++, libgomp, HDF5, ...) is carried. xz keeps the tarball
# under ~50 MB (the two 24 MB binaries are mostly the same ITK code).
#
# REGISTER_ONLY=1 packs elastix alone, for a device whose carry limit the full
# bundle exceeds (run_elastix.sh STAGE=register there; transformix then runs
# here, STAGE=score): transformix stays behind, and ICU's 31 MB data library
# (libicudata, pulled in through libxml2) is replaced by a stub that exports
# its one symbol, icudt72_dat, with no data. elastix never converts text with
# ICU; a registration with the stub gives the same TransformParameters as with
# the real library (checked on the Colin27 pair before it was used).
set -euo pipefail

tarball=$(realpath -m "${1:-elastix-bundle.tar.xz}")
elastix=$(command -v elastix || true)
transformix=$(command -v transformix || true)
[ -n "$elastix" ] && [ -n "$transformix" ] || { echo "$0: elastix/transformix not on PATH" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bundle=$work/elastix
mkdir -p "$bundle"
programs=("$elastix" "$transformix")
[ "${REGISTER_ONLY:-0}" = 1 ] && programs=("$elastix")
cp -L "${programs[@]}" "$bundle/"

# ldd lists the whole dependency closure; keep the resolved paths outside glibc.
is_glibc() {
  case "$(basename "$1")" in
    libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | libresolv.so.* | libutil.so.* | \
      libnsl.so.* | libanl.so.* | libmvec.so.* | libBrokenLocale.so.* | libnss_* | ld-linux* | ld64.so.*) return 0 ;;
  esac
  return 1
}
ldd "${programs[@]}" | awk '/=> \// { print $3 }' | sort -u | while read -r lib; do
  if ! is_glibc "$lib"; then cp -L "$lib" "$bundle/"; fi
done

if [ "${REGISTER_ONLY:-0}" = 1 ]; then
  for data in "$bundle"/libicudata.so.*; do
    [ -e "$data" ] || continue
    symbol=$(nm -D --defined-only "$data" | awk '/ R icudt/ { print $3; exit }')
    echo "const char ${symbol}[64] = {0};" >"$work/icu_stub.c"
    gcc -shared -fPIC -o "$data" -Wl,-soname,"$(basename "$data")" "$work/icu_stub.c"
  done
fi

version=$("$elastix" --version 2>/dev/null | head -1 || true)
{
  echo "$version"
  echo "packed on $(hostname) from $elastix and $transformix"
  echo "glibc here: $(ldd --version | head -1)"
  echo "use: ELASTIX_DIR=\$PWD/elastix bench/registration/run_elastix.sh PAIR_DIR OUT_DIR [THREADS]"
} >"$bundle/BUNDLE.txt"

# A check that the bundle works on its own libraries before it travels.
LD_LIBRARY_PATH=$bundle "$bundle/elastix" --version >/dev/null
[ "${REGISTER_ONLY:-0}" = 1 ] || LD_LIBRARY_PATH=$bundle "$bundle/transformix" --version >/dev/null

tar -C "$work" -cJf "$tarball" elastix
echo "$tarball: $(du -h "$tarball" | cut -f1), $(ls "$bundle" | wc -l) files"
