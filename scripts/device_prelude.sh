# Sourced (from the repository root) by the device scripts in bench/: the
# common start of a device call. Sets OUT (default /tmp/gi-out) and GI (the
# gi of .carry/bin.tar.xz, unpacked), puts CUDA's tools on PATH and writes the
# machine (date, GPUs, driver, cores) to $OUT/machine.txt.
OUT=${OUT:-/tmp/gi-out}
mkdir -p "$OUT"
[ -f .carry/bin.tar.xz ] && tar xJf .carry/bin.tar.xz -C .carry
export PATH=/usr/local/cuda/bin:$PATH
GI=$PWD/.carry/gi
{ date -u; nvidia-smi --query-gpu=index,name,driver_version --format=csv; nproc; } > "$OUT/machine.txt" 2>&1
