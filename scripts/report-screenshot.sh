#!/bin/sh
# report-screenshot.sh - check that a `tpplan report` renders in a real
# headless browser: generate the report of 22b on 8 GPUs of dgx-a100 (with
# a calibration imported from the nccl-tests sample), open index.html in
# Debian's chromium (headless) and take a 1400x2000 screenshot; fail when
# the screenshot is missing or nearly blank (a blank page compresses to a
# few KB).  Prints where the screenshot is.
#
# Not run by CI (chromium is large); run it by hand after changing the
# report writer (cli/report.c):
#
#     sh scripts/report-screenshot.sh [build/cli/tpplan] [OUTDIR]
#
# Installs chromium with apt-get when missing (needs root on Debian).
# Exits 0 ok, 1 check failed, 2 usage, 4 chromium missing / failed.
set -eu
cd "$(dirname "$0")/.."
BIN=${1:-build/cli/tpplan}
OUT=${2:-$(mktemp -d "${TMPDIR:-/tmp}/tpplan-shot.XXXXXX")}
[ -x "$BIN" ] || { echo "report-screenshot: $BIN not built (cmake --build build)" >&2; exit 2; }
case $OUT in /*) ;; *) OUT=$(pwd)/$OUT ;; esac
mkdir -p "$OUT"

if ! command -v chromium >/dev/null 2>&1; then
	echo "report-screenshot: installing chromium" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null ||
		{ echo "report-screenshot: cannot install chromium" >&2; exit 4; }
fi

"$BIN" calibrate --import tests/data/nccl-tests/all_reduce_perf.txt --group 8 \
	--out "$OUT/cal.yaml" >/dev/null
"$BIN" report --model 22b --cluster dgx-a100 --gpus 8 --calibration "$OUT/cal.yaml" \
	-o "$OUT/report"

SHOT=$OUT/screenshot.png
rm -f "$SHOT"
# --virtual-time-budget lets the images load before the capture
timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
	--virtual-time-budget=5000 --window-size=1400,2000 --screenshot="$SHOT" \
	"file://$OUT/report/index.html" >"$OUT/chromium.log" 2>&1 ||
	{ echo "report-screenshot: chromium failed (see $OUT/chromium.log)" >&2; exit 4; }

[ -s "$SHOT" ] || { echo "report-screenshot: no screenshot written" >&2; exit 1; }
sig=$(od -An -tx1 -N8 "$SHOT" | tr -s ' \n' ' ' | sed 's/^ //; s/ $//')
[ "$sig" = "89 50 4e 47 0d 0a 1a 0a" ] || { echo "report-screenshot: $SHOT is not a PNG" >&2; exit 1; }
size=$(wc -c <"$SHOT")
if [ "$size" -lt 60000 ]; then
	echo "report-screenshot: $SHOT is only $size bytes: the page looks blank" >&2
	exit 1
fi
echo "report-screenshot: ok: $SHOT ($size bytes), report in $OUT/report"
