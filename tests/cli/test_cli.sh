#!/bin/sh
# test_cli.sh - end-to-end tests of the tpplan command: exit codes and the
# message that goes with each (usage, input and infeasible errors), the
# README example, the JSON plan (parsed with jq), --layout round trips, and
# `tpplan validate`.
#
# usage: sh tests/cli/test_cli.sh PATH/TO/tpplan REPO_ROOT
# Needs jq (scripts/deps.sh installs it).  Exits 1 if any case failed.
set -u

# shellcheck source=tests/cli/common.sh
. "$(dirname "$0")/common.sh"
cli_setup test_cli "$@"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/tpplan-cli.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT HUP INT TERM
OUT=$TMP/out
ERR=$TMP/err
fails=0
cases=0

fail() {
	fails=$((fails + 1))
	echo "FAIL: $*" >&2
}

# run CMD...: run with stdout/stderr captured, status in $rc
run() {
	"$@" >"$OUT" 2>"$ERR"
	rc=$?
}

# expect NAME RC STREAM NEEDLE CMD...: exit status RC and NEEDLE (fixed
# string) in STREAM (out, err or any).
expect() {
	name=$1 want=$2 stream=$3 needle=$4
	shift 4
	cases=$((cases + 1))
	run "$@"
	if [ "$rc" -ne "$want" ]; then
		fail "$name: exit $rc, expected $want: $*"
		sed 's/^/    stderr: /' "$ERR" | head -n 20 >&2
		return 1
	fi
	case $stream in
	out) files=$OUT ;;
	err) files=$ERR ;;
	*) files="$OUT $ERR" ;;
	esac
	# shellcheck disable=SC2086
	if ! cat $files | grep -qF -e "$needle"; then
		fail "$name: '$needle' not in std$stream: $*"
		sed 's/^/    stderr: /' "$ERR" | head -n 20 >&2
		return 1
	fi
	echo "ok: $name"
	return 0
}

# has NAME STREAM NEEDLE: one more substring in the last run's output
has() {
	case $2 in out) f=$OUT ;; *) f=$ERR ;; esac
	grep -qF -e "$3" "$f" || fail "$1: '$3' not in std$2"
}

# jcheck NAME FILE FILTER: jq -e FILTER holds on FILE
jcheck() {
	jq -e "$3" "$2" >/dev/null 2>"$TMP/jqerr" ||
		{ fail "$1: jq -e '$3' is false or failed: $(cat "$TMP/jqerr")"; return 1; }
}

# ---- usage and input errors --------------------------------------------------
expect help 0 out "exit codes" "$BIN" --help
has help out "2  usage error"
has help out "3  input or configuration error"
expect no-args 2 err "usage: tpplan" "$BIN"
# every short form getopt takes is in the help, beside its long one, and
# works (the help listed only the long ones)
expect help-short-plan 0 out "  -m, --model NAME|FILE" "$BIN" plan --help
has help-short-plan out "  -c, --cluster NAME|FILE"
has help-short-plan out "  -h, --help"
has help-short-plan out "--top K                    show the K best layouts (default 5, at most 64)"
expect help-short-report 0 out "  -o, --out DIR" "$BIN" report --help
has help-short-report out "  -m, --model NAME|FILE"
expect help-short-calibrate 0 out "  -o, --out FILE" "$BIN" calibrate --help
expect short-forms-plan 0 out "best layouts" "$BIN" -m 125m -c dgx-a100 --gpus 8 --top 1
expect unknown-option 2 err "unknown option '--frobnicate'" \
	"$BIN" --frobnicate --model 175b --cluster dgx-a100
# an abbreviation of several options names them (getopt_long refused it
# as "unknown"); a unique one is taken, as getopt_long does
expect ambiguous-option 2 err "ambiguous option '--m': --model, --mem-reserve-gib, --max-mbs, --max-cp" \
	"$BIN" --m 175b --cluster dgx-a100
# one documented option and test hooks: not a list of one
expect ambiguous-option-hooks 2 err "ambiguous option '--w': write it in full (--warmup)" "$BIN" exec --w
expect ambiguous-option-exec 2 err "ambiguous option '--la': --layout, --layers (try \`tpplan exec --help\`)" \
	"$BIN" exec --la 2
expect unique-prefix 0 out "175b (GPT-3 175B) on dgx-a100" "$BIN" --mod 175b --cluster dgx-a100 --gpus 64 --analytic
# an unknown letter inside a word names the letter, not the word before it;
# a long option given a value it does not take is named as written, even
# when a later cluster holds its short letter; a non-ASCII letter by its word
expect unknown-short-option 2 err "unknown option '-x'" \
	"$BIN" --model 175b --json -x7 --cluster dgx-a100
expect long-option-value 2 err "unknown option '--help=1'" \
	"$BIN" --help=1 -cdgx-h100
expect unknown-non-ascii 2 err "unknown option '-é'" "$BIN" --json -é
expect bad-gpus 2 err "--gpus" "$BIN" --model 175b --cluster dgx-a100 --gpus abc
has bad-gpus err "abc"
expect bad-precision 2 err "--precision" \
	"$BIN" --model 175b --cluster dgx-a100 --precision fp4
has bad-precision err "fp4"
expect missing-cluster 2 err "--cluster" "$BIN" --model 175b
expect unknown-model 3 err "unknown model" "$BIN" --model no-such-model --cluster dgx-a100
expect cluster-not-found 3 err "not found; tried:" \
	"$BIN" --model 175b --cluster no-such-cluster
has cluster-not-found err "topologies/no-such-cluster.yaml"
# a near miss is named
expect model-did-you-mean 3 err "did you mean 'llama3-70b'?" "$BIN" --model llama3-70B --cluster dgx-a100
expect cluster-did-you-mean 3 err "did you mean 'dgx-h100'?" \
	"$BIN" --model 175b --cluster dgx-h10
# a path: the nearest file of its own directory, as a path
mkdir -p "$TMP/mycl" && cp "$ROOT/topologies/dgx-h100.yaml" "$TMP/mycl/my-h100.yaml"
expect cluster-did-you-mean-path 3 err "did you mean '$TMP/mycl/my-h100.yaml'?" \
	"$BIN" --model 175b --cluster "$TMP/mycl/my-h100.yml"

bad=$ROOT/tests/data/bad/cluster-negative-bw.yaml
where=$(sed -n '1s/^# expect: \([0-9]*:[0-9]*\):.*/\1/p' "$bad")
[ -n "$where" ] || fail "bad-cluster-yaml: no '# expect: LINE:COL:' line in $bad"
if expect bad-cluster-yaml 3 err "cluster-negative-bw.yaml:$where: error:" \
	"$BIN" --model 175b --cluster "$bad"; then
	grep -q '^ *\^$' "$ERR" || fail "bad-cluster-yaml: no caret line"
	has bad-cluster-yaml err "bw_GBps: -300"
fi

# ---- listing and the README example --------------------------------------------
if expect models 0 out "175b" "$BIN" models; then
	for m in 175b llama3-70b 1t; do
		grep -q "^$m " "$OUT" || fail "models: '$m' not listed"
	done
fi

cases=$((cases + 1))
(cd "$ROOT" && "$BIN" --model 175b --cluster dgx.yaml >"$OUT" 2>"$ERR")
rc=$?
if [ "$rc" -ne 0 ]; then
	fail "readme-example: exit $rc"
else
	has readme-example out "best layouts"
	has readme-example out "why the others lost"
	has readme-example out "on dgx, 1024 GPUs"
	echo "ok: readme-example"
fi

# The outputs the README quotes are this build's: each quote (whitespace
# squeezed, as the README wraps it) is in the README and in the output of
# its command, so that a change to the model that moves a number fails
# here until the README says the new one (four had gone stale).
# readme_quote NAME RC QUOTE CMD...
cat "$ROOT/README.md" "$ROOT/costmodel/README.md" | tr -s ' \n' '  ' >"$TMP/readme-flat"
readme_quote() {
	name=$1 want=$2 quote=$3
	shift 3
	cases=$((cases + 1))
	run "$@"
	if [ "$rc" -ne "$want" ]; then
		fail "$name: exit $rc, expected $want: $*"
	elif ! grep -qF -e "$quote" "$TMP/readme-flat"; then
		fail "$name: the README does not quote '$quote'"
	elif ! cat "$OUT" "$ERR" | tr -s ' \n' '  ' | grep -qF -e "$quote"; then
		fail "$name: '$quote' (README) is not in the output of: $*"
	else
		echo "ok: $name"
	fi
}
# costmodel/README.md, TP overlap: Megatron's GPT-3 175B H100 strong scaling
for q in 96:1:47.3 4608:1:39.6 96:0:47.0 4608:0:39.5; do
	g=${q%%:*} ov=${q#*:} ov=${ov%%:*} mfu=${q##*:}
	readme_quote "readme-quote-tp-overlap-$g-$ov" 0 "MFU $mfu%" "$BIN" --model 175b --cluster dgx-h100 --gpus "$g" \
		--global-batch 1152 --layout "tp=8,pp=12,sp=1,mbs=1,schedule=interleaved,tp_overlap=$ov" --top 1
done
readme_quote readme-quote-fewer 0 "Fewer GPUs: 512 of the 576 plan a 31.4% shorter step (0.350450 s against 0.511034 s):" \
	"$BIN" --model llama3-8b --cluster gb200-nvl72 --gpus 576
has readme-quote-fewer out "Plan it with --gpus 512 (--nodes 128) --layout tp=1,"
readme_quote readme-quote-fewer-tie 0 "Fewer GPUs: 512 of the 576 plan a step within the 4% a measurement varies (2.983 s against 3.017 s, 1.1% shorter) and free 64 GPUs" \
	"$BIN" --model llama3-70b --cluster gb200-nvl72 --gpus 576
readme_quote readme-quote-fewer-fits 1 "with 4096 of the 4480 GPUs a layout fits, 0.303732 s per step (" \
	"$BIN" --model llama3-8b --cluster dgx-a100 --gpus 4480
has readme-quote-fewer-fits err "): --gpus 4096 (--nodes 512) --layout "
readme_quote readme-quote-train 0 "Training on 300B tokens (--train-tokens): 95368 steps of 3.146M tokens, 18.2 days on 1024 GPUs (446924 GPU-hours) at the predicted step; the published runs' error range does not cover ZeRO-3 across nodes (see the caution); with the best layout without it, 18.2 days (17.1 days to 24.9 days at that range)" \
	"$BIN" --model 175b --cluster dgx-a100 --gpus 1024 --train-tokens 300B
readme_quote readme-quote-degree 0 "TP group on ib-hdr tp_comm +5.4 s" \
	"$BIN" --model 175b --cluster "$ROOT/topologies/dgx.yaml"
grep -q '^    tp=16 .* TP group on ib-hdr  *tp_comm +5.4 s$' "$OUT" ||
	fail "readme-quote-degree: not the tp=16 row: $(grep '^    tp=16 ' "$OUT")"
for q in "bridge-25.11:MAPE 5.7% median 5.4% worst 10.4% rows 8" \
	"mosaic-mpt-a100:MAPE 11.6% median 13.3% worst 17.3% rows 6" \
	"torchtitan-a100:MAPE 15.8% median 13.5% worst 20.3% rows 3" \
	"sc21-table1-scripts:MAPE 3.9% median 3.3% worst 6.1% rows 10" \
	"nemo-perf:MAPE 9.7% median 9.0% worst 26.9% rows 40" \
	"meta-llama3-405b:MAPE 2.3% median 2.3% worst 4.2% rows 2"; do
	readme_quote "readme-quote-validate-${q%%:*}" 0 "${q#*:}" \
		"$BIN" validate "$ROOT/tests/data/runs/${q%%:*}.tsv"
done
[ -f "$ROOT/../shared/validation/published-runs.tsv" ] &&
	readme_quote readme-quote-validate-published 0 "MAPE 5.9% median 3.6% worst 21.1% rows 35" \
		"$BIN" validate "$ROOT/../shared/validation/published-runs.tsv"

# ---- JSON ------------------------------------------------------------------------
if expect json 0 out '"schema"' \
	"$BIN" --model 175b --cluster dgx-a100 --gpus 1024 --top 3 --json; then
	cp "$OUT" "$TMP/plan.json"
	jcheck json "$TMP/plan.json" '.schema == "tpplan.plan/v1"'
	jcheck json "$TMP/plan.json" '.layouts | length == 3'
	jcheck json "$TMP/plan.json" '.status == "ok" and .cluster.gpus == 1024'
	jcheck json "$TMP/plan.json" '[.layouts[].step_s] | . == sort'
	jcheck json "$TMP/plan.json" \
		'.considered == .feasible + ([.rejected[]] | add)'
	# ties_best: a runner-up within measured_spread of the best, never the
	# best, and not one with ZeRO-3 across nodes (optimistic, cautioned)
	# unless the best is one too
	jcheck json "$TMP/plan.json" '.measured_spread == 0.04'
	jcheck json "$TMP/plan.json" 'def opt: .layout.zero == 3 and .layout.pp == 1 and .tiers.dp >= 1;
		(.layouts[0] | opt) as $o | .layouts[0].step_s as $b | .measured_spread as $m |
		[.layouts | to_entries[] | .value.ties_best ==
		 (.key > 0 and .value.step_s <= $b * (1 + $m) and ((.value | opt | not) or $o))] | all'
	# the best per TP / PP degree: increasing degrees, each a layout of
	# that degree no faster than the best, the best among them
	for k in tp pp; do
		jcheck json "$TMP/plan.json" ".layouts[0].step_s as \$b |
			.best_per_degree.$k as \$t | (\$t | length) >= 3 and
			([\$t[].degree] | . == (sort | unique)) and
			([\$t[] | . as \$e | .step_s >= \$b and
			  (.layout_arg | split(\",\") | any(. == \"$k=\\(\$e.degree)\"))] | all) and
			([\$t[].step_s] | min) == \$b"
	done
fi
# degrees that are not powers of two: on 560 nodes every layout has pp 35
# or 70, and both are listed
if expect degrees-35 0 out "why the others lost" "$BIN" --model 175b \
	--cluster dgx-a100 --max-mbs 2; then
	has degrees-35 out "    pp=35 "
	has degrees-35 out "    pp=70 "
fi
# how sure: runners-up within 4 % of the best are called a tie; a best that
# leads by more says by how much
PROBLEM1="--model 125m --cluster dgx-a100 --gpus 1 --global-batch 16"
if expect ties 0 out "Ranks 2 and 3 are within 4% of the best" "$BIN" $PROBLEM1 \
	--layout tp=1,pp=1,dp=1,cp=1,zero=0 --top 3; then
	has ties out "treat them as a tie"
fi
# many ties are named as a range, as many as JSON's ties_best marks
if expect ties-many 0 out '"ties_best"' "$BIN" --model 22b --cluster dgx-a100 \
	--gpus 64 --top 64 --json; then
	n=$(jq '[.layouts[] | select(.ties_best)] | length' "$OUT")
	if [ "$n" -ge 3 ]; then
		expect ties-many-text 0 out "Ranks 2 to $((n + 1)) are within 4%" \
			"$BIN" --model 22b --cluster dgx-a100 --gpus 64 --top 64
	else
		fail "ties-many: only $n ties among 64 layouts"
	fi
fi
# ties that are not one range: every tied rank named, runs as "a to b",
# the sentence whole (a 96-byte list cut it after rank 29, verb and all)
if expect ties-gaps 0 out '"ties_best"' "$BIN" --model 13b --cluster mi300x --gpus 16 --top 64 --json; then
	want=$(jq -r '[.layouts | to_entries[] | select(.value.ties_best) | .key + 1] | map(tostring) | join(" ")' "$OUT")
	run "$BIN" --model 13b --cluster mi300x --gpus 16 --top 64
	line=$(grep -o 'Ranks [0-9, andto]* are within 4% of the best' "$OUT")
	# expand "a to b" and compare with JSON's list
	got=$(echo "$line" | sed 's/^Ranks //; s/ are within.*//; s/,/ /g; s/ and / /g' |
		awk '{for (i = 1; i <= NF; i++) if ($(i + 1) == "to") {for (k = $i; k <= $(i + 2); k++) printf "%d ", k; i += 2} else printf "%d ", $i}' |
		sed 's/ $//')
	[ -n "$line" ] && [ "$got" = "$want" ] || fail "ties-gaps: text '$line' names $got, JSON $want"
	case $line in *" to "*) ;; *) fail "ties-gaps: no run written as a range: $line" ;; esac
fi
expect leads 0 out "The best leads rank 2 by" "$BIN" $PROBLEM1 --attention unfused \
	--layout tp=1,pp=1,dp=1,cp=1,zero=0,mbs=16,sp=0 --top 3
if expect json-top1 0 out '"layouts"' \
	"$BIN" --model llama3-70b --cluster dgx-h100 --gpus 64 --top 1 --json; then
	jcheck json-top1 "$OUT" '.layouts | length == 1'
	jcheck json-top1 "$OUT" '.fp8_recipe == null and .attention == "flash"'
fi
# fp8: current scaling (default) reads each quantized tensor once more
FP8_LAYOUT="tp=1,pp=1,dp=8,cp=1,mbs=1,vp=1,sp=0,recompute=none,zero=3,schedule=1f1b,tp_overlap=0"
if expect fp8-current 0 out '"fp8_recipe": "current"' "$BIN" --model llama3-8b \
	--cluster dgx-h100 --gpus 8 --precision fp8 --layout "$FP8_LAYOUT" --json; then
	cp "$OUT" "$TMP/fp8cur.json"
	if expect fp8-delayed 0 out '"fp8_recipe": "delayed"' "$BIN" --model llama3-8b \
		--cluster dgx-h100 --gpus 8 --precision fp8 --fp8-recipe delayed \
		--layout "$FP8_LAYOUT" --json; then
		d=$(jq '.layouts[0].step_s' "$OUT") c=$(jq '.layouts[0].step_s' "$TMP/fp8cur.json")
		awk -v c="$c" -v d="$d" 'BEGIN { exit !(c > d) }' ||
			fail "fp8-delayed: current scaling ($c s) not slower than delayed ($d s)"
	fi
fi
# block recompute: recompute left to the search, the fewest layers per
# chunk that fit; recompute=full alone, every layer; a block size given,
# exactly that many; printed layouts read back to the same step; a block
# size without full recompute is rejected
BLK="--model llama3.1-405b --cluster gb200-nvl72 --gpus 256 --global-batch 1536 --precision fp8"
if expect block-recompute 0 out '"recompute_layers": 1' "$BIN" $BLK \
	--layout tp=4,pp=16,dp=4,cp=1,mbs=1,vp=4,sp=1,zero=1,tp_overlap=1 --top 1 --json; then
	jcheck block-recompute "$OUT" '.layouts[0].layout_arg | endswith(",recompute_layers=1")'
	arg=$(jq -r '.layouts[0].layout_arg' "$OUT") step=$(jq '.layouts[0].step_s' "$OUT")
	if expect block-recompute-roundtrip 0 out '"layouts"' "$BIN" $BLK --layout "$arg" --json; then
		jcheck block-recompute-roundtrip "$OUT" ".layouts[0].step_s == $step"
	fi
fi
if expect block-recompute-full 0 out '"recompute_layers": 0' "$BIN" $BLK \
	--layout tp=4,pp=16,dp=4,cp=1,mbs=1,vp=4,sp=1,recompute=full,zero=1,tp_overlap=1 --json; then
	arg=$(jq -r '.layouts[0].layout_arg' "$OUT") step=$(jq '.layouts[0].step_s' "$OUT")
	if expect block-recompute-full-roundtrip 0 out '"layouts"' "$BIN" $BLK --layout "$arg" --json; then
		jcheck block-recompute-full-roundtrip "$OUT" ".layouts[0].step_s == $step"
	fi
fi
if expect block-recompute-given 0 out '"recompute_layers": 2' "$BIN" $BLK \
	--layout tp=4,pp=16,dp=4,cp=1,mbs=1,vp=4,sp=1,recompute=full,recompute_layers=2,zero=1,tp_overlap=1 --json; then :; fi
expect block-recompute-text 0 out "full:1" "$BIN" $BLK \
	--layout tp=4,pp=16,dp=4,cp=1,mbs=1,vp=4,sp=1,zero=1,tp_overlap=1 --top 1
expect block-recompute-selective 2 err "recompute_layers needs recompute=full" "$BIN" $BLK \
	--layout tp=4,pp=16,dp=4,cp=1,mbs=1,vp=4,sp=1,recompute=selective,recompute_layers=1,zero=1,tp_overlap=1
# recompute_layers alone implies recompute=full (as the README says)
if expect block-recompute-implied 0 out '"recompute_layers": 2' "$BIN" $BLK \
	--layout tp=4,pp=16,dp=4,cp=1,mbs=1,vp=4,sp=1,recompute_layers=2,zero=1,tp_overlap=1 --json; then
	jcheck block-recompute-implied "$OUT" '[.layouts[].layout.recompute] | unique == ["full"]'
fi
# a bound given beside a --layout value past it is a usage error (which
# is meant?); the default bounds give way to a stated value
expect max-cp-vs-layout 2 err "cp=8 is more than --max-cp 1" "$BIN" --model 1.3b --cluster dgx-h100 \
	--gpus 8 --max-cp 1 --layout cp=8
expect max-mbs-vs-layout 2 err "mbs=16 is more than --max-mbs 2" "$BIN" --model 1.3b --cluster dgx-h100 \
	--gpus 8 --max-mbs 2 --layout mbs=16
if expect max-mbs-default-vs-layout 0 out '"mbs": 32' "$BIN" --model 1.3b --cluster dgx-h100 --gpus 8 \
	--layout mbs=32 --top 1 --json; then :; fi
# ... recompute_layers=0 (every layer) too, and with another mode it is the
# same contradiction
if expect block-recompute-implied-0 0 out '"recompute_layers": 0' "$BIN" $BLK \
	--layout tp=4,pp=16,dp=4,cp=1,mbs=1,vp=4,sp=1,recompute_layers=0,zero=1,tp_overlap=1 --json; then
	jcheck block-recompute-implied-0 "$OUT" '[.layouts[].layout | [.recompute, .recompute_layers]] | unique == [["full", 0]]'
fi
expect block-recompute-none-0 2 err "recompute_layers needs recompute=full (0: every layer)" "$BIN" $BLK \
	--layout recompute=none,recompute_layers=0
# Fields of one --layout that contradict each other are a usage error that
# names them, whatever the model and GPU count -- not a search that rejects
# every layout and then tries more GPUs; a field left free is searched
# within what the given ones allow
for c in "pp=1,vp=2|vp > 1 (the interleaved schedule) needs pp >= 2" \
	"pp=1,schedule=zb-h1|schedule=zb-h1 needs pp >= 2" \
	"pp=1,schedule=interleaved|schedule=interleaved needs pp >= 2" \
	"schedule=interleaved,vp=1|schedule=interleaved needs vp >= 2" \
	"vp=3,schedule=1f1b|schedule=1f1b needs vp = 1" \
	"schedule=zb-h1,vp=2|schedule=zb-h1 needs vp = 1" \
	"tp=1,sp=1|sp=1 (sequence parallelism) needs tp >= 2" \
	"sp=0,tp_overlap=1|tp_overlap=1 needs sp=1" \
	"tp_overlap=1,tp=1|tp_overlap=1 needs tp >= 2"; do
	l=${c%%|*}
	if expect "layout-contradiction $l" 2 err "--layout: ${c#*|}" "$BIN" \
		--model 175b --cluster dgx-a100 --gpus 1024 --layout "$l" --analytic; then
		has "layout-contradiction $l" err "(in '$l')"
		grep -q "more GPUs" "$ERR" && fail "layout-contradiction $l: searched for more GPUs"
	fi
done
# the switches take 0 / 1 or no / yes, and say so when given anything else
if expect layout-switch-words 0 out '"layouts"' "$BIN" --model 125m --cluster dgx-a100 --gpus 8 \
	--layout sp=yes,tp_overlap=yes --json --top 1; then
	jcheck layout-switch-words "$OUT" '.layouts[0].layout | .sp and .tp_overlap'
fi
expect layout-switch-bad 2 err "--layout: sp=true: expected 0, 1, yes or no" "$BIN" --model 125m \
	--cluster dgx-a100 --gpus 8 --layout sp=true
expect layout-contradiction-free-field 0 out "interleaved" "$BIN" \
	--model 175b --cluster dgx-a100 --gpus 1024 --layout pp=8,schedule=interleaved --analytic --top 1
# a stated cp > 1 with --attention unfused can never plan (context
# parallelism runs on the fused kernels): a usage error, not a search
# that rejects every layout and then tries up to 64x the GPUs
if expect layout-cp-unfused 2 err "--layout cp=2: cp=2 needs --attention flash" "$BIN" \
	--model 125m --cluster dgx-a100 --gpus 8 --attention unfused --layout cp=2; then
	grep -q "more GPUs" "$ERR" && fail "layout-cp-unfused: searched for more GPUs"
fi
expect layout-cp-flash 0 out "best layout:" "$BIN" \
	--model 125m --cluster dgx-a100 --gpus 8 --layout cp=2 --top 1 --analytic
# steps under a second keep six decimals wherever they are printed in
# seconds (three printed 0.000 s beside "+48.7%"): the per-degree lists
# of a 2-layer model on 8 GPUs
cat >"$TMP/tiny.yaml" <<'EOF2'
name: tiny
layers: 2
hidden: 256
heads: 4
vocab: 1000
seq: 128
global_batch: 64
EOF2
if expect sub-second-degrees 0 out "best layout per pipeline-parallel degree" "$BIN" \
	--model "$TMP/tiny.yaml" --cluster dgx-a100 --gpus 8; then
	grep -E '^    (tp|pp)=' "$OUT" | grep -qE ' 0\.[0-9]{3} s ' &&
		fail "sub-second-degrees: a step with three decimals: $(grep -E '^    (tp|pp)=' "$OUT")"
	grep -qE '^    tp=1 +0\.[0-9]{6} s ' "$OUT" || fail "sub-second-degrees: tp=1 without six decimals"
fi
# rows mixing simulated and analytic steps (a pipeline too long to play
# out) are marked, and the header says so; the JSON bound is never above
# the step it bounds (--top 8: the first analytic row is 6th)
if expect mixed-sim-marked 0 out "where marked * from the analytic model: too long to simulate" "$BIN" \
	--model 175b --cluster dgx-a100 --gpus 1024 --global-batch 67108864 --top 8; then
	n_an=$(grep -cE '^ +[0-9]+ .*[0-9]\* +[0-9]' "$OUT")
	[ "$n_an" -ge 1 ] || fail "mixed-sim-marked: no row marked *"
	run "$BIN" --model 175b --cluster dgx-a100 --gpus 1024 --global-batch 67108864 --top 8 --json
	jcheck mixed-sim-json "$OUT" '([.layouts[] | select(.simulated | not)] | length) == '"$n_an"
	jcheck mixed-sim-json "$OUT" '[.layouts[] | .bound_s <= .step_s] | all'
	# the per-degree lists mark theirs too, as the JSON says
	n_deg=$(jq '[.best_per_degree.tp[], .best_per_degree.pp[] | select(.simulated | not)] | length' "$OUT")
	[ "$n_deg" -ge 1 ] || fail "mixed-sim-marked: no analytic best per degree in the JSON"
	run "$BIN" --model 175b --cluster dgx-a100 --gpus 1024 --global-batch 67108864 --top 8
	[ "$(grep -cE '^    (tp|pp)=[0-9]+ +[0-9.]+ s\*' "$OUT")" -eq "$n_deg" ] ||
		fail "mixed-sim-marked: per-degree lines marked * do not match the JSON's $n_deg"
	has mixed-sim-marked out "(* analytic step: a pipeline too long to simulate)"
fi
expect fp8-recipe-without-fp8 2 err "--fp8-recipe applies to --precision fp8" "$BIN" \
	--model llama3-8b --cluster dgx-h100 --fp8-recipe delayed
expect calibration-empty 2 err "--calibration: the file name is empty" "$BIN" \
	--model 125m --cluster dgx-a100 --calibration ""
expect layout-plus-sign 2 err "tp=+4: expected an integer" "$BIN" \
	--model 125m --cluster dgx-a100 --layout "tp=+4"
# TE userbuffers need NVLink: no TP overlap on AMD's xGMI
expect tp-overlap-xgmi 1 err "TP overlap needs sequence parallelism and the TP group in one NVLink domain" \
	"$BIN" --model llama3-70b --cluster mi300x --gpus 64 --layout tp=8,sp=1,tp_overlap=1
expect fp8-recipe-bad 2 err "--fp8-recipe: expected current or delayed" "$BIN" \
	--model llama3-8b --cluster dgx-h100 --fp8-recipe x
expect zero3-gather-bad 2 err "--zero3-gather: expected layer or module, got 'x'" "$BIN" \
	--model 13b --cluster dgx-a100 --zero3-gather x
# MT-NLG 530B under ZeRO-3 at tp 1, micro-batch 4, unfused, full
# recompute (SC21 Table 2's 640-GPU run): two gathered layers (FSDP's unit)
# and the recomputed layer's 16 GB do not fit in 80 GB; two gathered
# Linears (DeepSpeed's module-wise gathers) do (costmodel/README.md, Memory)
z3l="tp=1,pp=1,dp=640,cp=1,mbs=4,vp=1,sp=0,recompute=full,zero=3,schedule=1f1b,tp_overlap=0"
expect zero3-gather-layer 1 err "$z3l needs 87.4 GiB of 80.0 GiB per GPU" "$BIN" --model sc21-530b \
	--cluster dgx-a100 --gpus 640 --global-batch 2560 --precision fp16 --attention unfused --layout "$z3l"
expect zero3-gather-module 0 out "weights 7.79, grads 3.08, optimizer 9.25, activations 32.81, other 18.98, reserve 3.00 = 74.92 of 80.00" \
	"$BIN" --model sc21-530b --cluster dgx-a100 --gpus 640 --global-batch 2560 --precision fp16 \
	--attention unfused --layout "$z3l" --zero3-gather module

# --layout with every field fixed evaluates exactly that layout
fixed="tp=8,pp=8,dp=16,cp=1,mbs=1,vp=3,sp=1,recompute=selective,zero=1,schedule=interleaved,tp_overlap=0"
if expect layout-fixed 0 out '"layouts"' "$BIN" --model 175b --cluster dgx-a100 \
	--gpus 1024 --global-batch 1536 --layout "$fixed" --json; then
	jcheck layout-fixed "$OUT" '.layouts | length == 1'
	jcheck layout-fixed "$OUT" '.considered == 1'
	jcheck layout-fixed "$OUT" '.layouts[0].layout == {"tp": 8, "pp": 8,
		"dp": 16, "cp": 1, "mbs": 1, "vp": 3, "sp": true,
		"recompute": "selective", "recompute_layers": 0, "zero": 1, "schedule": "interleaved",
		"tp_overlap": false, "gbs": 1536}'
	jcheck layout-fixed "$OUT" ".layouts[0].layout_arg == \"$fixed\""
fi

# the JSON's layout_arg, fed back through --layout, evaluates to the same
# numbers (DESIGN.md invariant)
roundtrip() {
	name=$1
	shift
	cases=$((cases + 1))
	run "$BIN" "$@" --top 4 --json
	[ "$rc" -eq 0 ] || { fail "$name: exit $rc"; return; }
	pick='{step_s, time_s, memory_bytes, mfu, layout}'
	jq -r ".layouts[] | [.layout_arg, ($pick | tojson)] | @tsv" "$OUT" >"$TMP/rt.tsv" ||
		{ fail "$name: cannot read the plan's layouts"; return; }
	n=0
	tab=$(printf '\t')
	while IFS=$tab read -r arg want; do
		n=$((n + 1))
		run "$BIN" "$@" --layout "$arg" --json
		if [ "$rc" -ne 0 ]; then
			fail "$name: --layout $arg: exit $rc"
			continue
		fi
		got=$(jq -c "if .considered == 1 and (.layouts | length) == 1
			     then .layouts[0] | $pick else \"not one layout\" end" "$OUT")
		[ "$got" = "$want" ] || fail "$name: --layout $arg: $got, plan said $want"
	done <"$TMP/rt.tsv"
	[ "$n" -eq 4 ] || fail "$name: $n layouts in the plan, expected 4"
	echo "ok: $name ($n layouts)"
}
roundtrip roundtrip-175b --model 175b --cluster dgx-a100 --gpus 1024
roundtrip roundtrip-llama --model llama3-70b --cluster dgx-h100 --gpus 128 --global-batch 256
roundtrip roundtrip-fp16 --model 22b --cluster dgx-a100 --gpus 64 --precision fp16 --attention flash

# ---- infeasible ------------------------------------------------------------------
expect infeasible 1 err "closest to fitting" "$BIN" --model 175b --cluster dgx-a100 --gpus 1
has infeasible err "does not fit in GPU memory"
# and from how many GPUs up something fits (2x ... 64x, searched)
has infeasible err "with 64 GPUs (64x) a layout fits, "
has infeasible err " s per step: --gpus 64 (--nodes 8) --layout tp="
expect infeasible-report 1 err " s per step: --gpus 256 (--nodes 32) --layout tp=" \
	"$BIN" report --model 1t --cluster dgx-a100 --gpus 16 --no-plots -o "$TMP/rep-infeasible"
has infeasible-report err "closest to fitting: "
# the report itself explains it: rejections, the closest miss and its
# memory, the first count that fits (the same one as stderr's), and the
# scaling rows from the request up to one doubling past it
R=$TMP/rep-infeasible/report.md
if [ -s "$R" ] && [ -s "$TMP/rep-infeasible/index.html" ]; then
	grep -q "^## No feasible layout" "$R" &&
		grep -q "^| does not fit in GPU memory | [0-9]" "$R" &&
		grep -q "^| closest | " "$R" &&
		grep -q "With 256 GPUs (16x) a layout fits, .*: --gpus 256 (--nodes 32) --layout tp=[^ ]*tp_overlap=[01]; the scaling" "$R" &&
		grep -q "^| 16 (requested) | - |" "$R" && grep -q "^| 512 | [0-9]" "$R" &&
		! grep -q "^## Best layouts\|^## Sensitivity" "$R" &&
		grep -q "No feasible layout" "$TMP/rep-infeasible/index.html" ||
		fail "infeasible-report: report.md lacks the explanation, the first fit or the scaling rows"
else
	fail "infeasible-report: no report written"
fi
expect infeasible-json 1 out '"closest_miss"' \
	"$BIN" --model 175b --cluster dgx-a100 --gpus 1 --json &&
	jcheck infeasible-json "$OUT" '.status == "infeasible" and (.layouts | length) == 0 and .closest_miss.fits == false'
# and the GPUs it would take, as the text's hint says them (it was text only)
if expect infeasible-json-more 1 out '"more_gpus"' \
	"$BIN" --model llama2-70b --cluster dgx-a100-40gb --gpus 24 --global-batch 16 --json; then
	jcheck infeasible-json-more "$OUT" '.more_gpus.gpus == 48 and .more_gpus.searched_up_to_gpus == 48 and
		.more_gpus.best.fits and (.more_gpus.best.layout | .tp * .pp * .dp * .cp) == 48'
	la=$(jq -r '.more_gpus.best.layout_arg' "$OUT")
	st=$(jq -r '.more_gpus.best.step_s * 1000 | round' "$OUT")
	run "$BIN" --model llama2-70b --cluster dgx-a100-40gb --gpus 24 --global-batch 16
	grep -q "with 48 GPUs (2x) a layout fits, [0-9.]* s per step: --gpus 48 (--nodes 6) --layout $la$" "$ERR" ||
		fail "infeasible-json-more: the text's hint is not JSON's $la"
	run "$BIN" --model llama2-70b --cluster dgx-a100-40gb --gpus 48 --global-batch 16 --layout "$la" --json
	jcheck infeasible-json-more "$OUT" "(.layouts[0].step_s * 1000 | round) == $st"
fi
expect plan-json-more-null 0 out '"more_gpus": null' "$BIN" --model 125m --cluster dgx-a100 --gpus 8 --json

expect nodes-overflow 2 err "--nodes" "$BIN" --model 175b --cluster dgx-a100 --nodes 4194304
# near the 2^24 GPUs tpplan plans for, the first-fit doublings stop there
# (they went on to 2^30 GPUs, minutes of searching past --time-limit)
expect first-fit-cap 1 err "nor does any with more GPUs, up to 16777216 (4x)" \
	"$BIN" --model "$ROOT/tests/data/models/minimal.yaml" --cluster dgx-a100 --gpus 4194304
grep -q "1073741824\|33554432" "$ERR" && fail "first-fit-cap: a count past 2^24 GPUs searched"

# A search stopped by --time-limit: no "closest to fitting" (feasible
# layouts exist), closest_miss null in JSON
if expect time-limit-stop 1 err "stopped after its 0.05 s time limit" \
	"$BIN" --model 1t --cluster dgx-a100 --gpus 3072 --time-limit 0.05; then
	grep -q "closest to fitting\|layouts rejected" "$ERR" &&
		fail "time-limit-stop: a stopped search lists rejections or a closest miss"
fi
expect time-limit-stop-json 1 out '"time_limit"' \
	"$BIN" --model 1t --cluster dgx-a100 --gpus 3072 --time-limit 0.05 --json &&
	jcheck time-limit-stop-json "$OUT" '.status == "time_limit" and .closest_miss == null and
		.simulated == 0 and .too_long_to_simulate == 0 and .pruned_by_bound == 0'
# Review 2026-12-05: a file option whose value is the next option
# ("--timeline --json" wrote a file named --json and printed text), and
# --timeline given twice (the last one silently won)
expect timeline-option-value 2 err "--timeline needs a value, got the option '--json'" \
	"$BIN" --model 125m --cluster dgx-a100 --gpus 8 --timeline --json
[ -e ./--json ] && { fail "timeline-option-value: ./--json written"; rm -f ./--json; }
expect timeline-twice 2 err "--timeline is given twice" "$BIN" --model 125m --cluster dgx-a100 \
	--gpus 8 --timeline "$TMP/tl-a.tsv" --timeline "$TMP/tl-b.tsv"
expect report-out-option-value 2 err "report: --out needs a value, got the option '--top'" \
	"$BIN" report --model 125m --cluster dgx-a100 --gpus 8 --out --top 2
expect calibrate-out-twice 2 err "calibrate: --out is given twice" \
	"$BIN" calibrate --import "$ROOT/tests/data/nccl-tests/reduce_scatter_perf.json" --group 8 \
	--out "$TMP/c1.yaml" --out "$TMP/c2.yaml"
# More GPUs for a problem that does not fit: past one node only whole
# nodes, the counts --gpus takes (5 GPUs named 20, which --gpus refuses)
if expect first-fit-whole-nodes 1 err " s per step: --gpus 40 (--nodes 5) --layout tp=" \
	"$BIN" --model llama2-70b --cluster dgx-h100 --gpus 5; then
	grep -q -e "--gpus 10 " -e "--gpus 20 " "$ERR" && fail "first-fit-whole-nodes: a part-node count named"
fi
# The hint plans as it says when followed, though --layout pinned a dp
# that the larger count changes or --nodes asked (it named --gpus N
# alone: "--layout dp=2" then refused the count's layout, and --nodes
# with --gpus is a usage error)
if expect first-fit-follow 1 err " s per step: --gpus 32 (--nodes 4) --layout " \
	"$BIN" --model llama2-70b --cluster dgx-a100-40gb --nodes 2 --global-batch 16 --layout dp=2; then
	hint=$(sed -n 's/.* s per step: \(--gpus [0-9]*\) (\(--nodes [0-9]*\)) \(--layout [^ ]*\)$/\1 \3|\2 \3/p' "$ERR")
	for h in "${hint%%|*}" "${hint#*|}"; do
		# shellcheck disable=SC2086
		expect "first-fit-follow $h" 0 out "tokens/s" "$BIN" --model llama2-70b --cluster dgx-a100-40gb \
			--global-batch 16 $h
	done
fi
# A search stopped before it considered a layout said as well that no
# layout matches the constraints (none were given)
if expect time-limit-no-constraints 1 err "stopped after its 1e-09 s time limit" \
	"$BIN" --model 125m --cluster dgx-a100 --gpus 8 --time-limit 1e-9; then
	grep -q "no layout matches the constraints" "$ERR" &&
		fail "time-limit-no-constraints: a time-limit stop blamed the constraints"
fi
# "needs X GiB of Y GiB": digits enough to tell them apart (a reserve
# that leaves the layout 0.004 GiB short of the 80 GiB; it printed "80.0 of
# 80.0")
L22="tp=8,pp=1,mbs=1,sp=1,recompute=full,zero=0"
run "$BIN" --model 22b --cluster dgx-a100 --gpus 8 --global-batch 8 --layout "$L22" --json
reserve=$(jq '3 + 80.004 - .layouts[0].memory_bytes.total / 1073741824' "$OUT")
expect closest-digits 1 err "needs 80.004 GiB of 80.000 GiB per GPU" \
	"$BIN" --model 22b --cluster dgx-a100 --gpus 8 --global-batch 8 --layout "$L22" --mem-reserve-gib "$reserve"

# ---- GEMM ceiling where a precision has no figure (header) ---------------------
# fp8 on MI300X: its bf16 figure's fraction of peak x 0.93; on L40S (no
# figure at all): the 72 % default; fp8 on H200: its own figure
expect ceiling-fp8-derived 0 out "GEMM ceiling: no fp8 measurement, 1226 TFLOP/s assumed: 46.9% of peak, the bf16 figure's 50.4% x 0.93" \
	"$BIN" --model llama3-8b --cluster mi300x --gpus 8 --precision fp8 --top 1
expect ceiling-default 0 out "GEMM ceiling: no measurement, 72% of peak assumed" \
	"$BIN" --model llama3-8b --cluster l40s-ethernet --gpus 8 --precision fp8 --top 1
expect ceiling-fp8-own 0 out "GEMM ceiling 1354 TFLOP/s at 1536x2816x10240" \
	"$BIN" --model llama3-8b --cluster dgx-h200 --gpus 8 --precision fp8 --top 1
# a burst figure (gb200-nvl72, gemm_rate: burst): priced at 0.858 of it,
# both numbers shown, for each precision's own figure
expect ceiling-burst 0 out "GEMM ceiling 3102 TFLOP/s sustained, estimated: the burst figure 3616 x 0.858" \
	"$BIN" --model llama3-8b --cluster gb200-nvl72 --gpus 8 --precision fp8 --top 1
expect ceiling-burst-fp16 0 out "GEMM ceiling 1563 TFLOP/s sustained, estimated: the burst figure 1822 x 0.858" \
	"$BIN" --model llama3-8b --cluster gb200-nvl72 --gpus 8 --precision fp16 --top 1

# ---- counts, header, legend, CP tier --------------------------------------------
# feasible = simulated finalists + too long to simulate + pruned by bound;
# the per-degree picks are counted apart
if expect counts 0 out '"simulated_best_per_degree"' \
	"$BIN" --model 175b --cluster dgx.yaml --json; then
	jcheck counts "$OUT" '.feasible == .simulated + .too_long_to_simulate + .pruned_by_bound and .simulated_best_per_degree >= 0 and .best_per_degree_complete == true'
	# gcd(1024, 1536) = 512: no count down to 512 GPUs doubles it, so none
	# is searched for a fewer-GPU plan
	jcheck counts "$OUT" '.fewer_gpus == null and .fewer_gpus_searched == [] and .fewer_gpus_complete'
fi
# the same where ZeRO-2 under pipelining is searched and wins (its ZeRO-1
# twins' steps are the finalists', not simulated and counted again)
if expect counts-zero2 0 out '"simulated_best_per_degree"' \
	"$BIN" --model 1.3b --cluster dgx-b200 --gpus 1024 --global-batch 32 --json; then
	jcheck counts-zero2 "$OUT" '.feasible == .simulated + .too_long_to_simulate + .pruned_by_bound'
	jcheck counts-zero2 "$OUT" '.layouts[0].layout.zero == 2 and .layouts[0].zero_pipelined == true'
fi
# --grads-16bit (NeMo's FP8 performance recipes): gradients 2 bytes a
# parameter.  Nemotron-4 340B on 128 H100, tp 8, pp 8, vp 12 (NeMo 24.07
# ran it without recompute, 3.18 s): with fp32 gradients only full
# recompute fits (3.99 s); with 16-bit ones selective recompute does
printf 'name: nemotron4-340b\nlayers: 96\nhidden: 18432\nheads: 96\nkv_heads: 8\nffn: 73728\nvocab: 256000\nseq: 4096\nglobal_batch: 32\n' >"$TMP/nem340.yaml"
N340="--model $TMP/nem340.yaml --cluster dgx-h100 --gpus 128 --precision fp8 --layout tp=8,pp=8,dp=2,cp=1,vp=12,mbs=1,sp=1 --top 1 --json"
# shellcheck disable=SC2086
if expect grads16 0 out '"grads_16bit": true' "$BIN" $N340 --grads-16bit; then
	cp "$OUT" "$TMP/g16.json"
	# shellcheck disable=SC2086
	run "$BIN" $N340
	jcheck grads16 "$OUT" '.options.grads_16bit == false and .layouts[0].layout.recompute == "full"'
	jcheck grads16 "$TMP/g16.json" '.layouts[0].layout.recompute == "selective"'
	jq -e --slurpfile a "$OUT" '.layouts[0].memory_bytes.grads * 2 == $a[0].layouts[0].memory_bytes.grads and .layouts[0].step_s < $a[0].layouts[0].step_s' \
		"$TMP/g16.json" >/dev/null || fail "grads16: gradient memory not halved, or the step not shorter"
fi
# ZeRO-3 across nodes: the plan says the model is optimistic there (the
# SC21 DeepSpeed rows); not for the default 175B plan on dgx-a100 (ZeRO-1)
if expect zero3-caution 0 out "Caution: the best layout uses ZeRO-3" \
	"$BIN" --model 175b --cluster dgx-a100 --gpus 1536 --global-batch 1536 --layout zero=3; then
	run "$BIN" --model 175b --cluster dgx-a100 --gpus 1536 --global-batch 1536 --layout zero=3 --json
	jcheck zero3-caution "$OUT" '(.cautions | length) == 1 and (.cautions[0] | test("1.5-4.8 times"))'
	cp "$OUT" "$TMP/zero3-caution.json"
	# it names the best layout that is not ZeRO-3 across nodes (zero
	# searched in place of the pinned zero=3), whose --layout plans that step
	jcheck zero3-caution "$OUT" '.best_without_zero3_search == "found" and
		(.best_without_zero3 | .layout.zero != 3 or .layout.pp > 1 or .tiers.dp < 1) and
		(.cautions[0] | test("so treat its step time as optimistic\\.  The best layout without ZeRO-3 across nodes plans [0-9.]+ s, a [0-9.]+% (longer|shorter) step: --layout "))'
	nz=$(jq -r '.best_without_zero3.layout_arg' "$OUT")
	nzs=$(jq '.best_without_zero3.step_s' "$OUT")
	jq -e --arg nz "$nz" '.cautions[0] | endswith(" --layout " + $nz)' "$OUT" >/dev/null ||
		fail "zero3-caution: the caution does not end with the layout without ZeRO-3 ($nz)"
	run "$BIN" --model 175b --cluster dgx-a100 --gpus 1536 --global-batch 1536 --layout "$nz" --json
	[ "$rc" -eq 0 ] && [ "$(jq '.layouts[0].step_s' "$OUT")" = "$nzs" ] ||
		fail "zero3-caution: --layout $nz does not plan the $nzs s the caution gave"
	run "$BIN" --model 175b --cluster dgx-a100 --json
	jcheck zero3-caution "$OUT" '.cautions == [] and .layouts[0].layout.zero != 3 and .best_without_zero3 == null and .best_without_zero3_search == "not_needed"'
	# runners-up that are ZeRO-3 across nodes are named, and not called
	# a tie with the best (22B on 512 H100: ranks 2, 4 and 5)
	run "$BIN" --model 22b --cluster dgx-h100 --gpus 512 --json
	jcheck zero3-caution "$OUT" '(.cautions | map(select(test("the best layout uses ZeRO-3"))) == []) and .layouts[0].layout.zero != 3 and .best_without_zero3 == null and .best_without_zero3_search == "not_needed"'
	jcheck zero3-caution-ranks "$OUT" '[.layouts | to_entries[] | select(.value.layout.zero == 3) | .key + 1] as $z |
		($z | length) > 0 and (.cautions | length) == 1 and
		(.cautions[0] | startswith("Caution: rank" + (if ($z | length) > 1 then "s " else " " end) + ($z | map(tostring) | join(", ")) + " use"))'
fi
# stated degrees that cannot tile the GPUs are a usage error naming the
# product, not an empty search
expect layout-product 2 err "tp*pp*dp*cp = 256, not the 1024 GPUs" \
	"$BIN" --model 175b --cluster dgx-a100 --gpus 1024 --layout tp=4,pp=4,dp=4,cp=4
expect layout-divide 2 err "multiply to 2048, more than the 1024 GPUs" \
	"$BIN" --model 175b --cluster dgx-a100 --gpus 1024 --layout tp=8,pp=8,dp=32
# degrees whose product would overflow 64 bits (it crashed with SIGFPE)
expect layout-overflow 2 err "multiply to more than the 1024 GPUs" \
	"$BIN" --model 125m --cluster dgx-a100 --gpus 1024 --layout tp=1048576,pp=1048576,dp=16777216
expect layout-divide-report 2 err "multiply to 3, which does not divide the 64 GPUs" \
	"$BIN" report --model 22b --cluster dgx-a100 --gpus 64 --layout tp=3 -o "$TMP/rep-tp3"
# ---- fewer GPUs ------------------------------------------------------------------
# a global batch that the GPU count divides badly caps dp at their gcd:
# Llama 3 8B's 512 sequences on 576 GB200 allow dp 64, on 512 of them dp
# 512, which plans over 4 % faster; the line's layout, planned on 512 GPUs,
# gives the same step
if expect fewer-gpus 0 out "Fewer GPUs: 512 of the 576 plan a " \
	"$BIN" --model llama3-8b --cluster gb200-nvl72 --top 1; then
	grep -q "^  Fewer GPUs: 512 of the 576 plan a [0-9.]*% shorter step ([0-9.]* s against [0-9.]* s): dp divides the global batch 512 and the GPU count, so tp\*pp\*cp is a multiple of 9 on 576 GPUs, of 1 on 512\.  Plan it with --gpus 512 (--nodes 128) --layout tp=[^ ]*tp_overlap=[01]$" "$OUT" ||
		fail "fewer-gpus: the line lacks a part: $(grep Fewer "$OUT")"
	run "$BIN" --model llama3-8b --cluster gb200-nvl72 --top 1 --json
	cp "$OUT" "$TMP/fewer.json"
	jcheck fewer-gpus "$TMP/fewer.json" '.fewer_gpus.gpus == 512 and .fewer_gpus_searched == [512] and
		.fewer_gpus.best.step_s < .layouts[0].step_s * 0.96 and
		(.fewer_gpus.best.layout | .tp * .pp * .dp * .cp) == 512 and
		(.fewer_gpus.best | has("ties_best") | not)'
	larg=$(jq -r '.fewer_gpus.best.layout_arg' "$TMP/fewer.json")
	run "$BIN" --model llama3-8b --cluster gb200-nvl72 --gpus 512 --layout "$larg" --json
	[ "$rc" -eq 0 ] && [ "$(jq '.layouts[0].step_s' "$OUT")" = "$(jq '.fewer_gpus.best.step_s' "$TMP/fewer.json")" ] ||
		fail "fewer-gpus: $larg on 512 GPUs does not plan the step the fewer-GPU line gave"
fi
# no layout on the whole cluster (dp at most gcd(512, 4480) = 128 and no
# tp * pp * cp of 35), one on 4096 of its GPUs: said before the doublings
if expect fewer-gpus-infeasible 1 err "with 4096 of the 4480 GPUs a layout fits, " \
	"$BIN" --model llama3-8b --cluster dgx-a100; then
	has fewer-gpus-infeasible err "so tp*pp*cp is a multiple of 35 on 4480 GPUs, of 8 on 4096): --gpus 4096 (--nodes 512) --layout tp="
	# after the doublings, which say that more GPUs do not help
	tail -n 2 "$ERR" | head -n 1 | grep -qF "nor does any with more GPUs, up to 286720 (64x)" ||
		fail "fewer-gpus-infeasible: the doublings' line is not just before the fewer-GPU line"
	run "$BIN" --model llama3-8b --cluster dgx-a100 --json
	jcheck fewer-gpus-infeasible "$OUT" '.status == "infeasible" and .fewer_gpus.gpus == 4096 and .fewer_gpus.best.fits'
fi
# the report says both: beside its best layouts, and why nothing fits
if expect fewer-gpus-report 0 any "wrote" \
	"$BIN" report --model llama3-8b --cluster gb200-nvl72 --no-plots -o "$TMP/rep-fewer"; then
	grep -q "^Fewer GPUs: 512 of the 576 plan a [0-9.]*% shorter step .* --gpus 512 (--nodes 128) --layout tp=[^ ]*tp_overlap=[01]$" \
		"$TMP/rep-fewer/report.md" || fail "fewer-gpus-report: report.md lacks the fewer-GPU sentence"
fi
if expect fewer-gpus-report-infeasible 1 err "with 4096 of the 4480 GPUs a layout fits, " \
	"$BIN" report --model llama3-8b --cluster dgx-a100 --no-plots -o "$TMP/rep-fewer-inf"; then
	R=$TMP/rep-fewer-inf/report.md
	grep -q "^No layout fits with more GPUs either, up to 286720 (64x)\.$" "$R" &&
		grep -q "^With 4096 of the 4480 GPUs a layout fits, [0-9.]* s per step (.*): --gpus 4096 (--nodes 512) --layout tp=[^ ]*tp_overlap=[01]$" "$R" ||
		fail "fewer-gpus-report-infeasible: report.md lacks the more- or fewer-GPU sentence"
fi

# a count searched and found slower: no line (96 H100: gcd 32; 64 GPUs: 64)
if expect fewer-gpus-slower 0 out '"fewer_gpus_searched"' \
	"$BIN" --model llama3-8b --cluster dgx-h100 --gpus 96 --top 1 --json; then
	jcheck fewer-gpus-slower "$OUT" '.fewer_gpus == null and .fewer_gpus_searched == [64] and .fewer_gpus_complete'
	run "$BIN" --model llama3-8b --cluster dgx-h100 --gpus 96 --top 1
	! grep -q "Fewer GPUs" "$OUT" || fail "fewer-gpus-slower: a fewer-GPU line for a slower count"
fi
# a count that plans the same step within the 4 % spread frees GPUs: said
# as a tie (Llama 3 70B on 576 GB200: 512 of them plan as short a step)
if expect fewer-gpus-tie 0 out "Fewer GPUs: 512 of the 576 plan a step within the 4% a measurement varies (" \
	"$BIN" --model llama3-70b --cluster gb200-nvl72 --top 1; then
	grep -q "^  Fewer GPUs: 512 of the 576 plan a step within the 4% a measurement varies ([0-9.]* s against [0-9.]* s, [0-9.]*% \(shorter\|longer\)) and free 64 GPUs (dp divides the global batch 512" "$OUT" ||
		fail "fewer-gpus-tie: the tie line lacks a part: $(grep Fewer "$OUT")"
	run "$BIN" --model llama3-70b --cluster gb200-nvl72 --top 1 --json
	jcheck fewer-gpus-tie "$OUT" '.fewer_gpus.gpus == 512 and .fewer_gpus.tie and
		.fewer_gpus.best.step_s <= .layouts[0].step_s * 1.04 and .fewer_gpus.best.step_s >= .layouts[0].step_s * 0.96'
	jcheck fewer-gpus "$TMP/fewer.json" '.fewer_gpus.tie == false'
fi
# the layout without ZeRO-3 across nodes is the best of them all, zero 2
# included (on 1024 H100 a zero-2 layout beats every zero-1 one), no
# slower than any such layout the plan ranks
run "$BIN" --model llama3-70b --cluster dgx-h100 --gpus 1024 --global-batch 512 --json
jcheck zero3-alt-best "$OUT" '.layouts[0].layout.zero == 3 and .best_without_zero3.layout.zero == 2 and
	([.layouts[] | select(.layout.zero != 3 or .layout.pp > 1 or .tiers.dp < 1) | .step_s] | min) >= .best_without_zero3.step_s'
# every field pinned, ZeRO-3 across nodes: none without it fits, and the
# caution says so rather than pointing at --layout zero=1
expect zero3-alt-none 0 out "so treat its step time as optimistic.  No layout without ZeRO-3 across nodes fits with the fields given." \
	"$BIN" --model 22b --cluster dgx-a100 --gpus 64 --layout tp=1,pp=1,dp=64,cp=1,mbs=2,vp=1,sp=0,recompute=none,zero=3,schedule=1f1b,tp_overlap=0
run "$BIN" --model 22b --cluster dgx-a100 --gpus 64 --layout tp=1,pp=1,dp=64,cp=1,mbs=2,vp=1,sp=0,recompute=none,zero=3,schedule=1f1b,tp_overlap=0 --json
jcheck zero3-alt-none "$OUT" '.best_without_zero3 == null and .best_without_zero3_search == "none_fits"'
# a fewer-GPU count whose best is ZeRO-3 across nodes competes, against a
# best that is not, with its best layout that is not either (1088 H100:
# 1024 of them, zero 2)
run "$BIN" --model llama3-70b --cluster dgx-h100 --gpus 1088 --global-batch 512 --top 1 --json
jcheck fewer-gpus-not-optimistic "$OUT" '.layouts[0].layout.zero != 3 and .fewer_gpus.gpus == 1024 and
	(.fewer_gpus.best | .layout.zero != 3 or .tiers.dp < 1)'
# a dp fixed by --layout is the request's: no other count is searched
run "$BIN" --model llama3-8b --cluster gb200-nvl72 --top 1 --layout dp=64 --json
jcheck fewer-gpus-dp-fixed "$OUT" '.status == "ok" and .fewer_gpus == null and .fewer_gpus_searched == []'
# a fewer-GPU layout of ZeRO-3 across nodes says it is priced optimistically
expect fewer-gpus-zero3 1 err "with 4096 of the 4480 GPUs a layout fits, " \
	"$BIN" --model llama3-70b --cluster dgx-a100 --layout zero=3,pp=1
has fewer-gpus-zero3 err "s per step, with ZeRO-3 across nodes, priced optimistically ("

# a global batch that shares no factor with the GPU count leaves dp = 1:
# the batch rejection says why
expect batch-gcd 0 out "dp divides both the global batch 1537 and the 1024 GPUs: at most their gcd, 1)" \
	"$BIN" --model 175b --cluster dgx-a100 --gpus 1024 --global-batch 1537 --top 1
# sharded gradients or parameters under pipelining are priced as FSDP2
# under torch.distributed.pipelining runs them (TorchTitan), and the
# table says so
expect zero-pipelined 0 out "zero 2/3 with pp > 1: priced as PyTorch FSDP2 under torch.distributed.pipelining" \
	"$BIN" --model 22b --cluster dgx-a100 --gpus 16 --layout zero=2,pp=2 --top 1
expect zero-pipelined-json 0 out '"zero_pipelined": true' \
	"$BIN" --model 22b --cluster dgx-a100 --gpus 16 --layout zero=3,pp=2 --top 1 --json &&
	jcheck zero-pipelined-json "$OUT" '.layouts[0].zero_pipelined == true and .layouts[0].layout.pp == 2'
# with one data-parallel rank nothing is sharded: false, as the README says
expect zero-pipelined-dp1 0 out '"zero_pipelined": false' \
	"$BIN" --model 22b --cluster dgx-a100 --gpus 16 --layout zero=3,pp=2,tp=8,dp=1 --top 1 --json &&
	jcheck zero-pipelined-dp1 "$OUT" '.layouts[0].zero_pipelined == false and .layouts[0].layout.zero == 3 and .layouts[0].layout.dp * .layouts[0].layout.cp == 1'
expect counts-analytic 0 out "38497 valid and fit in memory, all ranked by the analytic model (--analytic)" \
	"$BIN" --model 13b --cluster dgx-a100 --gpus 64 --analytic
expect part-node 0 out "4 GPUs (part of one node of 8 A100" "$BIN" --model 125m --cluster dgx --gpus 4
expect one-node 0 out "8 GPUs (1 node x 8 A100" "$BIN" --model 125m --cluster dgx --gpus 8
# a short step's breakdown in ms; the table's short forms explained
if expect legend 0 out "sp ovl: sequence parallel with TP communication overlapped" \
	"$BIN" --model 125m --cluster dgx --gpus 8 --global-batch 8 --layout tp=2,sp=1,tp_overlap=1,recompute=full,recompute_layers=3; then
	has legend out "recompute full:N: full recompute of the first N layers"
	has legend out "step time breakdown (ms per step, sums to"
fi
# a CP group across nodes is named (text and JSON tiers.cp)
if expect cp-tier 0 out "CP on ib-ndr" \
	"$BIN" --model llama3.1-8b --cluster dgx-h100 --gpus 16 --seq 131072 --global-batch 16 --layout tp=1,cp=16,pp=1; then
	run "$BIN" --model llama3.1-8b --cluster dgx-h100 --gpus 16 --seq 131072 --global-batch 16 --layout tp=1,cp=16,pp=1 --json
	jcheck cp-tier "$OUT" '.layouts[0].tiers.cp == 1 and .layouts[0].tiers.tp == -1'
fi

# ---- timeline ---------------------------------------------------------------------
# The simulated schedule of the best layout: header, one row per operation;
# every rank's operations do not overlap; the last ends at the step time
# minus the optimizer.
TL=$TMP/timeline.tsv
if expect timeline 0 out "best layouts" "$BIN" --model 22b --cluster dgx-a100 \
	--gpus 16 --global-batch 32 --layout pp=4,vp=1,schedule=zb-h1 --timeline "$TL"; then
	if ! grep -q '^rank	chunk	microbatch	kind	start_s	end_s$' "$TL"; then
		fail "timeline: header missing"
	elif ! awk -F'\t' 'NR > 2 && $1 >= 0 && ($4 == "F" || $4 == "B" || $4 == "W") {
			if ($1 in last && $5 < last[$1] - 1e-9) bad = 1
			last[$1] = $6; n[$4]++
		} END { exit !(bad == 0 && n["F"] > 0 && n["F"] == n["B"] && n["B"] == n["W"]) }' "$TL"; then
		fail "timeline: overlapping operations on a rank, or F/B/W counts differ"
	elif ls "$TMP"/timeline.tsv.tmp.* >/dev/null 2>&1; then
		fail "timeline: temporary file left behind"
	fi
fi
# the traffic the step adds after the pipeline (here ZeRO-2's reductions of
# the earlier micro-batches, not overlapped) is a DP span on rank -1 that
# ends where the optimizer starts: no gap, and it is the step's dp_comm
TL2=$TMP/timeline-zero2.tsv
if expect timeline-tail 0 out "best layouts" "$BIN" --model 13b --cluster dgx-a100 --gpus 128 \
	--layout tp=2,pp=1,dp=64,cp=1,mbs=1,zero=2,recompute=none,sp=1,tp_overlap=0 \
	--no-dp-overlap --global-batch 1024 --timeline "$TL2"; then
	awk -F'\t' '$1 == -1 && $4 == "DP" {dp_end = $6; n++} $4 == "OPT" {opt = $5}
		END {exit !(n == 1 && dp_end == opt)}' "$TL2" ||
		fail "timeline-tail: no rank -1 DP span ending where OPT starts"
fi
# what the README says of the columns: chunk is the model chunk in layer
# order, 0 .. pp*vp-1, on rank chunk mod pp; microbatch 0 .. microbatches-1;
# each chunk and micro-batch one F and one BW; the last row ends at step_s
TL3=$TMP/timeline-chunks.tsv
if expect timeline-chunks 0 out '"layouts"' "$BIN" --model 22b --cluster dgx-a100 --gpus 16 \
	--global-batch 32 --layout tp=4,pp=4,vp=3,schedule=interleaved --timeline "$TL3" --json; then
	read -r t_pp t_vp t_m t_step <<EOF
$(jq -r '.layouts[0] | "\(.layout.pp) \(.layout.vp) \(.microbatches) \(.step_s)"' "$OUT")
EOF
	awk -F'\t' -v pp="$t_pp" -v vp="$t_vp" -v m="$t_m" -v step="$t_step" '
		NR > 2 && $1 >= 0 && ($4 == "F" || $4 == "BW") {
			if ($2 < 0 || $2 >= pp * vp || $2 % pp != $1 || $3 < 0 || $3 >= m) bad = 1
			n[$2 " " $3 " " $4]++; ops++
		}
		NR > 2 && $6 + 0 > end { end = $6 + 0 }
		END {
			for (k in n) if (n[k] != 1) bad = 1
			exit !(!bad && ops == 2 * pp * vp * m &&
			       sprintf("%.9f", end) == sprintf("%.9f", step))
		}' "$TL3" ||
		fail "timeline-chunks: chunk / microbatch out of the documented range, an operation missing or twice, or the last end is not step_s $t_step"
fi
# a file that cannot be written is said before the search: nothing printed
if expect timeline-bad-path 2 err "--timeline $TMP/no/such/dir/t.tsv: directory $TMP/no/such/dir: No such file or directory" \
	"$BIN" --model 22b --cluster dgx-a100 --gpus 8 --global-batch 8 --timeline "$TMP/no/such/dir/t.tsv"; then
	[ -s "$OUT" ] && fail "timeline-bad-path: the plan was printed"
fi
# a best layout too long to play out (96 x 1000000 cells): the plan is
# printed (its step the analytic model's), then why no timeline, exit 2
if expect timeline-too-long 2 err "--timeline $TMP/tl-long.tsv not written: the best layout's pipeline, 96 x 1000000 chunk x micro-batch cells, is more than the 1048576 the simulator plays out" \
	"$BIN" --model 175b --cluster dgx-a100 --gpus 64 --global-batch 1000000 --timeline "$TMP/tl-long.tsv"; then
	grep -q "^best layouts (step time from the analytic model" "$OUT" && [ ! -e "$TMP/tl-long.tsv" ] ||
		fail "timeline-too-long: no plan printed, or a file written"
fi
expect timeline-dir 2 err "--timeline $TMP: is a directory" "$BIN" --model 22b --cluster dgx-a100 \
	--gpus 8 --global-batch 8 --timeline "$TMP"
# --timeline /dev/stdout with stdout sent to a file: written through the
# process's own descriptor, so the file holds the timeline and then the
# plan (a rename would have replaced the file, a new open overwritten it)
cases=$((cases + 1))
if ! "$BIN" --model 125m --cluster dgx-a100 --gpus 8 --timeline /dev/stdout >"$TMP/tl-stdout.txt" 2>"$ERR"; then
	fail "timeline-stdout: exit $?: $(head -c 300 "$ERR")"
elif ! grep -q '^rank	chunk	microbatch	kind' "$TMP/tl-stdout.txt"; then
	fail "timeline-stdout: no timeline in the file"
elif ! grep -q '^best layouts' "$TMP/tl-stdout.txt"; then
	fail "timeline-stdout: no plan in the file"
else
	echo "ok: timeline-stdout"
fi
# through a symbolic link: the link stays, the file it names is replaced
# and keeps its permissions
printf 'old\n' >"$TMP/tl-target.tsv"
chmod 600 "$TMP/tl-target.tsv"
ln -sf tl-target.tsv "$TMP/tl-symlink.tsv"
if expect timeline-symlink 0 out "best layouts" "$BIN" --model 125m --cluster dgx-a100 \
	--gpus 8 --timeline "$TMP/tl-symlink.tsv"; then
	[ -L "$TMP/tl-symlink.tsv" ] || fail "timeline-symlink: the link was replaced"
	grep -q '^rank	chunk	microbatch	kind' "$TMP/tl-target.tsv" || fail "timeline-symlink: the target was not written"
	[ "$(stat -c %a "$TMP/tl-target.tsv")" = 600 ] || fail "timeline-symlink: mode $(stat -c %a "$TMP/tl-target.tsv"), not 600"
fi
# a dangling link: the file it names is created, the link stays; a loop
# of links is refused before the search (exit 2), the links left as they were
ln -sf tl-made.tsv "$TMP/tl-dangling.tsv"
if expect timeline-dangling 0 out "best layouts" "$BIN" --model 125m --cluster dgx-a100 \
	--gpus 8 --timeline "$TMP/tl-dangling.tsv"; then
	[ -L "$TMP/tl-dangling.tsv" ] || fail "timeline-dangling: the link was replaced"
	grep -q '^rank	chunk	microbatch	kind' "$TMP/tl-made.tsv" || fail "timeline-dangling: the named file was not written"
fi
ln -sf tl-loop2.tsv "$TMP/tl-loop1.tsv"
ln -sf tl-loop1.tsv "$TMP/tl-loop2.tsv"
if expect timeline-loop 2 err "tl-loop1.tsv: a loop of symbolic links" "$BIN" --model 125m \
	--cluster dgx-a100 --gpus 8 --timeline "$TMP/tl-loop1.tsv"; then
	[ -s "$OUT" ] && fail "timeline-loop: the plan was printed"
	[ -L "$TMP/tl-loop1.tsv" ] && [ -L "$TMP/tl-loop2.tsv" ] || fail "timeline-loop: a link was replaced"
fi
# the timeline never replaces a file the plan read (the model, the cluster
# or the calibration, also through a link): exit 2 before the search
cp "$ROOT/tests/data/models/minimal.yaml" "$TMP/tl-model.yaml"
cp "$TMP/tl-model.yaml" "$TMP/tl-model.orig"
ln -sf "$TMP/tl-model.yaml" "$TMP/tl-link.yaml"
expect timeline-is-model 2 err "that is the input file" "$BIN" --model "$TMP/tl-model.yaml" \
	--cluster dgx-a100 --gpus 8 --timeline "$TMP/tl-link.yaml"
cmp -s "$TMP/tl-model.yaml" "$TMP/tl-model.orig" || fail "timeline-is-model: the model file was changed"
cp "$ROOT/topologies/dgx-a100.yaml" "$TMP/tl-cluster.yaml"
expect timeline-is-cluster 2 err "that is the input file" "$BIN" --model 125m \
	--cluster "$TMP/tl-cluster.yaml" --gpus 8 --timeline "$TMP/tl-cluster.yaml"
cmp -s "$TMP/tl-cluster.yaml" "$ROOT/topologies/dgx-a100.yaml" || fail "timeline-is-cluster: the cluster file was changed"

# Megatron refuses interleaving on pp = 2 without --overlap-p2p-communication
# (validate_args): with blocking transfers such a layout is rejected, named
expect interleave-pp2-blocking 1 err "interleaving with blocking pipeline transfers needs pp >= 3" \
	"$BIN" --model 13b --cluster dgx-a100 --gpus 64 --layout pp=2,schedule=interleaved --no-p2p-overlap
expect interleave-pp2-overlapped 0 out "interleaved" \
	"$BIN" --model 13b --cluster dgx-a100 --gpus 64 --layout pp=2,schedule=interleaved

# ---- pipeline transfers: overlapped (interleaved default) vs blocking --------------
P2P_LAYOUT=tp=8,pp=8,dp=1,mbs=1,vp=3,sp=1,recompute=selective,zero=0,tp_overlap=0
if expect p2p-overlap 0 out '"step_s"' "$BIN" --model 175b --cluster dgx-a100 \
	--gpus 64 --global-batch 64 --layout "$P2P_LAYOUT" --json; then
	cp "$OUT" "$TMP/p2p-ovl.json"
	if expect p2p-blocking 0 out '"step_s"' "$BIN" --model 175b --cluster dgx-a100 \
		--gpus 64 --global-batch 64 --layout "$P2P_LAYOUT" --json --no-p2p-overlap; then
		a=$(jq '.layouts[0].step_s' "$TMP/p2p-ovl.json")
		b=$(jq '.layouts[0].step_s' "$OUT")
		awk -v a="$a" -v b="$b" 'BEGIN { exit !(b > a) }' ||
			fail "p2p-blocking: step $b s not above the overlapped $a s"
	fi
fi

# ---- spread of GPU speeds: the slowest GPU paces the step -------------------------
if expect gpu-variation-0 0 out '"step_s"' "$BIN" --model 22b --cluster dgx-a100 \
	--gpus 8 --global-batch 8 --layout tp=8,mbs=1 --json --gpu-variation 0; then
	cp "$OUT" "$TMP/gv0.json"
	if expect gpu-variation-default 0 out '"step_s"' "$BIN" --model 22b --cluster dgx-a100 \
		--gpus 8 --global-batch 8 --layout tp=8,mbs=1 --json; then
		a=$(jq '.layouts[0].step_s' "$TMP/gv0.json")
		b=$(jq '.layouts[0].step_s' "$OUT")
		awk -v a="$a" -v b="$b" 'BEGIN { exit !(b > a) }' ||
			fail "gpu-variation: default step $b s not above the ideal $a s"
	fi
fi
# the factor stated is the one applied: of the GPUs the layout runs on (5),
# not of the whole node the cluster rounds up to (8: it said x1.029 and
# applied x1.024); one GPU waits for no other
# --grads-16bit with ZeRO-0: the optimizer step's fp32 copy of the
# gradients (4 B a parameter, activations freed) is the peak, 89.47 GB of
# the H100's 85.5: the layout does not fit (it was priced at 84.03 GB, the
# pipeline's peak, and called fitting); with the distributed optimizer the
# copy is a quarter and the pipeline's peak is the peak
G16="--model llama2-70b --cluster dgx-h100 --gpus 64 --global-batch 256 --layout tp=8,pp=2,dp=4,mbs=1,vp=1,sp=1,recompute=none,zero=0,schedule=1f1b,tp_overlap=0"
# shellcheck disable=SC2086
if expect grads16-optimizer-peak 1 out '"memory_peak_at": "optimizer_step"' "$BIN" $G16 --grads-16bit --json; then
	jcheck grads16-optimizer-peak "$OUT" '.closest_miss.memory_bytes.activations == 0 and
		(.closest_miss.memory_bytes.total | . > 89.4e9 and . < 89.5e9)'
	# shellcheck disable=SC2086
	run "$BIN" $G16 --grads-16bit
	has grads16-optimizer-peak out "; the peak is the optimizer step (the 16-bit gradients' fp32 copy in optimizer, activations freed)"
	# shellcheck disable=SC2086
	expect grads16-optimizer-peak-zero1 0 out '"memory_peak_at": "pipeline"' "$BIN" $(echo "$G16" | sed 's/zero=0/zero=1/') \
		--grads-16bit --json
fi
# a figure the cluster file says is unverified is not called datasheet
if expect tier-unverified 0 out "tier roce-200g (roce): 12.5 GB/s per GPU UNVERIFIED (an example node: " \
	"$BIN" --model 125m --cluster l40s-ethernet --gpus 16; then
	has tier-unverified out "tier pcie4 (pcie): 31.0 GB/s per GPU datasheet"
	grep -q "roce-200g.*datasheet" "$OUT" && fail "tier-unverified: the example NICs called datasheet"
	"$BIN" report --model 125m --cluster l40s-ethernet --gpus 16 --no-plots -o "$TMP/rep-unverified" >/dev/null 2>&1 &&
		grep -q "^| tier roce-200g (roce), per GPU | 12.5 GB/s | UNVERIFIED: an example node: " "$TMP/rep-unverified/report.md" &&
		grep -q "^| tier pcie4 (pcie), per GPU | 31.0 GB/s | datasheet |" "$TMP/rep-unverified/report.md" ||
		fail "tier-unverified: the report's Inputs table does not label the tiers so"
fi
if expect gpu-variation-5 0 out '"step_s"' "$BIN" --model 125m --cluster mi300x --gpus 5 \
	--global-batch 5 --layout dp=5,mbs=1 --json; then
	cp "$OUT" "$TMP/gv5.json"
	run "$BIN" --model 125m --cluster mi300x --gpus 5 --global-batch 5 --layout dp=5,mbs=1 --json --gpu-variation 0
	jq -e --slurpfile v "$OUT" '(.time_s = .layouts[0].time_s.compute / $v[0].layouts[0].time_s.compute) |
		(.time_s / .straggler_factor - 1 | fabs) < 1e-9 and .straggler_factor > 1.02 and .straggler_factor < 1.025' \
		"$TMP/gv5.json" >/dev/null || fail "gpu-variation-5: the straggler factor stated is not the one applied"
	run "$BIN" --model 125m --cluster mi300x --gpus 5 --global-batch 5 --layout dp=5,mbs=1
	has gpu-variation-5 out "the slowest of 5 GPUs paces each step, compute x1.024"
	run "$BIN" --model 125m --cluster mi300x --gpus 1 --global-batch 1
	has gpu-variation-1 out "one GPU, no slower one to wait for, compute x1.000"
fi
# --gpus beyond an outermost tier that spans fewer GPUs
sed 's/^nodes: 4$/nodes: 1/; s/^    span_gpus: 8$/    span_gpus: 16/' \
	"$ROOT/tests/data/bad/cluster-outer-span-small.yaml" | grep -v '^# expect' >"$TMP/span16.yaml"
expect outer-span-gpus 2 err "spans only 16 GPUs" "$BIN" --model 125m \
	--cluster "$TMP/span16.yaml" --gpus 32
# a calibration file named by the cluster file that cannot be read: the
# error names the calibration path and the cluster file's line
mkdir -p "$TMP/caldir"
{ cat "$ROOT/topologies/dgx-a100.yaml"; echo "calibration: caldir"; } >"$TMP/calnamed.yaml"
calline=$(grep -n '^calibration: caldir$' "$TMP/calnamed.yaml" | cut -d: -f1)
if expect calibration-is-directory 3 err "caldir: error: read error" \
	"$BIN" --model 125m --cluster "$TMP/calnamed.yaml" --gpus 8; then
	has calibration-is-directory err "calnamed.yaml:$calline:14: note: the calibration file is named here"
fi
# a list with an empty item (an unset shell variable) is a mistake, as in
# --layout: it was measured as the items that were there
expect calibrate-collectives-empty-item 2 err "--collectives: expected a comma-separated list, got 'all_reduce,,all_gather'" \
	"$BIN" calibrate --collectives all_reduce,,all_gather --out "$TMP/cal-list.yaml"
expect calibrate-precisions-empty-item 2 err "--gemm-precisions: expected a comma-separated list, got 'bf16,'" \
	"$BIN" calibrate --gemm-precisions bf16, --out "$TMP/cal-list.yaml"
expect calibrate-precisions-fp8 2 err "--gemm-precisions: fp8 GEMMs are not measured by any backend" \
	"$BIN" calibrate --gemm-precisions bf16,fp8 --out "$TMP/cal-list.yaml"
# YAML's null for an optional string is the key left out: a cluster's
# `calibration: ~` is no calibration (it opened a file named "~"), a
# model's `description: ~` no description (printed "(~)")
sed 's/^name: .*/&\ncalibration: ~/' "$ROOT/topologies/dgx-a100.yaml" >"$TMP/cal-null.yaml"
expect cluster-calibration-null 0 out "no calibration file: datasheet and published figures only" \
	"$BIN" --model 125m --cluster "$TMP/cal-null.yaml" --gpus 8 --analytic
printf 'name: m\ndescription: ~\nlayers: 2\nhidden: 64\nheads: 4\nvocab: 100\nseq: 32\nglobal_batch: 8\n' >"$TMP/desc-null.yaml"
if expect model-description-null 0 out "tpplan 0.1.0: m on dgx-a100" "$BIN" --model "$TMP/desc-null.yaml" \
	--cluster dgx-a100 --gpus 8 --analytic; then
	grep -q "(~)" "$OUT" && fail "model-description-null: printed as (~)"
fi
# calibrate --import: empty names and an --out that is the --import file
# are usage errors; the measurement is left as it was
expect calibrate-out-empty 2 err "--out: the file name is empty" "$BIN" calibrate \
	--import "$ROOT/tests/data/nccl-tests/all_reduce_perf.txt" --group 8 --out ""
expect calibrate-import-empty 2 err "--import: the file name is empty" "$BIN" calibrate \
	--import "" --group 8 --out "$TMP/cal-empty.yaml"
cp "$ROOT/tests/data/nccl-tests/all_reduce_perf.txt" "$TMP/raw.txt"
if expect calibrate-out-is-import 2 err "is the --import file" "$BIN" calibrate \
	--import "$TMP/raw.txt" --group 8 --out "$TMP/raw.txt"; then
	cmp -s "$ROOT/tests/data/nccl-tests/all_reduce_perf.txt" "$TMP/raw.txt" ||
		fail "calibrate-out-is-import: the measurement was changed"
fi
# an --import that is a directory, or whose lines end in CR alone, is
# said so (it was "read error" and "no result rows found")
expect import-directory 3 err "is a directory, not nccl-tests output" "$BIN" calibrate \
	--import "$TMP" --group 8 --out "$TMP/never.yaml"
tr '\n' '\r' <"$ROOT/tests/data/nccl-tests/all_reduce_perf.txt" >"$TMP/cr-only.txt"
expect import-cr-alone 3 err "cr-only.txt:1:73: error: a carriage return inside a line" "$BIN" calibrate \
	--import "$TMP/cr-only.txt" --group 8 --out "$TMP/never.yaml"
# an NCCL error the run recorded at its end is a warning at its line; the
# sizes it reported are imported
{ cat "$ROOT/tests/data/nccl-tests/all_reduce_perf.txt"; echo "# error: NET/IB : Got completion from peer with error 12"; } >"$TMP/nccl-err.txt"
el=$(wc -l <"$TMP/nccl-err.txt")
if expect import-nccl-error 0 err "nccl-err.txt:$el:1: warning: the run recorded an NCCL error: \"NET/IB : Got completion from peer with error 12\"" \
	"$BIN" calibrate --import "$TMP/nccl-err.txt" --group 8 --out "$TMP/cal-nccl-err.yaml"; then
	[ -s "$TMP/cal-nccl-err.yaml" ] || fail "import-nccl-error: no calibration written"
fi
# an --out that holds another kind of file (a model, as --model names it)
# is refused, not moved aside as "the calibration that was there"; one
# that holds a calibration is kept beside the new one
cp "$ROOT/tests/data/models/minimal.yaml" "$TMP/model-out.yaml"
if expect calibrate-out-not-calibration 2 err "--out $TMP/model-out.yaml holds a file that is not a tpplan calibration" \
	"$BIN" calibrate --import "$ROOT/tests/data/nccl-tests/all_reduce_perf.txt" --group 8 --out "$TMP/model-out.yaml"; then
	cmp -s "$ROOT/tests/data/models/minimal.yaml" "$TMP/model-out.yaml" && ! ls "$TMP"/model-out.yaml.*.bak >/dev/null 2>&1 ||
		fail "calibrate-out-not-calibration: the model file was changed or moved"
fi
rm -f "$TMP"/cal-twice.yaml*
if "$BIN" calibrate --import "$ROOT/tests/data/nccl-tests/all_reduce_perf.txt" --group 8 --out "$TMP/cal-twice.yaml" >/dev/null 2>&1; then
	expect calibrate-out-calibration-kept 0 out "the calibration that was at $TMP/cal-twice.yaml is kept as" \
		"$BIN" calibrate --import "$ROOT/tests/data/nccl-tests/all_reduce_perf.txt" --group 8 --out "$TMP/cal-twice.yaml"
else
	fail "calibrate-out-calibration-kept: the first import failed"
fi
# an empty file there is kept as what it is, not called a calibration
: >"$TMP/cal-empty-out.yaml"
expect calibrate-out-empty-kept 0 out "the empty file that was at $TMP/cal-empty-out.yaml is kept as" \
	"$BIN" calibrate --import "$ROOT/tests/data/nccl-tests/all_reduce_perf.txt" --group 8 --out "$TMP/cal-empty-out.yaml"
# results nccl-tests itself marked wrong are refused: the in-place #wrong
# column, the "Out of bounds values ... FAILED" verdict, and their JSON forms
NT=$ROOT/tests/data/nccl-tests
awk 'NR == 30 {$NF = 3} {print}' "$NT/all_reduce_perf.txt" >"$TMP/ipw.txt"
expect import-inplace-wrong 3 err "ipw.txt:30:57: error: nccl-tests reported 3 wrong elements at this size (in place)" \
	"$BIN" calibrate --import "$TMP/ipw.txt" --group 8 --out "$TMP/never.yaml"
sed 's/# Out of bounds values : 0 OK/# Out of bounds values : 10 FAILED/' "$NT/all_reduce_perf.txt" >"$TMP/oob.txt"
expect import-oob-text 3 err "oob.txt:50:1: error: nccl-tests reported out-of-bounds values" \
	"$BIN" calibrate --import "$TMP/oob.txt" --group 8 --out "$TMP/never.yaml"
sed 's/"count": 0,/"count": 12,/' "$NT/reduce_scatter_perf.json" >"$TMP/oob.json"
expect import-oob-json 3 err "oob.json:606:19: error: JSON: nccl-tests reported out-of-bounds values" \
	"$BIN" calibrate --import "$TMP/oob.json" --group 8 --out "$TMP/never.yaml"
awk '/"in_place": \{/ {ip = 1} ip && /"nwrong": 0.0/ {sub(/0.0/, "12.0"); ip = 0} {print}' \
	"$NT/reduce_scatter_perf.json" >"$TMP/ipw.json"
expect import-inplace-wrong-json 3 err "ipw.json:216:16: error: JSON: nccl-tests reported 12 wrong elements" \
	"$BIN" calibrate --import "$TMP/ipw.json" --group 8 --out "$TMP/never.yaml"
[ -e "$TMP/never.yaml" ] && fail "import of a failed run wrote a calibration"
# a text run cut short (no "# Avg bus bandwidth" summary) is imported
# with a warning
head -n 35 "$NT/all_reduce_perf.txt" >"$TMP/cut.txt"
expect import-cut-short 0 err "cut.txt: warning: no \"# Avg bus bandwidth\" summary line" \
	"$BIN" calibrate --import "$TMP/cut.txt" --group 8 --out "$TMP/cut.yaml"
expect import-whole 0 out "written to" \
	"$BIN" calibrate --import "$NT/all_reduce_perf.txt" --group 8 --out "$TMP/whole.yaml" &&
	grep -q "cut short" "$ERR" && fail "import-whole: a whole run warned as cut short"
# Review 2026-12-05.  Two runs in one text file (a job log with all_reduce
# then all_gather) were one table under the last name, ranks counted twice
{ sed -n '1,/^#  *1048576 /p' "$NT/all_reduce_perf.txt" | head -n 40; cat "$NT/all_gather_perf.txt"; } >"$TMP/two-runs.txt"
expect import-two-runs 3 err "two-runs.txt:46:3: error: a second nccl-tests run in the file (the first starts on line 6)" \
	"$BIN" calibrate --import "$TMP/two-runs.txt" --group 8 --out "$TMP/never.yaml"
# --tier 1 for a group the file puts on one host wrote a calibration that
# planning refused
expect import-tier-one-host 2 err "--tier 1 (across nodes), but the 8 ranks of the group are all on one host" \
	"$BIN" calibrate --import "$NT/all_reduce_perf.txt" --group 8 --tier 1 --out "$TMP/never.yaml"
# a JSON file after a UTF-8 byte-order mark is read as JSON
{ printf '\357\273\277'; cat "$NT/reduce_scatter_perf.json"; } >"$TMP/bom.json"
expect import-json-bom 0 out "written to" \
	"$BIN" calibrate --import "$TMP/bom.json" --group 16 --tier 1 --out "$TMP/bom.yaml"
# a row's bad time is shown at its time column, not the size's
awk 'NR == 22 {$6 = "0.00"} {print}' "$NT/all_reduce_perf.txt" >"$TMP/zero-time.txt"
sed -n 22p "$TMP/zero-time.txt" | grep -q ' 0.00 ' || fail "import-zero-time: the test file was not made"
expect import-zero-time 3 err "zero-time.txt:22:" \
	"$BIN" calibrate --import "$TMP/zero-time.txt" --group 8 --out "$TMP/never.yaml" &&
	{ has import-zero-time err "time must be a positive number"
	  grep -q "zero-time.txt:22:1:" "$ERR" && fail "import-zero-time: placed at the row's start"; }
# JSON is checked as the text is: a negative time beside per-iteration
# statistics, an nwrong that is not a count
sed '194s/"time": 63.090787/"time": -5/' "$NT/reduce_scatter_perf.json" >"$TMP/neg.json"
expect import-json-negative 3 err "JSON: negative time -5 us" \
	"$BIN" calibrate --import "$TMP/neg.json" --group 16 --tier 1 --out "$TMP/never.yaml"
sed '197s/"nwrong": 0.0/"nwrong": -1/' "$NT/reduce_scatter_perf.json" >"$TMP/nw.json"
expect import-json-nwrong 3 err "JSON: \"nwrong\" -1 is not a count of elements" \
	"$BIN" calibrate --import "$TMP/nw.json" --group 16 --tier 1 --out "$TMP/never.yaml"
[ -e "$TMP/never.yaml" ] && fail "a refused import wrote a calibration"
# calibrations are not merged: a second --calibration or --import is a
# usage error, not silently the one that counts
# an option where a value belongs, and a directory for a cluster file
expect model-no-value 2 err "--model needs a value (a name or a file), got the option '--cluster'" \
	"$BIN" --model --cluster dgx-a100 --gpus 8
expect cluster-directory 3 err "cluster '$TMP' is a directory" "$BIN" --model 125m --cluster "$TMP"
expect mbs-over-batch 1 err "mbs=1024 is more than the global batch of 512 sequences" \
	"$BIN" --model 175b --cluster dgx-a100 --gpus 64 --layout mbs=1024 --global-batch 512
# every value option: given twice is a usage error, not "the last one wins"
expect model-twice 2 err "--model is given twice" \
	"$BIN" --model 175b --model "$ROOT/tests/data/models/minimal.yaml" --cluster dgx-a100 --gpus 8
expect gpus-twice 2 err "--gpus is given twice" \
	"$BIN" report --model 125m --cluster dgx-a100 --gpus 8 --gpus 16 -o "$TMP/twice"
expect switch-twice 0 out "best layouts" \
	"$BIN" --model 125m --cluster dgx-a100 --gpus 8 --no-dp-overlap --no-dp-overlap
expect validate-stack-twice 2 err "tpplan: validate: --stack is given twice" \
	"$BIN" validate "$ROOT/tests/data/runs/one-good-one-bad.tsv" --stack legacy --stack modern
# --opt=value, as the getopt_long commands take it; the same checks
expect validate-stack-equals 0 out "rows 2" \
	"$BIN" validate "$ROOT/tests/data/runs/meta-llama3-405b.tsv" --stack=modern --attention=flash
expect validate-stack-equals-bad 2 err "--stack: expected legacy or modern, got 'bogus'" \
	"$BIN" validate "$ROOT/tests/data/runs/meta-llama3-405b.tsv" --stack=bogus
expect validate-stack-equals-twice 2 err "--stack is given twice" \
	"$BIN" validate "$ROOT/tests/data/runs/meta-llama3-405b.tsv" --stack=modern --stack legacy
expect validate-json-value 2 err "unknown option '--json=1'" \
	"$BIN" validate "$ROOT/tests/data/runs/meta-llama3-405b.tsv" --json=1
expect validate-attention-twice 2 err "tpplan: validate: --attention is given twice" \
	"$BIN" validate --attention flash "$ROOT/tests/data/runs/one-good-one-bad.tsv" --attention unfused
# validate reads its options as every command does (getopt_long: the
# shared helpers of cli/args.c): an option for a value, a second file, an
# unknown letter, and a file after "--"
expect validate-stack-option 2 err "validate: --stack needs a value, got the option '--json'" \
	"$BIN" validate "$ROOT/tests/data/runs/meta-llama3-405b.tsv" --stack --json
expect validate-two-files 2 err "validate: only one runs file, got 'b.tsv'" \
	"$BIN" validate a.tsv b.tsv
expect validate-unknown-letter 2 err "unknown option '-x' (try \`tpplan validate --help\`)" \
	"$BIN" validate -x "$ROOT/tests/data/runs/meta-llama3-405b.tsv"
expect validate-after-dashes 0 out "rows 2" \
	"$BIN" validate --stack modern -- "$ROOT/tests/data/runs/meta-llama3-405b.tsv"
expect calibration-twice 2 err "--calibration is given twice" \
	"$BIN" --model 125m --cluster dgx-a100 --calibration a.yaml --calibration b.yaml
expect import-twice 2 err "--import is given twice" \
	"$BIN" calibrate --import a.txt --import b.txt --group 8 --out "$TMP/never.yaml"
# a calibration written over another keeps the old one as PATH.<mtime>.bak
# and says so (never lose a measured calibration)
if expect calibrate-keep-first 0 out "written to" "$BIN" calibrate \
	--import "$ROOT/tests/data/nccl-tests/all_reduce_perf.txt" --group 8 --out "$TMP/cal-keep.yaml" &&
	cp "$TMP/cal-keep.yaml" "$TMP/cal-keep.first" &&
	expect calibrate-keep-again 0 out "is kept as $TMP/cal-keep.yaml." "$BIN" calibrate \
		--import "$ROOT/tests/data/nccl-tests/all_reduce_perf.txt" --group 8 --out "$TMP/cal-keep.yaml"; then
	kept=$(sed -n "s/.* is kept as \(.*\)$/\1/p" "$OUT")
	[ -f "$kept" ] && cmp -s "$kept" "$TMP/cal-keep.first" ||
		fail "calibrate-keep: '$kept' is not the earlier calibration"
fi
# the same through /proc/self/root (a path under /proc naming a regular
# file): replaced atomically and kept, not overwritten in place
mkdir -p "$TMP/calproc"
if expect calibrate-keep-proc 0 out "written to" "$BIN" calibrate \
	--import "$ROOT/tests/data/nccl-tests/all_reduce_perf.txt" --group 8 --out "/proc/self/root$TMP/calproc/cal.yaml" &&
	expect calibrate-keep-proc 0 out "is kept as /" "$BIN" calibrate \
		--import "$ROOT/tests/data/nccl-tests/all_reduce_perf.txt" --group 8 --out "/proc/self/root$TMP/calproc/cal.yaml"; then
	[ "$(find "$TMP/calproc" -name 'cal.yaml.*.bak' | wc -l)" -eq 1 ] ||
		fail "calibrate-keep-proc: no kept calibration beside it: $(ls "$TMP/calproc")"
fi
# --out /dev/stdout redirected to a file: the file is replaced by the
# calibration (and the old one kept), the summary printed after it does
# not end up in it: it loads
printf 'old\n' >"$TMP/cal-stdout.yaml"
cases=$((cases + 1))
if "$BIN" calibrate --import "$ROOT/tests/data/nccl-tests/all_reduce_perf.txt" --group 8 \
	--out /dev/stdout >"$TMP/cal-stdout.yaml" 2>"$ERR" &&
	"$BIN" --model 125m --cluster dgx-a100 --gpus 8 --calibration "$TMP/cal-stdout.yaml" >/dev/null 2>"$ERR"; then
	echo "ok: calibrate-out-stdout"
else
	fail "calibrate-out-stdout: $(head -n 3 "$ERR")"
fi
# a link that cannot be followed (a file on its way) is refused before
# the import, a usage error (2) as every refused --out; the link stays a
# link
: >"$TMP/cal-plain"
ln -sf cal-plain/x "$TMP/cal-badlink.yaml"
if expect calibrate-badlink 2 err "cannot follow the symbolic link" "$BIN" calibrate \
	--import "$ROOT/tests/data/nccl-tests/all_reduce_perf.txt" --group 8 --out "$TMP/cal-badlink.yaml"; then
	[ -L "$TMP/cal-badlink.yaml" ] || fail "calibrate-badlink: the link was replaced"
fi
expect timeline-badlink 2 err "cannot follow the symbolic link" "$BIN" --model 125m \
	--cluster dgx-a100 --gpus 8 --timeline "$TMP/cal-badlink.yaml"
# a calibration of another cluster: a table for a tier this cluster does
# not have, or a GEMM faster than the GPU's peak, is an input error
if expect calibrate-import-ok 0 out "written to" "$BIN" calibrate \
	--import "$ROOT/tests/data/nccl-tests/all_reduce_perf.txt" --group 8 \
	--out "$TMP/cal-ar.yaml"; then
	# a written calibration cut short at a line boundary (a copy
	# interrupted) is refused, not planned with as a smaller one
	n=$(wc -l <"$TMP/cal-ar.yaml")
	head -n $((n - 3)) "$TMP/cal-ar.yaml" >"$TMP/cal-cut.yaml"
	expect calibration-cut-short 3 err "cut short" "$BIN" --model 125m --cluster dgx-a100 --gpus 8 \
		--calibration "$TMP/cal-cut.yaml"
	# (ranks_per_node left out: tier 3 with a group of 8 on 8-rank nodes
	# would first be refused as a group that never crossed nodes)
	# (edited by hand: without the counts of meta.tables, which a
	# written file states and an edit would have to keep)
	sed -e 's/^    tier: 0$/    tier: 3/' -e '/^  ranks_per_node:/d' -e '/^  tables:/d' "$TMP/cal-ar.yaml" >"$TMP/cal-tier3.yaml"
	# a calibration of another device: the warning is in the plan's JSON
	# and the report, not on stderr alone
	sed 's/^  device: .*/  device: "AMD EPYC, 2 cores"/' "$TMP/cal-ar.yaml" >"$TMP/cal-dev.yaml"
	run "$BIN" --model 125m --cluster dgx-a100 --gpus 8 --calibration "$TMP/cal-dev.yaml" --json
	if [ "$rc" -eq 0 ]; then
		# at meta.device's line and column
		dl=$(grep -n '^  device:' "$TMP/cal-dev.yaml" | cut -d: -f1)
		jcheck cal-warning-json "$OUT" "(.warnings | length) == 1 and (.warnings[0] | test(\"cal-dev.yaml:$dl:11: warning: measured on .*does not look like the A100\"))"
	else
		fail "cal-warning-json: plan failed"
	fi
	run "$BIN" --model 125m --cluster dgx-a100 --gpus 8 --calibration "$TMP/cal-ar.yaml" --json
	jcheck cal-no-warning-json "$OUT" '.warnings == []'
	# a GEMM rate below the floor (1e-9 TFLOP/s) is refused where it
	# stands (1e-307 priced a step past the largest double: an assertion
	# or "inf" in the JSON); a rate below 1% of the peak is a warning
	printf 'schema: tpplan.calibration/v1\ngemm:\n  - precision: bf16\n    best_tflops: 1e-307\n    points: []\n' >"$TMP/cal-tiny.yaml"
	expect cal-gemm-floor 3 err "cal-tiny.yaml:4:18: error: gemm[0].best_tflops = 1e-307 is out of range" \
		"$BIN" --model 175b --cluster dgx-a100 --gpus 64 --calibration "$TMP/cal-tiny.yaml"
	sed 's/1e-307/1e-9/' "$TMP/cal-tiny.yaml" >"$TMP/cal-slow.yaml"
	run "$BIN" --model 175b --cluster dgx-a100 --gpus 1024 --global-batch 67108864 \
		--calibration "$TMP/cal-slow.yaml" --top 1 --json
	if [ "$rc" -eq 0 ]; then
		jcheck cal-slow-json "$OUT" '(.layouts[0].step_s | isfinite) and .layouts[0].step_s > 1e15 and (.warnings[0] | test("cal-slow.yaml:3:5: warning: gemm bf16: measured 1e-09 TFLOP/s"))'
	else
		fail "cal-slow-json: exit $rc"
	fi
	# an all-reduce calibration: the tier's all-gather and reduce-scatter
	# stay published, and keep their citation beside the calibration's
	expect cal-keeps-citation 0 out "the other collectives as before: 8xH100 SXM: AR ~480 NVLS" \
		"$BIN" --model 125m --cluster dgx-h100 --gpus 8 --calibration "$TMP/cal-ar.yaml"
	if "$BIN" report --model 125m --cluster dgx-a100 --gpus 8 --calibration "$TMP/cal-dev.yaml" \
		--no-plots -o "$TMP/rep-dev" >/dev/null 2>&1; then
		grep -q "Calibration warning: .*does not look like the A100" "$TMP/rep-dev/report.md" ||
			fail "cal-warning-report: report.md does not state the calibration's warning"
	else
		fail "cal-warning-report: report failed"
	fi
	# the plan names the files it read by absolute path (exec --plan
	# from another directory reads the same ones)
	if (cd "$TMP" && "$BIN" --model 125m --cluster dgx-a100 --gpus 8 \
		--calibration cal-ar.yaml --json >"$TMP/abs.json" 2>/dev/null); then
		jcheck plan-abs-paths "$TMP/abs.json" \
			'(.cluster.calibration | startswith("/")) and (.cluster.calibration | endswith("/cal-ar.yaml")) and (.cluster.path | startswith("/"))'
	else
		fail "plan-abs-paths: plan with a relative --calibration failed"
	fi
	expect calibration-other-tier 3 err "cal-tier3.yaml:13:5: error: collectives[0]: tier 3, but cluster dgx-a100 has 2 tiers" \
		"$BIN" --model 125m --cluster dgx-a100 --gpus 8 \
		--calibration "$TMP/cal-tier3.yaml"
	{ grep -v -e '^gemm: \[\]$' -e '^  tables:' "$TMP/cal-ar.yaml"
	  printf 'gemm:\n  - precision: bf16\n    best_tflops: 400\n    points: []\n'; } \
		>"$TMP/cal-gemm-fast.yaml"
	gl=$(grep -n '^  - precision: bf16' "$TMP/cal-gemm-fast.yaml" | cut -d: -f1)
	expect calibration-gemm-over-peak 3 err "cal-gemm-fast.yaml:$gl:5: error: gemm bf16: measured 400 TFLOP/s exceeds the bf16 peak" \
		"$BIN" --model 125m --cluster dgx-a100 --gpus 8 \
		--calibration "$TMP/cal-gemm-fast.yaml"
fi
# calibrate --import checks the file against --group / --tier and names
# --op; planning refuses a group larger than its tier and warns about
# another device; a table without a measured bandwidth is not priced at
# its latency-bound points
expect calibrate-import-group 3 err "--group 4, but the file lists 8 ranks" "$BIN" calibrate \
	--import "$ROOT/tests/data/nccl-tests/all_reduce_perf.txt" --group 4 --out "$TMP/cal-g4.yaml"
expect calibrate-import-hosts 3 err "on 2 hosts (node01,node02)" "$BIN" calibrate \
	--import "$ROOT/tests/data/nccl-tests/reduce_scatter_perf.json" --group 16 --out "$TMP/cal-rs.yaml"
has calibrate-import-hosts err "--tier 1"
# 16 hosts x 8 ranks with long names: the printable hosts list fills and
# ends in ",...", but the host count (and so ranks_per_node) stays exact
{ sed -n '1,9p' "$ROOT/tests/data/nccl-tests/all_reduce_perf.txt"
  r=0
  for h in 01 02 03 04 05 06 07 08 09 10 11 12 13 14 15 16; do
	for d in 0 1 2 3 4 5 6 7; do
		printf '#  Rank %3d Group  0 Pid  %d on gpu-node-%s.rack-a.cluster.example.internal device  %d [0x07] NVIDIA A100-SXM4-80GB\n' \
			"$r" $((41000 + r)) "$h" "$d"
		r=$((r + 1))
	done
  done
  sed -n '18,$p' "$ROOT/tests/data/nccl-tests/all_reduce_perf.txt"; } >"$TMP/h16.txt"
if expect calibrate-import-many-hosts 0 out "128 ranks, 8 per node" "$BIN" calibrate \
	--import "$TMP/h16.txt" --group 128 --tier 1 --out "$TMP/cal-h16.yaml"; then
	grep -q '^  ranks_per_node: 8$' "$TMP/cal-h16.yaml" ||
		fail "calibrate-import-many-hosts: ranks_per_node is not 8"
	grep -q '^  hosts: ".*internal,\.\.\."$' "$TMP/cal-h16.yaml" ||
		fail "calibrate-import-many-hosts: the full hosts list does not end in ,..."
fi
expect calibrate-import-many-hosts-group 3 err "the 128 ranks of the group are on 16 hosts" \
	"$BIN" calibrate --import "$TMP/h16.txt" --group 128 --out "$TMP/never.yaml"
grep -v 'Collective test starting' "$ROOT/tests/data/nccl-tests/all_reduce_perf.txt" >"$TMP/ar8.txt"
expect calibrate-import-no-op 3 err "give --op NAME (one of all_reduce, all_gather" "$BIN" calibrate \
	--import "$TMP/ar8.txt" --group 8 --out "$TMP/cal-ar8.yaml"
if expect calibrate-import-tier0 0 out "written to" "$BIN" calibrate \
	--import "$ROOT/tests/data/nccl-tests/reduce_scatter_perf.json" --group 16 --tier 0 \
	--out "$TMP/cal-rs0.yaml"; then
	expect calibration-group-over-span 3 err "holds 8 GPUs" "$BIN" --model 125m \
		--cluster dgx-a100 --gpus 16 --calibration "$TMP/cal-rs0.yaml"
	has calibration-group-over-span err "cal-rs0.yaml:15:5: error: collectives[0]"
	expect calibration-other-device 0 err "warning: measured on \"NVIDIA H100 80GB HBM3\"" \
		"$BIN" --model 125m --cluster gb200-nvl72 --gpus 72 --calibration "$TMP/cal-rs0.yaml"
fi
head -n 26 "$ROOT/tests/data/nccl-tests/all_reduce_perf.txt" >"$TMP/trunc_all_reduce_perf.txt"
if expect calibrate-import-latency-only 0 out "no fit" "$BIN" calibrate \
	--import "$TMP/trunc_all_reduce_perf.txt" --group 8 --out "$TMP/cal-trunc.yaml"; then
	expect calibration-latency-only 0 out "bandwidth not measured (no fit, sizes to 128 B), above them the published 234.9 GB/s" \
		"$BIN" --model 125m --cluster dgx-a100 --gpus 8 --layout tp=4,pp=1,dp=2,sp=0 \
		--calibration "$TMP/cal-trunc.yaml"
fi
# output that cannot be written ends non-zero; a device is never replaced
if [ -w /dev/full ]; then
	expect stdout-full 4 err "error writing standard output" sh -c \
		"'$BIN' --model 22b --cluster dgx-a100 --gpus 8 >/dev/full"
	expect timeline-full 4 err "write failed" "$BIN" --model 22b --cluster dgx-a100 \
		--gpus 8 --layout pp=2,vp=1 --timeline /dev/full
	[ -c /dev/full ] || fail "timeline-full: /dev/full is no longer a device"
fi
expect layout-duplicate-key 2 err "'tp' is given twice" "$BIN" --model 22b \
	--cluster dgx-a100 --gpus 8 --layout tp=8,tp=4
expect layout-empty-item 2 err "empty item in 'tp=2,'" "$BIN" --model 125m \
	--cluster dgx-a100 --gpus 8 --layout 'tp=2,'
expect layout-empty 2 err "empty item" "$BIN" --model 125m \
	--cluster dgx-a100 --gpus 8 --layout ''
expect layout-twice 2 err "--layout is given twice" "$BIN" --model 125m \
	--cluster dgx-a100 --gpus 8 --layout tp=2 --layout pp=2
expect timeline-analytic 2 err "does not go with --analytic" "$BIN" --model 125m \
	--cluster dgx-a100 --gpus 8 --analytic --timeline "$TMP/tl-analytic.tsv"
# an empty file name is a usage error before the search, as for the other
# file flags (not a system error after the plan is printed)
if expect timeline-empty 2 err "--timeline: the file name is empty" "$BIN" --model 125m \
	--cluster dgx-a100 --gpus 8 --timeline ''; then
	[ -s "$OUT" ] && fail "timeline-empty: the plan was printed"
fi
# no layout the constraints allow is short enough to play out: a usage
# error (not "no feasible layout") before the search, no plan printed
# (the advice names what the constraints pinned: pp, vp and mbs here,
# not just the batch and more GPUs)
if expect timeline-too-large 2 err "--timeline: under these constraints any layout's pipeline has at least 1200000 chunk x micro-batch cells, more than the 1048576 the simulator plays out: no timeline can be written (a smaller --global-batch, a smaller pp in --layout, a smaller vp in --layout, a larger mbs in --layout, or more GPUs)" "$BIN" --model 125m --cluster dgx-a100 \
	--gpus 2 --global-batch 100000 --layout pp=2,vp=6,mbs=1 --timeline "$TMP/tl-big.tsv"; then
	[ -s "$OUT" ] && fail "timeline-too-large: the plan was printed"
fi
expect timeline-too-large-dp 2 err "(a smaller --global-batch, a larger --max-mbs, or a larger dp in --layout (with the GPUs for it))" \
	"$BIN" --model 125m --cluster dgx-a100 --gpus 8 --global-batch 40000000 --layout dp=2 --timeline "$TMP/tl-big.tsv"
if [ -e "$TMP/tl-big.tsv" ]; then fail "timeline-too-large: a file was written"; fi
# far too large: refused before a buffer is sized for it (it once asked
# for 36 GiB, which AddressSanitizer aborts on)
expect timeline-huge 2 err "at least 402653184 chunk x micro-batch cells" "$BIN" --model 125m \
	--cluster dgx-a100 --gpus 8 --top 1 --global-batch 67108864 --layout pp=4,mbs=1,vp=3 \
	--timeline "$TMP/tl-huge.tsv"
expect int-plus-sign 2 err "expected an integer, got '+8'" "$BIN" --model 125m \
	--cluster dgx-a100 --gpus +8
expect double-hex 2 err "expected a number, got '0x10'" "$BIN" --model 125m \
	--cluster dgx-a100 --gpus 8 --time-limit 0x10
expect range-as-typed 2 err "0.50000001 is out of range" "$BIN" --model 125m \
	--cluster dgx-a100 --gpus 8 --gpu-variation 0.50000001
# JSON numbers round-trip (17 significant digits): the time and memory
# breakdowns add up to their totals
if expect json-precision 0 out '"step_s"' "$BIN" --model 2.7b --cluster dgx-a100 \
	--gpus 16 --global-batch 8 --seq 16384 --json; then
	jcheck json-precision "$OUT" '[.layouts[] | (((.time_s | add) - .step_s) | fabs) <= 1e-9 * .step_s] | all'
	jcheck json-precision "$OUT" '[.layouts[] | .memory_bytes | ((([.weights, .grads, .optimizer, .activations, .other, .reserve] | add) - .total) | fabs) <= 1e-9 * .total] | all'
fi
# a search that runs past --time-limit stops with an error naming the flag
if expect time-limit 1 err "raise --time-limit" "$BIN" --model 1t --cluster dgx-a100 \
	--gpus 3072 --max-mbs 64 --time-limit 0.001; then
	has time-limit err "its 0.001 s time limit"
fi
if expect time-limit-json 1 out '"status": "time_limit"' "$BIN" --model 1t --cluster dgx-a100 \
	--gpus 3072 --max-mbs 64 --time-limit 0.001 --json; then
	jcheck time-limit-json "$OUT" '.layouts | length == 0'
fi
expect time-limit-bad 2 err "--time-limit" "$BIN" --model 1t --cluster dgx-a100 --time-limit -1
expect gpu-variation-bad 2 err "--gpu-variation" "$BIN" --model 22b --cluster dgx-a100 \
	--gpu-variation 0.9

# ---- training time (--train-tokens) -------------------------------------------------
# 22b on 8 GPUs, global batch 1024 x 2048 = 2,097,152 tokens a step:
# 1e9 tokens take ceil(476.8) = 477 steps; zero=1, as a plan whose best is
# ZeRO-3 without pipelining takes its range from the ZeRO-3 / FSDP runs
# (accuracy-zero3-plan below)
TT="--model 22b --cluster dgx-a100 --gpus 8 --layout zero=1"
if expect train-tokens-text 0 out "Training on 1B tokens (--train-tokens): 477 steps of 2.097M tokens" \
	"$BIN" $TT --train-tokens 1B; then
	has train-tokens-text out "at the published runs' error range (How sure)"
	has train-tokens-text out "Steps alone:"
fi
if expect train-tokens-json 0 out '"train"' "$BIN" $TT --train-tokens 1e9 --json; then
	jcheck train-tokens-json "$OUT" '.train == {"tokens": 1e9, "tokens_per_step": 2097152, "steps": 477}'
	# every layout: train_s = steps * step_s, GPU-hours = train_s * GPUs / 3600
	jcheck train-tokens-json "$OUT" '[.layouts[] | ((.train_s / (477 * .step_s) - 1) | fabs) < 1e-12 and
		((.train_gpu_hours / (.train_s * (.layout.tp * .layout.pp * .layout.dp * .layout.cp) / 3600) - 1) | fabs) < 1e-12] | all'
fi
# the text's days follow the JSON's seconds
if run "$BIN" $TT --train-tokens 300B && [ "$rc" -eq 0 ]; then
	days=$(sed -n 's/.*Training on 300B tokens (--train-tokens): [0-9]* steps of [^,]*, \([0-9.]*\) days on 8 GPUs.*/\1/p' "$OUT")
	run "$BIN" $TT --train-tokens 300B --json
	jcheck train-tokens-days "$OUT" "((.layouts[0].train_s / 86400) * 10 | round) / 10 == ${days:-0}"
	jcheck train-tokens-days "$OUT" '.train.steps == 143052'
else
	fail "train-tokens-days: exit $rc"
fi
if expect train-tokens-absent 0 out '"train"' "$BIN" $TT --json; then
	jcheck train-tokens-absent "$OUT" '.train == null and .layouts[0].train_s == null and .layouts[0].train_gpu_hours == null'
fi
expect train-tokens-zero 2 err "--train-tokens: 0 is out of range [1, 1e18] tokens" "$BIN" $TT --train-tokens 0
expect train-tokens-sign 2 err "--train-tokens: expected a number of tokens (e.g. 300B, 15T, 2.5e12), got '-5B'" \
	"$BIN" $TT --train-tokens -5B
expect train-tokens-unit 2 err "got '300X'" "$BIN" $TT --train-tokens 300X
expect train-tokens-hex 2 err "got '0x10B'" "$BIN" $TT --train-tokens 0x10B
expect train-tokens-huge 2 err "3e300T is out of range" "$BIN" $TT --train-tokens 3e300T
expect train-tokens-twice 2 err "--train-tokens is given twice" "$BIN" $TT --train-tokens 1B --train-tokens 2B
# whole tokens only; the value is the whole number, so 2.16T over
# 500 x 2048 = 1,024,000 tokens a step is 2,109,375 steps exactly (the
# double 2.16 * 1e12 / 1024000 is a hair above and once made it one more)
expect train-tokens-fraction 2 err "--train-tokens: 1.5 is not a whole number of tokens" "$BIN" $TT --train-tokens 1.5
if expect train-tokens-exact 0 out '"train"' "$BIN" $TT --global-batch 500 --train-tokens 2.16T --json; then
	jcheck train-tokens-exact "$OUT" '.train == {"tokens": 2160000000000, "tokens_per_step": 1024000, "steps": 2109375}'
fi
if expect train-tokens-one-more 0 out '"train"' "$BIN" $TT --global-batch 500 --train-tokens 2160000000001 --json; then
	jcheck train-tokens-one-more "$OUT" '.train.steps == 2109376'
fi
expect train-tokens-kilo 0 out "Training on 1.5K tokens (--train-tokens): 1 step of" "$BIN" $TT --train-tokens 1.5k
expect train-tokens-point 0 out "Training on 500K tokens" "$BIN" $TT --train-tokens .5M
expect train-tokens-one 0 out "Training on 1 token (--train-tokens): 1 step of" "$BIN" $TT --train-tokens 1
# units from where %.4g rounds up to them; whole T past 9999.5T
expect train-tokens-round 0 out "Training on 1T tokens (--train-tokens): 476819 steps" "$BIN" $TT --train-tokens 999.96B
expect train-tokens-many 0 out "Training on 12000T tokens" "$BIN" $TT --train-tokens 12000T
if expect train-tokens-max 0 out "Training on 1000000T tokens (--train-tokens): 476837158204 steps" \
	"$BIN" $TT --train-tokens 1e18; then
	# GPU-hours whole from 100 up: no exponent anywhere in the sentence
	if grep 'Training on' "$OUT" | grep -q 'e+'; then
		fail "train-tokens-max: an exponent in $(grep 'Training on' "$OUT")"
	fi
fi
expect train-tokens-over 2 err "1.1e18 is out of range" "$BIN" $TT --train-tokens 1.1e18
# an integer is compared as written, not as its nearest double: one
# token past 1e18 is out of range, and one past 2^53 is not rounded away
expect train-tokens-over-int 2 err "1000000000000000001 is out of range" "$BIN" $TT \
	--train-tokens 1000000000000000001
expect train-tokens-inexact 2 err "9007199254740993 is above 2^53 and is not held exactly (the nearest is 9007199254740992)" \
	"$BIN" $TT --train-tokens 9007199254740993
# below a second in milliseconds, below a thousandth of a GPU-hour said so
if expect train-tokens-small 0 out "1 step of 4.096K tokens, " \
	"$BIN" --model 125m --cluster dgx-a100 --gpus 8 --global-batch 8 --seq 512 --train-tokens 4096; then
	grep -Eq '1 step of 4.096K tokens, [0-9.]+ ms on 8 GPUs \(< 0.001 GPU-hours\)' "$OUT" ||
		fail "train-tokens-small: $(grep 'Training on' "$OUT")"
fi
# the range is the time over 1 + the published runs' largest and smallest
# error (TPP_ACC_ERR_MAX 0.0663, TPP_ACC_ERR_MIN -0.2691; costmodel/README.md)
if run "$BIN" $TT --train-tokens 300B && [ "$rc" -eq 0 ]; then
	lo=$(sed -n 's/.*at the predicted step; \([0-9.]*\) days to \([0-9.]*\) days at the published.*/\1/p' "$OUT")
	hi=$(sed -n 's/.*at the predicted step; \([0-9.]*\) days to \([0-9.]*\) days at the published.*/\2/p' "$OUT")
	run "$BIN" $TT --train-tokens 300B --json
	jcheck train-tokens-range "$OUT" "(.layouts[0].train_s / 86400 / 1.0663 * 10 | round) / 10 == ${lo:-0} and
		(.layouts[0].train_s / 86400 / 0.7309 * 10 | round) / 10 == ${hi:-0}"
else
	fail "train-tokens-range: exit $rc"
fi
# ZeRO-3 across nodes: no range for it, the time and range of the best
# layout without it instead
if expect train-tokens-zero3 0 out "the published runs' error range does not cover ZeRO-3 across nodes (see the caution); with the best layout without it, " \
	"$BIN" --model 175b --cluster dgx-a100 --gpus 1536 --global-batch 1536 --layout zero=3 --train-tokens 300B; then
	grep -Eq 'with the best layout without it, [0-9.]+ days \([0-9.]+ days to [0-9.]+ days at that range\)' "$OUT" ||
		fail "train-tokens-zero3: $(grep -o 'with the best layout without it.*' "$OUT")"
	alt=$(sed -n 's/.*with the best layout without it, \([0-9.]*\) days.*/\1/p' "$OUT")
	run "$BIN" --model 175b --cluster dgx-a100 --gpus 1536 --global-batch 1536 --layout zero=3 --train-tokens 300B --json
	jcheck train-tokens-zero3 "$OUT" "(.train.steps * .best_without_zero3.step_s / 86400 * 10 | round) / 10 == ${alt:-0}"
fi

# ---- validate ---------------------------------------------------------------------
if [ -f "$ROOT/../shared/validation/published-runs.tsv" ]; then
	cases=$((cases + 1))
	(cd "$ROOT" && "$BIN" validate ../shared/validation/published-runs.tsv >"$OUT" 2>"$ERR")
	rc=$?
	if [ "$rc" -ne 0 ]; then
		fail "validate-published: exit $rc"
	elif ! grep -q '^MAPE ' "$OUT"; then
		fail "validate-published: no line starting with MAPE"
	else
		echo "ok: validate-published ($(grep '^MAPE ' "$OUT"))"
	fi
else
	echo "skip: validate-published (../shared/validation/published-runs.tsv not found)"
fi
# validate's summary, as the README says it: mape, median and worst of the
# predicted rows' absolute errors, bias the mean of their signed errors
# (over the predicted rows only: one of two in the second file), the median of an even count the mean of
# the two middle ones (8 rows here); JSON rows counts all rows, the text's
# "rows n" the predicted ones (one of two here); a predicted row's time_s
# adds up to its predicted_s and memory_bytes to its total, as plan's
cases=$((cases + 1))
(cd "$ROOT" && "$BIN" validate tests/data/runs/bridge-25.11.tsv --json >"$TMP/vs.json" 2>"$ERR" &&
	"$BIN" validate tests/data/runs/one-good-one-bad.tsv --json >"$TMP/vs2.json" 2>"$ERR" &&
	"$BIN" validate tests/data/runs/one-good-one-bad.tsv >"$TMP/vs2.txt" 2>"$ERR")
rc=$?
if [ "$rc" -ne 0 ]; then
	fail "validate-summary: exit $rc: $(head -n 2 "$ERR")"
elif ! jq -e '.summary as $s | [.rows[] | .error | fabs] | sort as $e | ($e | length) == 8 and
		($s.median - ($e[3] + $e[4]) / 2 | fabs) < 1e-5 and
		($s.worst - $e[7] | fabs) < 1e-5 and
		($s.mape - ($e | add / 8) | fabs) < 1e-5' "$TMP/vs.json" >/dev/null ||
	! jq -e '.summary.bias as $b | [.rows[] | .error] | ($b - (add / length) | fabs) < 1e-5' "$TMP/vs.json" >/dev/null ||
	! jq -e '.summary.bias as $b | [.rows[] | select(.predicted_s != null) | .error] |
		length == 1 and ($b - .[0] | fabs) < 1e-9' "$TMP/vs2.json" >/dev/null; then
	fail "validate-summary: mape / median / worst are not those of the absolute errors, or bias not their signed mean: $(jq -c .summary "$TMP/vs.json")"
elif ! jq -e '[.rows[] | (((.time_s | add) - .predicted_s) / .predicted_s | fabs) < 1e-5 and
		(.time_s | length) == 8] | all' "$TMP/vs.json" >/dev/null ||
	! jq -e '[.rows[] | .memory_bytes | ((.weights + .grads + .optimizer + .activations +
		.other + .reserve - .total) / .total | fabs) < 1e-9] | all' "$TMP/vs.json" >/dev/null ||
	! jq -e '[.rows[] | select(.predicted_s == null) | has("time_s") or has("memory_bytes")] |
		length == 1 and all == false' "$TMP/vs2.json" >/dev/null; then
	fail "validate-summary: a predicted row's time_s does not add up to predicted_s or its memory_bytes to its total, or a row not predicted has them: $(jq -c '.rows[0] | {predicted_s, time_s, memory_bytes}' "$TMP/vs.json")"
elif ! jq -e '.summary.rows == 2 and .summary.predicted == 1' "$TMP/vs2.json" >/dev/null ||
	! grep -q '^MAPE .*  rows 1  (not predicted: 1 of 2)$' "$TMP/vs2.txt"; then
	fail "validate-summary: rows: JSON $(jq -c .summary "$TMP/vs2.json"), text $(grep '^MAPE' "$TMP/vs2.txt")"
else
	echo "ok: validate-summary"
fi
# row_as_plan NAME RUNS ID WITH PLAN-ARGS...: validate RUNS (--json into
# $TMP/NAME-v.json), then plan row ID's layout with PLAN-ARGS and WITH (the
# flags under test, split into words; $TMP/NAME-p.json) and without them
# ($TMP/NAME-p0.json); sets v (validate's step), p and p0; non-zero when a
# command fails
row_as_plan() {
	name=$1 runs=$2 id=$3 with=$4
	shift 4
	"$BIN" validate "$runs" --json >"$TMP/$name-v.json" 2>"$ERR" &&
		lay=$(jq -r --arg id "$id" '.rows[] | select(.id == $id) | .layout' "$TMP/$name-v.json") &&
		# shellcheck disable=SC2086
		"$BIN" "$@" $with --layout "$lay" --json >"$TMP/$name-p.json" 2>>"$ERR" &&
		"$BIN" "$@" --layout "$lay" --json >"$TMP/$name-p0.json" 2>>"$ERR" || return
	v=$(jq -r --arg id "$id" '.rows[] | select(.id == $id) | .predicted_s' "$TMP/$name-v.json")
	p=$(jq -r '.layouts[0].step_s' "$TMP/$name-p.json")
	p0=$(jq -r '.layouts[0].step_s' "$TMP/$name-p0.json")
}
# A legacy-stack row of validate is planned by `tpplan plan` with the
# stack's options stated as flags (--p2p-scatter-gather among them, which
# the legacy stack's transfers need): the same step to the last digit
cases=$((cases + 1))
printf 'id\tlayers\thidden\theads\tvocab\tseq\tgbs\tmbs\ttp\tpp\tdp\tvp\tgpus\tcluster\tprecision\tstep_time_s\n' >"$TMP/legacy-row.tsv"
printf 'L1\t96\t12288\t96\t51200\t2048\t1536\t1\t4\t24\t4\t2\t384\tdgx-a100\tfp16\t76.78\n' >>"$TMP/legacy-row.tsv"
printf 'name: legacy-row\nlayers: 96\nhidden: 12288\nheads: 96\nvocab: 51200\nseq: 2048\nglobal_batch: 1536\nmlp: gelu\ntied_embeddings: true\ndropout: true\n' >"$TMP/legacy-row.yaml"
if row_as_plan legacy "$TMP/legacy-row.tsv" L1 --p2p-scatter-gather \
	--model "$TMP/legacy-row.yaml" --cluster dgx-a100 --gpus 384 --precision fp16 \
	--attention unfused --no-dp-overlap --no-p2p-overlap; then
	if ! jq -e '.options == {"dp_overlap": false, "p2p_overlap": false, "p2p_scatter_gather": true, "grads_16bit": false, "zero3_rate_GBps": null, "zero3_gather": "layer", "mem_reserve_gib": 3, "max_mbs": 16, "max_cp": 16, "simulate": true, "time_limit_s": 60}' "$TMP/legacy-p.json" >/dev/null ||
		! jq -e '.options.p2p_scatter_gather == false' "$TMP/legacy-p0.json" >/dev/null; then
		fail "legacy-row-as-plan: the plan JSON does not record its options: $(jq -c .options "$TMP/legacy-p.json") / $(jq -c .options "$TMP/legacy-p0.json")"
	elif awk -v v="$v" -v p="$p" -v p0="$p0" 'BEGIN { exit !((v - p) ^ 2 < 1e-6 && p0 != p) }'; then
		echo "ok: legacy-row-as-plan ($v s; without --p2p-scatter-gather $p0 s)"
	else
		fail "legacy-row-as-plan: validate $v s, plan $p s, without --p2p-scatter-gather $p0 s"
	fi
else
	fail "legacy-row-as-plan: exit $?: $(head -n 3 "$ERR")"
fi
# A ZeRO-3 row of the legacy stack is DeepSpeed's of 2021: validate prices
# it at that implementation's rate, prefetched, with fp16 gradients and
# module-wise gathers, which plan states as --zero3-rate-GBps 21.25
# --zero3-gather module --grads-16bit (and its overlap, on by default): the same step to the last digit; without the rate the
# step is NCCL's, shorter
cases=$((cases + 1))
printf 'id\tlayers\thidden\theads\tvocab\tseq\tgbs\tmbs\ttp\tpp\tdp\tzero\tgpus\tcluster\tprecision\tstep_time_s\n' >"$TMP/ds-row.tsv"
printf 'D1\t96\t12288\t96\t51200\t2048\t1536\t1\t1\t1\t1536\t3\t1536\tdgx-a100\tfp16\t66.75\n' >>"$TMP/ds-row.tsv"
if row_as_plan ds "$TMP/ds-row.tsv" D1 "--zero3-rate-GBps 21.25 --zero3-gather module" \
	--model "$TMP/legacy-row.yaml" --cluster dgx-a100 --gpus 1536 --precision fp16 \
	--attention unfused --no-p2p-overlap --p2p-scatter-gather --grads-16bit; then
	if ! jq -e '[.rows[0].stack, (.rows[0].layout | test("zero=3,"))] == ["legacy", true]' "$TMP/ds-v.json" >/dev/null ||
		! jq -e '.options.zero3_rate_GBps == 21.25 and .options.zero3_gather == "module" and .options.dp_overlap and .options.grads_16bit' "$TMP/ds-p.json" >/dev/null ||
		! jq -e '.options.zero3_rate_GBps == null and .options.zero3_gather == "layer"' "$TMP/ds-p0.json" >/dev/null; then
		fail "deepspeed-row-as-plan: stack / layout / options: $(jq -c '.rows[0] | [.stack, .layout]' "$TMP/ds-v.json") $(jq -c .options "$TMP/ds-p.json")"
	elif awk -v v="$v" -v p="$p" -v p0="$p0" 'BEGIN { exit !((v - p) ^ 2 < 1e-6 && p0 < p / 2) }'; then
		echo "ok: deepspeed-row-as-plan ($v s; at NCCL's rates $p0 s)"
	else
		fail "deepspeed-row-as-plan: validate $v s, plan $p s, without the rate $p0 s"
	fi
else
	fail "deepspeed-row-as-plan: exit $?: $(head -n 3 "$ERR")"
fi
# An fp8 row of the modern stack is an NVIDIA performance recipe, whose
# gradients are reduced in bf16: validate == plan --grads-16bit (the
# modern stack's other options are plan's defaults), != plan without it
cases=$((cases + 1))
if row_as_plan fp8 "$ROOT/tests/data/runs/bridge-25.11.tsv" B01 --grads-16bit \
	--model llama3-8b --cluster dgx-b200 --gpus 8 --global-batch 128 --precision fp8; then
	if awk -v v="$v" -v p="$p" -v p0="$p0" 'BEGIN { exit !((v - p) ^ 2 < 1e-8 && (v - p0) ^ 2 > 1e-7) }'; then
		echo "ok: fp8-row-as-plan ($v s; with fp32 gradients $p0 s)"
	else
		fail "fp8-row-as-plan: validate $v s, plan --grads-16bit $p s, without $p0 s"
	fi
else
	fail "fp8-row-as-plan: exit $?: $(head -n 3 "$ERR")"
fi
# Dropout follows the row's stack (the runs format has no column for it):
# a GeLU row of the modern stack is priced without (NeMo's Nemotron and
# GPT-3 175B configurations, MPT), validate == plan with a model file
# without dropout, != with; its JSON row says so; a legacy GeLU row says
# it has dropout (legacy-row-as-plan above plans it with dropout: true)
cases=$((cases + 1))
printf 'id\tlayers\thidden\theads\tkv_heads\tmlp\tvocab\tseq\tgbs\tmbs\ttp\tpp\tdp\tsp\trecompute\tgpus\tcluster\tprecision\tstep_time_s\n' >"$TMP/nodrop-row.tsv"
printf 'G1\t8\t4096\t32\t8\tgelu\t32000\t4096\t64\t1\t2\t1\t4\tyes\tnone\t8\tdgx-h100\tfp8\t1.0\n' >>"$TMP/nodrop-row.tsv"
for d in false true; do
	printf 'name: g1\nlayers: 8\nhidden: 4096\nheads: 32\nkv_heads: 8\nvocab: 32000\nseq: 4096\nglobal_batch: 64\nmlp: gelu\ntied_embeddings: true\ndropout: %s\n' "$d" >"$TMP/nodrop-$d.yaml"
done
if row_as_plan nodrop "$TMP/nodrop-row.tsv" G1 --grads-16bit \
	--model "$TMP/nodrop-false.yaml" --cluster dgx-h100 --gpus 8 --precision fp8 &&
	"$BIN" --model "$TMP/nodrop-true.yaml" --cluster dgx-h100 --gpus 8 --precision fp8 --grads-16bit \
		--layout "$lay" --json >"$TMP/nodrop-pd.json" 2>>"$ERR"; then
	pd=$(jq -r '.layouts[0].step_s' "$TMP/nodrop-pd.json")
	if ! jq -e '[.rows[0].stack, .rows[0].dropout] == ["modern", false]' "$TMP/nodrop-v.json" >/dev/null ||
		! "$BIN" validate "$TMP/legacy-row.tsv" --json 2>>"$ERR" |
		jq -e '[.rows[0].stack, .rows[0].dropout] == ["legacy", true]' >/dev/null; then
		fail "modern-row-no-dropout: stack / dropout in the JSON rows: $(jq -c '.rows[0] | [.stack, .dropout]' "$TMP/nodrop-v.json")"
	elif awk -v v="$v" -v p="$p" -v pd="$pd" 'BEGIN { exit !((v - p) ^ 2 < 1e-12 && pd > p * 1.0005) }'; then
		echo "ok: modern-row-no-dropout ($v s; with dropout $pd s)"
	else
		fail "modern-row-no-dropout: validate $v s, plan without dropout $p s, with $pd s"
	fi
else
	fail "modern-row-no-dropout: exit $?: $(head -n 3 "$ERR")"
fi
# with the rate given, the ZeRO-3 caution states the DeepSpeed runs at
# their own rate (TPP_DEEPSPEED_RATE_RANGE), not the advice to pass it;
# without, at NCCL's rates with the advice
expect zero3-rate-caution 0 out "ZeRO-3 traffic here moves at most 21.25 GB/s per GPU (--zero3-rate-GBps); the published ZeRO-3 runs on 384-2240 GPUs (SC21 Table 2, DeepSpeed of 2021) took 0.89-1.27 times the step this model predicts at their implementation's 21.25 GB/s" \
	"$BIN" --model 22b --cluster dgx-h100 --gpus 64 --zero3-rate-GBps 21.25 --layout zero=3,pp=1
grep -q "prices it so" "$OUT" && fail "zero3-rate-caution: still advises the flag given"
expect zero3-nccl-caution 0 out "took 1.5-4.8 times the step this model predicts at NCCL's rates, more so on more nodes (that DeepSpeed moved ZeRO-3 traffic at about 21.25 GB/s per GPU: --zero3-rate-GBps 21.25 prices it so)" \
	"$BIN" --model 22b --cluster dgx-h100 --gpus 64 --layout zero=3,pp=1
# TPP_DEEPSPEED_RATE_RANGE is what validate measures: measured / predicted
# of the DeepSpeed rows (legacy stack, ZeRO-3 across nodes), to 2 places
if [ -f "$TMP/acc-0.json" ] || (cd "$ROOT" && [ -f ../shared/validation/published-runs.tsv ] &&
	"$BIN" validate ../shared/validation/published-runs.tsv --json >"$TMP/acc-0.json" 2>"$ERR"); then
	cases=$((cases + 1))
	rng=$(jq -r '[.rows[] | select(.zero3_nodes == true and .stack == "legacy") | .measured_s / .predicted_s] |
		"\(min * 100 | round / 100)-\(max * 100 | round / 100)"' "$TMP/acc-0.json")
	if [ "$rng" = "0.89-1.27" ]; then
		echo "ok: deepspeed-rate-range ($rng)"
	else
		fail "deepspeed-rate-range: cli.h TPP_DEEPSPEED_RATE_RANGE says 0.89-1.27, validate gives $rng"
	fi
	# TPP_OPTIMISTIC_RANGE: the same rows planned as validate prices
	# them but at NCCL's rates (without --zero3-rate-GBps), to 1 place
	cases=$((cases + 1))
	runs=$ROOT/../shared/validation/published-runs.tsv
	: >"$TMP/nccl-ratios"
	for id in $(jq -r '.rows[] | select(.zero3_nodes == true and .stack == "legacy") | .id' "$TMP/acc-0.json"); do
		lay=$(jq -r --arg id "$id" '.rows[] | select(.id == $id) | .layout' "$TMP/acc-0.json")
		meas=$(jq -r --arg id "$id" '.rows[] | select(.id == $id) | .measured_s' "$TMP/acc-0.json")
		# the row's model (runs-format columns by the header's names)
		awk -F '\t' -v id="$id" '$1 == "id" { for (i = 1; i <= NF; i++) c[$i] = i; next }
			$1 == id { printf "name: %s\nlayers: %s\nhidden: %s\nheads: %s\nvocab: %s\nseq: %s\nglobal_batch: %s\nmlp: gelu\ntied_embeddings: true\ndropout: true\n",
				id, $c["layers"], $c["hidden"], $c["heads"], $c["vocab"], $c["seq"], $c["gbs"]
				print $c["gpus"] >"/dev/stderr" }' "$runs" >"$TMP/ds-$id.yaml" 2>"$TMP/ds-$id.gpus"
		"$BIN" --model "$TMP/ds-$id.yaml" --cluster dgx-a100 --gpus "$(cat "$TMP/ds-$id.gpus")" --precision fp16 \
			--attention unfused --no-p2p-overlap --p2p-scatter-gather --grads-16bit --zero3-gather module \
			--layout "$lay" --json 2>>"$ERR" | jq -r --argjson m "$meas" '$m / .layouts[0].step_s' \
			>>"$TMP/nccl-ratios" 2>>"$ERR" || true
	done
	rng=$(sort -g "$TMP/nccl-ratios" | awk 'NR == 1 { lo = $1 } { hi = $1; n++ } END { if (n == 6) printf "%.1f-%.1f", lo, hi }')
	if [ "$rng" = "1.5-4.8" ]; then
		echo "ok: deepspeed-nccl-range ($rng)"
	else
		fail "deepspeed-nccl-range: cli.h TPP_OPTIMISTIC_RANGE says 1.5-4.8, planning the DeepSpeed rows at NCCL's rates gives '$rng' ($(tr '\n' ' ' <"$TMP/nccl-ratios"))"
	fi
fi
# a 16-bit figure's estimate from a burst stands under a derived fp8
# ceiling, and says so (gb200-nvl72 without its fp8 figure)
sed 's/    gemm_tflops: {bf16: 1822.0, fp16: 1822.0, fp8: 3615.6}/    gemm_tflops: {bf16: 1822.0, fp16: 1822.0}/' \
	"$ROOT/topologies/gb200-nvl72.yaml" >"$TMP/gb-nofp8.yaml"
expect ceiling-burst-fp8-derived 0 out "the bf16 figure's 62.5% (its burst figure 1822 TFLOP/s x 0.858, cluster.h TPP_SUSTAINED_OF_BURST) x 0.93" \
	"$BIN" --model llama3-8b --cluster "$TMP/gb-nofp8.yaml" --gpus 8 --precision fp8 --top 1
# --zero3-rate-GBps: a positive number of GB/s, once
expect zero3-rate-zero 2 err "--zero3-rate-GBps: 0 is out of range [0.001, 100000]" \
	"$BIN" --model 175b --cluster dgx-a100 --zero3-rate-GBps 0
expect zero3-rate-word 2 err "--zero3-rate-GBps: expected a number, got 'fast'" \
	"$BIN" --model 175b --cluster dgx-a100 --zero3-rate-GBps fast
expect zero3-rate-twice 2 err "--zero3-rate-GBps is given twice" \
	"$BIN" --model 175b --cluster dgx-a100 --zero3-rate-GBps 20 --zero3-rate-GBps 21
# The accuracy every plan states (cli.h TPP_ACC_*, JSON .accuracy) is the
# model's error on the published runs: recomputed here, so that a change to
# the model that moves it fails until the statement is updated.
cases=$((cases + 1))
"$BIN" --model 125m --cluster dgx-a100 --gpus 8 --json >"$TMP/acc-plan.json" 2>"$ERR"
(cd "$ROOT" && "$BIN" validate tests/data/runs/bridge-25.11.tsv --json >"$TMP/acc-1.json" 2>"$ERR" &&
	"$BIN" validate tests/data/runs/mosaic-mpt-a100.tsv --stack modern --json >"$TMP/acc-2.json" 2>"$ERR" &&
	"$BIN" validate tests/data/runs/torchtitan-a100.tsv --stack modern --json >"$TMP/acc-3.json" 2>"$ERR" &&
	"$BIN" validate tests/data/runs/nemo-perf.tsv --json >"$TMP/acc-4.json" 2>"$ERR" &&
	"$BIN" validate tests/data/runs/meta-llama3-405b.tsv --json >"$TMP/acc-5.json" 2>"$ERR")
rc=$?
# (sc21-table1-scripts.tsv repeats published-runs' A01-A10 measurements:
# not counted twice)
acc_files="$TMP/acc-1.json $TMP/acc-2.json $TMP/acc-3.json $TMP/acc-4.json $TMP/acc-5.json"
if [ -f "$ROOT/../shared/validation/published-runs.tsv" ]; then
	(cd "$ROOT" && "$BIN" validate ../shared/validation/published-runs.tsv --json >"$TMP/acc-0.json" 2>"$ERR") ||
		rc=$?
	acc_files="$TMP/acc-0.json $acc_files"
	# the whole set: count, extremes and median as stated
	acc_test='($e | length) == $a.published_runs and
		(($e | min) - $a.error_min | fabs) < 0.0005 and
		(($e | max) - $a.error_max | fabs) < 0.0005 and
		(($e | sort | .[(length - 1) / 2 | floor]) - $a.error_median | fabs) < 0.0005'
else
	# without the shared corpus: the rows here lie within the stated range
	acc_test='($e | min) >= $a.error_min - 0.0005 and ($e | max) <= $a.error_max + 0.0005'
fi
# shellcheck disable=SC2086
if [ "$rc" -ne 0 ]; then
	fail "accuracy: validate or plan failed (exit $rc): $(head -n 2 "$ERR")"
elif jq -n -e --slurpfile a "$TMP/acc-plan.json" \
	"[inputs | .rows[] | select(.error != null and .zero3_nodes == false) | .error] as \$e |
	 \$a[0].accuracy as \$a | $acc_test" $acc_files >/dev/null; then
	echo "ok: accuracy (the plan's stated error matches validate)"
else
	fail "accuracy: the stated error (cli.h TPP_ACC_*: $(jq -c .accuracy "$TMP/acc-plan.json")) no longer matches validate: $(jq -n -c \
		"[inputs | .rows[] | select(.error != null and .zero3_nodes == false) | .error] |
		 {n: length, min: min, max: max, median: (sort | .[(length - 1) / 2 | floor])}" $acc_files)"
fi
# The ZeRO-3 / FSDP runs among them (layouts with pp=1 and zero=3;
# cli.h TPP_ACC_Z3_*, JSON .accuracy.zero3), stated when a plan's best is
# of that kind, and the measured / predicted ratio of the PyTorch FSDP
# runs across nodes (MPT-70B and TorchTitan's, 64 A100) that the ZeRO-3
# caution states (TPP_FSDP_NODES_RANGE): recomputed the same way.
cases=$((cases + 1))
z3_sel='.rows[] | select(.error != null and .zero3_nodes == false and (.layout | test(",pp=1,.*,zero=3,")))'
if [ "$rc" -ne 0 ]; then
	fail "accuracy-zero3: validate or plan failed"
elif jq -n -e --slurpfile a "$TMP/acc-plan.json" \
	"[inputs | $z3_sel | .error] as \$e | \$a[0].accuracy.zero3 as \$z |
	 (\$e | length) == \$z.published_runs and ((\$e | min) - \$z.error_min | fabs) < 0.0005 and
	 ((\$e | max) - \$z.error_max | fabs) < 0.0005 and
	 ((\$e | sort | .[(length - 1) / 2 | floor]) - \$z.error_median | fabs) < 0.0005 and
	 \$z.applies == false" $acc_files >/dev/null; then
	echo "ok: accuracy-zero3"
else
	fail "accuracy-zero3: stated $(jq -c .accuracy.zero3 "$TMP/acc-plan.json"), validate: $(jq -n -c \
		"[inputs | $z3_sel | .error] | {n: length, min: min, max: max, median: (sort | .[(length - 1) / 2 | floor])}" $acc_files)"
fi
# The FP8 runs among them (cli.h TPP_ACC_FP8_*, JSON .accuracy.fp8): every
# row of bridge-25.11 and nemo-perf (NVIDIA's fp8 recipes) not across
# nodes; stated, and applied, when the plan is in fp8
cases=$((cases + 1))
if [ "$rc" -ne 0 ]; then
	fail "accuracy-fp8: validate or plan failed"
elif jq -n -e --slurpfile a "$TMP/acc-plan.json" \
	"[inputs | .rows[] | select(.error != null and .zero3_nodes == false) | .error] as \$e | \$a[0].accuracy.fp8 as \$z |
	 (\$e | length) == \$z.published_runs and ((\$e | min) - \$z.error_min | fabs) < 0.0005 and
	 ((\$e | max) - \$z.error_max | fabs) < 0.0005 and
	 ((\$e | sort | .[(length - 1) / 2 | floor]) - \$z.error_median | fabs) < 0.0005 and
	 \$z.applies == false" "$TMP/acc-1.json" "$TMP/acc-4.json" >/dev/null; then
	echo "ok: accuracy-fp8"
else
	fail "accuracy-fp8: stated $(jq -c .accuracy.fp8 "$TMP/acc-plan.json"), validate: $(jq -n -c \
		"[inputs | .rows[] | select(.error != null and .zero3_nodes == false) | .error] | {n: length, min: min, max: max, median: (sort | .[(length - 1) / 2 | floor])}" \
		"$TMP/acc-1.json" "$TMP/acc-4.json")"
fi
if expect accuracy-fp8-plan 0 out "The 46 of them in FP8, as this plan" \
	"$BIN" --model llama3-8b --cluster dgx-h100 --gpus 8 --precision fp8 --train-tokens 100B; then
	grep -q "at the error range of the published FP8 runs (How sure)" "$OUT" ||
		fail "accuracy-fp8-plan: --train-tokens range not the FP8 runs'"
	run "$BIN" --model llama3-8b --cluster dgx-h100 --gpus 8 --precision fp8 --json
	jcheck accuracy-fp8-plan "$OUT" '.accuracy.fp8.applies == true and .accuracy.zero3.applies == false'
fi
# the runs the statement leaves out, as its text counts them: all of
# them ZeRO-3 across nodes, DeepSpeed's (legacy stack), PyTorch FSDP's
# (MosaicML's and TorchTitan's files) and Megatron FSDP's (NVIDIA's)
z3n='[inputs | .rows[] | select(.zero3_nodes == true)] | length'
if [ -f "$TMP/acc-0.json" ]; then
	expect accuracy-left-out 0 out "leaving out the $(jq -n "$z3n" $acc_files) ZeRO-3 runs across nodes, DeepSpeed's $(jq -n "$z3n" "$TMP/acc-0.json") on 384-2240 GPUs, PyTorch FSDP's $(jq -n "$z3n" "$TMP/acc-2.json" "$TMP/acc-3.json") on 64 and Megatron FSDP's $(jq -n "$z3n" "$TMP/acc-4.json") on 128," \
		"$BIN" --model 125m --cluster dgx-a100 --gpus 8
fi
# measured / predicted of each kind across nodes, as the caution states it
# (to 2 places, as printed: 1.10, not jq's 1.1)
nodes_range() {
	jq -n -r '[inputs | .rows[] | select(.zero3_nodes == true) | .measured_s / .predicted_s] |
		"\(min) \(max)"' "$@" | awk '{ printf "%.2f-%.2f", $1, $2 }'
}
cases=$((cases + 1))
fsdp_range=$(nodes_range "$TMP/acc-2.json" "$TMP/acc-3.json")
mfsdp_range=$(nodes_range "$TMP/acc-4.json")
if [ -f "$TMP/zero3-caution.json" ] && jq -e --arg r "$fsdp_range" --arg m "$mfsdp_range" \
	'.cautions[0] | contains("(MosaicML, TorchTitan) " + $r + " times") and contains("(NVIDIA) " + $m + " times")' \
	"$TMP/zero3-caution.json" >/dev/null; then
	echo "ok: fsdp-nodes-range ($fsdp_range, Megatron FSDP $mfsdp_range)"
else
	fail "fsdp-nodes-range: validate gives $fsdp_range and $mfsdp_range; the caution says: $(jq -r '.cautions[0]' "$TMP/zero3-caution.json" 2>/dev/null | head -c 600)"
fi
# a plan whose best is ZeRO-3 without pipelining inside a node states the
# ZeRO-3 / FSDP runs' range and takes --train-tokens' range from it
if expect accuracy-zero3-plan 0 out "The 12 of them with ZeRO-3 / FSDP and no pipelining, as the best layout here" \
	"$BIN" --model llama2-13b --cluster dgx-a100 --gpus 8 --global-batch 64 --layout zero=3,pp=1,tp=1 --train-tokens 100B; then
	grep -q "at the error range of the published ZeRO-3 / FSDP runs (How sure)" "$OUT" ||
		fail "accuracy-zero3-plan: --train-tokens range not the ZeRO-3 / FSDP runs'"
	lo=$(sed -n 's/.*at the predicted step; \([0-9.]*\) days to \([0-9.]*\) days at the error range.*/\1/p' "$OUT")
	hi=$(sed -n 's/.*at the predicted step; \([0-9.]*\) days to \([0-9.]*\) days at the error range.*/\2/p' "$OUT")
	run "$BIN" --model llama2-13b --cluster dgx-a100 --gpus 8 --global-batch 64 --layout zero=3,pp=1,tp=1 --train-tokens 100B --json
	# the days over 1 + the ZeRO-3 / FSDP runs' largest and smallest error
	jcheck accuracy-zero3-plan "$OUT" ".accuracy.zero3.applies == true and
		(.layouts[0].train_s / 86400 / (1 + .accuracy.zero3.error_max) * 10 | round) / 10 == ${lo:-0} and
		(.layouts[0].train_s / 86400 / (1 + .accuracy.zero3.error_min) * 10 | round) / 10 == ${hi:-0}"
fi
if expect validate-small 0 out "cannot predict" \
	"$BIN" validate "$ROOT/tests/data/runs/one-good-one-bad.tsv"; then
	grep -q '^T01 .*tp=1,pp=1,dp=32' "$OUT" || fail "validate-small: T01 not predicted"
	grep -q "^T02 .*cannot predict: .*one-good-one-bad.tsv:5:64: cluster: .*no-such-cluster" "$OUT" ||
		fail "validate-small: T02 not listed with its file:line:column and reason"
	grep -q '^MAPE .* rows 1  (not predicted: 1 of 2)' "$OUT" ||
		fail "validate-small: the unpredicted row is not counted"
fi
# a fault inside a row's cluster file is named at that file's
# line:column, as plan names it
mkdir -p "$TMP/vcl"
sed 's/^\(  hbm_gb:\) [0-9.]*/\1 -5/' "$ROOT/topologies/dgx-a100.yaml" >"$TMP/vcl/bad.yaml"
ln=$(grep -n '^  hbm_gb: -5' "$TMP/vcl/bad.yaml" | cut -d: -f1)
grep '^id' "$ROOT/tests/data/runs/one-good-one-bad.tsv" >"$TMP/vcl/runs.tsv"
grep '^T01' "$ROOT/tests/data/runs/one-good-one-bad.tsv" | sed 's/\tdgx-a100\t/\tbad.yaml\t/' >>"$TMP/vcl/runs.tsv"
if expect validate-cluster-line-col 1 out "cluster: $TMP/vcl/bad.yaml:$ln:11: gpu.hbm_gb = -5 is out of range" \
	"$BIN" validate "$TMP/vcl/runs.tsv"; then
	run "$BIN" validate "$TMP/vcl/runs.tsv" --json
	jcheck validate-cluster-line-col "$OUT" '.rows[0].reason | contains("bad.yaml:'"$ln"':11: gpu.hbm_gb")'
fi
# a search that finds no layout names the row's line, not a column
# (JSON column null); a measured step of microseconds is not shown as
# 0.000s
{ grep -v '^#' "$ROOT/tests/data/runs/one-good-one-bad.tsv" | head -n 2 |
	sed 's/\t3\.528\t/\t0.0000125\t/'
  grep -v '^#' "$ROOT/tests/data/runs/one-good-one-bad.tsv" | sed -n 2p |
	sed 's/^T01/T03/; s/\t24\t2304\t24\t/\t2400\t2304\t24\t/'; } >"$TMP/nofit.tsv"
if expect validate-no-fit-line 0 out "rows 1  (not predicted: 1 of 2)" \
	"$BIN" validate "$TMP/nofit.tsv"; then
	grep -q "^T01  *1.25e-05s " "$OUT" ||
		fail "validate-no-fit-line: the microsecond step not printed as 1.25e-05s"
	has validate-no-fit-line out "cannot predict: $TMP/nofit.tsv:3: "
	run "$BIN" validate --json "$TMP/nofit.tsv"
	jcheck validate-no-fit-line "$OUT" '.rows[1].line == 3 and .rows[1].column == null and .rows[0].line == 2 and (.rows[0] | has("column") | not)'
fi
# a repeated id is not predicted (it would count one run twice)
{ grep -v '^#' "$ROOT/tests/data/runs/one-good-one-bad.tsv" | head -n 2
  grep -v '^#' "$ROOT/tests/data/runs/one-good-one-bad.tsv" | sed -n 2p; } >"$TMP/dup.tsv"
if expect validate-dup-id 0 out "cannot predict: $TMP/dup.tsv:3:1: id 'T01' is the id of an earlier row (the 1st data row)" \
	"$BIN" validate "$TMP/dup.tsv"; then
	has validate-dup-id out "rows 1  (not predicted: 1 of 2)"
fi
# the ordinal past the first few rows (it said "21th")
{ grep -v '^#' "$ROOT/tests/data/runs/one-good-one-bad.tsv" | head -n 1
  for i in 01 02 03 04 05 06 07 08 09 10 11 12 13 14 15 16 17 18 19 20 21 22 21; do
	grep -v '^#' "$ROOT/tests/data/runs/one-good-one-bad.tsv" | sed -n 2p | sed "s/^T01/R$i/"
  done; } >"$TMP/dup21.tsv"
expect validate-dup-id-21 0 out "id 'R21' is the id of an earlier row (the 21st data row)" \
	"$BIN" validate "$TMP/dup21.tsv"
# what spreadsheets and other tools write: a UTF-8 byte-order mark before
# the header, ids longer than 31 characters (two that began alike were
# cut to the same id and refused as repeats), control characters in the
# source (printed as '?', not sent to the terminal, and not a bad
# model description)
{ printf '\357\273\277'
  grep -v '^#' "$ROOT/tests/data/runs/one-good-one-bad.tsv" | head -n 1
  for i in 1 2; do
	grep -v '^#' "$ROOT/tests/data/runs/one-good-one-bad.tsv" | sed -n 2p |
		sed "s/^T01/LONG-ID-OF-A-RUN-FROM-A-SPREADSHEET-$i/; s/test: like A01/esc \x1b[31mred/"
  done; } >"$TMP/bom.tsv"
if expect validate-bom-long-ids 0 out "rows 2" "$BIN" validate "$TMP/bom.tsv"; then
	grep -q "^LONG-ID-OF-A-RUN-FROM-A-SPREADSHEET-2 .*esc ?\[31mred" "$OUT" ||
		fail "validate-bom-long-ids: the second long id, or its cleaned source, not listed"
	grep -q "$(printf '\033')" "$OUT" && fail "validate-bom-long-ids: an escape character printed"
fi
expect validate-directory 3 err "is a directory" "$BIN" validate "$TMP"
# lines that end with CR alone (classic Mac) read as one line: said so
grep -v '^#' "$ROOT/tests/data/runs/one-good-one-bad.tsv" | tr '\n' '\r' >"$TMP/cr.tsv"
expect validate-cr-only 3 err "a carriage return inside the line" "$BIN" validate "$TMP/cr.tsv"
# a CR LF file saved again as CR LF (CR CR LF) reads as CR LF did
grep -v '^#' "$ROOT/tests/data/runs/one-good-one-bad.tsv" | sed 's/$/\r\r/' >"$TMP/crcrlf.tsv"
expect validate-cr-cr-lf 0 out "rows 1  (not predicted: 1 of 2)" "$BIN" validate "$TMP/crcrlf.tsv"
# Review 2026-12-05.  Fixed degrees whose product passes the GPU count
# (tp, pp and cp up to 2^20, dp 2^24) overflowed and divided by zero
# (SIGFPE); now a reason for the row.
V='24\t2304\t24\t51200\t2048\t512'
printf 'id\tlayers\thidden\theads\tvocab\tseq\tgbs\ttp\tpp\tdp\tcp\tgpus\tcluster\tprecision\tstep_time_s\tsource\n' >"$TMP/ov.tsv"
printf "O1\t$V\t1048576\t1048576\t16777216\t1048576\t32\tdgx-a100\tfp16\t3.5\tall four\n" >>"$TMP/ov.tsv"
printf "O2\t$V\t1048576\t1048576\t16777216\t\t32\tdgx-a100\tfp16\t3.5\tcp free\n" >>"$TMP/ov.tsv"
if expect validate-degree-overflow 1 out "O1 " "$BIN" validate "$TMP/ov.tsv"; then
	has validate-degree-overflow out "their product (at least) 1048576 is not the 32 GPUs of column 'gpus'"
	has validate-degree-overflow out "their product (at least) 1048576 does not divide the 32 GPUs"
fi
# The cluster column names a preset: a file of that name in the working
# directory (here an H100 cluster called dgx-a100) does not replace it.
mkdir "$TMP/cwd" && cp "$ROOT/topologies/dgx-h100.yaml" "$TMP/cwd/dgx-a100"
(cd "$ROOT" && "$BIN" validate tests/data/runs/one-good-one-bad.tsv 2>/dev/null | grep '^T01 ') >"$TMP/t01-root"
if expect validate-preset-not-cwd 0 out "T01 " \
	sh -c 'cd "$1" && exec "$2" validate "$3"' sh "$TMP/cwd" "$BIN" "$ROOT/tests/data/runs/one-good-one-bad.tsv"; then
	grep '^T01 ' "$OUT" | cmp -s - "$TMP/t01-root" ||
		fail "validate-preset-not-cwd: T01 read ./dgx-a100: $(grep '^T01 ' "$OUT") against $(cat "$TMP/t01-root")"
fi
# Values quoted in a reason (here an escape sequence after the time) and
# an unknown column's name are printed without their control characters;
# bidi and line-separator characters in the id and source are shown as
# '?', and the row is predicted (they were refused as the model's name).
printf 'id\tlayers\thidden\theads\tvocab\tseq\tgbs\ttp\tpp\tdp\tcp\tgpus\tcluster\tprecision\tstep_time_s\tsource\n' >"$TMP/esc.tsv"
printf "E1\t$V\t1\t1\t32\t1\t32\tdgx-a100\tfp16\t3.5\033]0;x\007\tesc\n" >>"$TMP/esc.tsv"
printf "E2\342\200\256\t$V\t1\t1\t32\t1\t32\tdgx-a100\tfp16\t3.5\tfoo\342\200\256bar\342\200\250\n" >>"$TMP/esc.tsv"
if expect validate-escapes 0 out "bad step_time_s '3.5?]0;x?'" "$BIN" validate "$TMP/esc.tsv"; then
	grep -q '^E2??? .*tp=1,pp=1,dp=32.* foo???bar???$' "$OUT" || fail "validate-escapes: E2 not predicted, or printed unchanged"
	grep -q "$(printf '[\033\007]')" "$OUT" && fail "validate-escapes: a control character printed"
	grep -q "$(printf '\342\200')" "$OUT" && fail "validate-escapes: a bidi or separator character printed"
fi
printf 'id\tx\033[31m\n' >"$TMP/esc-head.tsv"
if expect validate-escapes-header 3 err "column 'x?[31m' is not in the runs format" "$BIN" validate "$TMP/esc-head.tsv"; then
	grep -q "$(printf '\033')" "$ERR" && fail "validate-escapes-header: an escape printed"
fi
# Lines of blanks (spaces, a CR CR LF blank line, a lone CR at the end)
# are blank lines, not rows; numbers are plain decimals: no leading
# blank or '+' (a trailing blank was already refused) and no hexadecimal
# time (0x10 was read as 16 s).
{ grep -v '^#' "$ROOT/tests/data/runs/one-good-one-bad.tsv" | head -n 2 | sed 's/$/\r\r/'
	printf '\r\r\n   \n\t\n'
	sed -n '4p' "$ROOT/tests/data/runs/one-good-one-bad.tsv" | sed 's/^T01/N1/; s/\t3\.528\t/\t0x10\t/'
	sed -n '4p' "$ROOT/tests/data/runs/one-good-one-bad.tsv" | sed 's/^T01/N2/; s/\t32\t/\t 32\t/'
	sed -n '4p' "$ROOT/tests/data/runs/one-good-one-bad.tsv" | sed 's/^T01/N3/; s/\t24\t/\t+24\t/'
	printf '\r'; } >"$TMP/blank.tsv"
if expect validate-blank-numbers 0 out "rows 1  (not predicted: 3 of 4)" "$BIN" validate "$TMP/blank.tsv"; then
	has validate-blank-numbers out "bad step_time_s '0x10'"
	has validate-blank-numbers out "' 32' is not an integer"
	has validate-blank-numbers out "'+24' is not an integer"
fi
# a micro-batch larger than the global batch is named as such (it was
# "no layout ... is valid and fits in memory")
printf 'id\tlayers\thidden\theads\tvocab\tseq\tgbs\tmbs\tgpus\tcluster\tstep_time_s\n' >"$TMP/mbs.tsv"
printf 'M1\t24\t2304\t24\t51200\t2048\t512\t1024\t32\tdgx-a100\t3.5\n' >>"$TMP/mbs.tsv"
expect validate-mbs-over-gbs 1 out "column 'mbs': a micro-batch of 1024 is more than the global batch of 512" \
	"$BIN" validate "$TMP/mbs.tsv"
# a row with ZeRO-3 and no pp is an FSDP / ZeRO-3 run without pipelining
# (validate --help); with pp stated, ZeRO-3 under pipelining is priced
printf 'id\tlayers\thidden\theads\tvocab\tseq\tgbs\tmbs\ttp\tpp\tdp\tzero\tgpus\tcluster\tstep_time_s\tsource\n' >"$TMP/z3.tsv"
printf 'Z1\t40\t5120\t40\t50257\t2048\t1024\t1\t1\t\t\t3\t64\tdgx-a100\t30\tz3\n' >>"$TMP/z3.tsv"
printf 'Z2\t40\t5120\t40\t50257\t2048\t1024\t1\t1\t2\t\t3\t64\tdgx-a100\t30\tz3 pp2\n' >>"$TMP/z3.tsv"
# tp and dp stated leave the GPUs a pipeline: pp is then searched
printf 'Z3\t40\t5120\t40\t50257\t2048\t1024\t1\t2\t\t16\t3\t64\tdgx-a100\t30\tz3 tp2 dp16\n' >>"$TMP/z3.tsv"
if expect validate-zero3-pp 0 out "rows 3" "$BIN" validate "$TMP/z3.tsv"; then
	grep -q '^Z1 .*tp=1,pp=1,dp=64,.*zero=3' "$OUT" || fail "validate-zero3-pp: Z1 not read without pipelining"
	grep -q '^Z2 .*tp=1,pp=2,dp=32,.*zero=3' "$OUT" || fail "validate-zero3-pp: Z2 not predicted with pp=2"
	grep -q '^Z3 .*tp=2,pp=2,dp=16,.*zero=3' "$OUT" || fail "validate-zero3-pp: Z3 not predicted with pp=2"
fi
# non-finite, denormal or absurdly small measured times are rejected per
# row, and the JSON stays JSON; a runs file with a CRLF blank line and tf32
# rows
grep -v '^#' "$ROOT/tests/data/runs/one-good-one-bad.tsv" | head -n 2 >"$TMP/inf.tsv"
sed -n '4p' "$ROOT/tests/data/runs/one-good-one-bad.tsv" | sed 's/\t3\.528\t/\tinf\t/; s/^T01/T03/' >>"$TMP/inf.tsv"
sed -n '4p' "$ROOT/tests/data/runs/one-good-one-bad.tsv" | sed 's/\t3\.528\t/\t1e-320\t/; s/^T01/T04/' >>"$TMP/inf.tsv"
sed -n '4p' "$ROOT/tests/data/runs/one-good-one-bad.tsv" | sed 's/\tfp16\t/\ttf32\t/; s/^T01/T05/' >>"$TMP/inf.tsv"
# a normal but absurd time: its error and the MAPE were printed as inf
sed -n '4p' "$ROOT/tests/data/runs/one-good-one-bad.tsv" | sed 's/\t3\.528\t/\t2.3e-308\t/; s/^T01/T06/' >>"$TMP/inf.tsv"
printf '\r\n' >>"$TMP/inf.tsv"
sed -i "s#\tdgx-a100\t#\t$ROOT/topologies/dgx-a100.yaml\t#" "$TMP/inf.tsv"
if expect validate-bad-times 0 out "bad step_time_s 'inf'" "$BIN" validate "$TMP/inf.tsv"; then
	has validate-bad-times out "bad step_time_s '1e-320'"
	has validate-bad-times out "unknown precision 'tf32'"
	has validate-bad-times out "bad step_time_s '2.3e-308'"
	grep -q '^MAPE .* rows 1  (not predicted: 4 of 5)' "$OUT" || fail "validate-bad-times: rows not counted as 1 of 5"
fi
if expect validate-bad-times-json 0 out '"rows"' "$BIN" validate "$TMP/inf.tsv" --json; then
	jcheck validate-bad-times-json "$OUT" '.rows | length == 5'
fi
printf 'id\tlay\000ers\n' >"$TMP/nul.tsv"
expect validate-nul 3 err "nul.tsv:1:7: error: a NUL byte in the line" "$BIN" validate "$TMP/nul.tsv"
# on the last line without a newline too (it was cut there and read)
# (the header of a repository runs file: a header short of columns would
# be the error, on line 1)
{ grep -v '^#' "$ROOT/tests/data/runs/one-good-one-bad.tsv" | head -n 1
	printf 'A99\t1\000junk'; } >"$TMP/nul-last.tsv"
expect validate-nul-last 3 err "nul-last.tsv:2:6: error: a NUL byte in the line" \
	"$BIN" validate "$TMP/nul-last.tsv"
head -c 9000 /dev/zero | tr '\0' 'x' >"$TMP/long.tsv"
expect validate-long-line 3 err "long.tsv:1:1: error: line too long" "$BIN" validate "$TMP/long.tsv"
expect validate-empty-name 2 err "runs file name is empty" "$BIN" validate ""
expect validate-stack-missing 2 err "--stack needs a value" "$BIN" validate "$TMP/nul.tsv" --stack
expect validate-missing 3 err "cannot open" "$BIN" validate "$TMP/no-such-runs.tsv"
# a FIFO nobody writes (or a device) as an input file: refused before it
# is opened, as a model file is; opening it waited forever
mkfifo "$TMP/fifo"
expect fifo-validate 3 err "fifo: error: not a regular file" \
	timeout 20 "$BIN" validate "$TMP/fifo"
expect fifo-calibration 3 err "fifo: error: not a regular file" \
	timeout 20 "$BIN" --model 125m --cluster dgx-a100 --gpus 8 --calibration "$TMP/fifo"
expect fifo-import 3 err "fifo: error: not a regular file" \
	timeout 20 "$BIN" calibrate --import "$TMP/fifo" --group 8 --out "$TMP/fifo-cal.yaml"
expect fifo-plan 3 err "fifo: error: not a regular file" \
	timeout 20 "$BIN" exec --plan "$TMP/fifo"
expect fifo-exec 3 err "fifo: error: not a regular file" \
	timeout 20 "$BIN" report --model 125m --cluster dgx-a100 --gpus 8 --exec "$TMP/fifo" -o "$TMP/fifo-report"
if expect validate-stack-flag 0 out '"stack"' \
	"$BIN" validate "$ROOT/tests/data/runs/era-attention.tsv" --json --stack legacy; then
	jcheck validate-stack-flag "$OUT" '[.rows[0:3][] | .stack] == ["legacy", "legacy", "legacy"]'
	jcheck validate-stack-flag "$OUT" '[.rows[0:3][] | .attention] == ["unfused", "unfused", "unfused"]'
fi
# legacy stack: blank sp / recompute / zero are Megatron 2021's (no SP, full
# recompute, replicated optimizer); stated fields are kept; modern searches
if expect validate-legacy-blank 0 out '"layout"' \
	"$BIN" validate "$ROOT/tests/data/runs/legacy-blank.tsv" --json; then
	jcheck validate-legacy-blank "$OUT" '.rows[0].layout | test("sp=0,recompute=full,zero=0,")'
	jcheck validate-legacy-blank "$OUT" '.rows[1].layout | test("sp=1,recompute=selective,zero=1,")'
	# a row that cannot fit with materialized scores is from a later stack
	jcheck validate-legacy-blank "$OUT" '[.rows[2].stack, .rows[2].attention] == ["modern", "flash"]'
	# ZeRO-3 in bf16 is of a later stack than 2021's DeepSpeed, which took
	# fp16 only; the same row in fp16 stays legacy
	jcheck validate-legacy-blank "$OUT" '[.rows[3].stack, .rows[3].attention] == ["modern", "flash"]'
	jcheck validate-legacy-blank "$OUT" '[.rows[4].stack, .rows[4].attention] == ["legacy", "unfused"]'
	jcheck validate-legacy-blank "$OUT" '[.rows[3].layout, .rows[4].layout] | map(test("zero=3,")) == [true, true]'
fi
if expect validate-modern-blank 0 out '"layout"' \
	"$BIN" validate "$ROOT/tests/data/runs/legacy-blank.tsv" --json --stack modern; then
	jcheck validate-modern-blank "$OUT" '.rows[0].layout | test("recompute=full") | not'
fi
# an id longer than the column's 5 characters widens it: the measured
# times stay under their heading
grep -v '^#' "$ROOT/tests/data/runs/one-good-one-bad.tsv" | head -n 2 |
	sed '2s/^T01/A-LONGER-ROW-ID/' >"$TMP/longid.tsv"
if expect validate-long-id 0 out "A-LONGER-ROW-ID " "$BIN" validate "$TMP/longid.tsv"; then
	awk 'NR == 1 { h = index($0, "measured") + 7 }
	     NR == 2 { r = index($0, "s "); exit !(h == r) }' "$OUT" ||
		fail "validate-long-id: the measured time is not under its heading"
fi
# a column outside the format: a warning at its header cell; rows that
# leave it blank are predicted, a row that fills it is listed, not predicted
grep -v '^#' "$ROOT/tests/data/runs/sc21-table1-scripts.tsv" | awk -F'\t' -v OFS='\t' '
	NR == 1 { print $0, "notes"; next }
	{ $21 = "dgx-a100" }
	NR == 2 { print $0, ""; next }
	NR == 3 { print $0, "rerun" }' >"$TMP/extracol.tsv"
if expect validate-extra-column 0 err "extracol.tsv:1:134: warning: column 'notes' is not in the runs format" \
	"$BIN" validate "$TMP/extracol.tsv"; then
	has validate-extra-column out "not predicted: 1 of 2"
	grep -q "^S01 .*%" "$OUT" || fail "validate-extra-column: S01 (blank notes) not predicted"
	grep -q "^S02  *3.697s .*column 'notes' is not in the runs format (value 'rerun')" "$OUT" ||
		fail "validate-extra-column: S02 reason"
fi
printf 'id\tlayers\t\n' >"$TMP/emptyhdr.tsv"
expect validate-empty-column 3 err "emptyhdr.tsv:1:11: error: empty column name" \
	"$BIN" validate "$TMP/emptyhdr.tsv"
printf 'id\tlayers\tid\n' >"$TMP/duphdr.tsv"
expect validate-duplicate-column 3 err "duphdr.tsv:1:11: error: column 'id' appears twice" \
	"$BIN" validate "$TMP/duphdr.tsv"
printf 'id\tlayers\n' >"$TMP/shorthdr.tsv"
expect validate-missing-column 3 err "shorthdr.tsv:1:10: error: missing column 'hidden'" \
	"$BIN" validate "$TMP/shorthdr.tsv"
if expect validate-bad-rows 1 out "not predicted: 8 of 8" \
	"$BIN" validate "$ROOT/tests/data/runs/bad-rows.tsv"; then
	grep -q "^R01 .*their product 16 is not the 8 GPUs" "$OUT" || fail "validate-bad-rows: R01 reason"
	grep -q "^R02 .*hidden 4096 is not a multiple of heads 30" "$OUT" || fail "validate-bad-rows: R02 reason"
	grep -q "^R03 .*not a whole number of 8-GPU nodes" "$OUT" || fail "validate-bad-rows: R03 reason"
	grep -q "^R04 .*has no fp8 peak" "$OUT" || fail "validate-bad-rows: R04 reason"
	grep -q "^R05 .*bad step_time_s 'fast'" "$OUT" || fail "validate-bad-rows: R05 reason"
	grep -q "^R06 .*unknown mlp 'relu'" "$OUT" || fail "validate-bad-rows: R06 reason"
	grep -q "^R07 .*column 'heads' is blank" "$OUT" || fail "validate-bad-rows: R07 reason"
	grep -q "^R08 .*column 'gpus' is blank" "$OUT" || fail "validate-bad-rows: R08 reason"
	grep -q "^no row predicted: no error statistics" "$OUT" || fail "validate-bad-rows: a MAPE printed without a predicted row"
	# each reason names the file, the row's line and the field's column
	# (a blank field: where it would start)
	has validate-bad-rows out "cannot predict: $ROOT/tests/data/runs/bad-rows.tsv:4:39: columns tp, pp, dp, cp"
	has validate-bad-rows out "bad-rows.tsv:5:13: column 'heads': hidden 4096"
	has validate-bad-rows out "bad-rows.tsv:8:63: bad step_time_s 'fast'"
	has validate-bad-rows out "bad-rows.tsv:9:18: unknown mlp 'relu'"
	has validate-bad-rows out "bad-rows.tsv:11:47: column 'gpus' is blank"
fi
# JSON: no statistics without a predicted row; an unpredicted row keeps
# its measured time
if expect validate-bad-rows-json 1 out '"unpredicted": 8' \
	"$BIN" validate --json "$ROOT/tests/data/runs/bad-rows.tsv"; then
	jcheck validate-bad-rows-json "$OUT" '.summary.mape == null and .summary.worst == null and .summary.bias == null and ([.rows[] | select(.measured_s != null)] | length) >= 1'
	# every row has every key: an unreadable step time is null, not absent
	jcheck validate-bad-rows-json "$OUT" '[.rows[] | has("measured_s") and has("predicted_s") and has("zero3_across_nodes")] | all'
	jcheck validate-bad-rows-json "$OUT" '(.rows[] | select(.id == "R05") | .measured_s) == null'
	jcheck validate-bad-rows-json "$OUT" '[.rows[] | [.line, .column]] == [[4,39],[5,13],[6,47],[7,58],[8,63],[9,18],[10,13],[11,47]]'
fi
# a model fault at the column its key reads from (not "model: model ..."),
# and fields that contradict each other whatever the model said as plan's
# --layout says them, at their column (not "no layout ... fits in memory")
cases=$((cases + 1))
printf 'id\tlayers\thidden\theads\tkv_heads\tvocab\tseq\tgbs\tmbs\ttp\tpp\tdp\tvp\tsp\tgpus\tcluster\tprecision\tstep_time_s\n' >"$TMP/contra.tsv"
printf 'K1\t8\t4096\t32\t33\t32000\t2048\t64\t1\t1\t1\t8\t\t\t8\tdgx-a100\tbf16\t1.0\n' >>"$TMP/contra.tsv"
printf 'V1\t8\t4096\t32\t\t32000\t2048\t64\t1\t1\t1\t8\t2\t\t8\tdgx-a100\tbf16\t1.0\n' >>"$TMP/contra.tsv"
printf 'S1\t8\t4096\t32\t\t32000\t2048\t64\t1\t1\t1\t8\t\tyes\t8\tdgx-a100\tbf16\t1.0\n' >>"$TMP/contra.tsv"
if "$BIN" validate "$TMP/contra.tsv" --json >"$TMP/contra.json" 2>"$ERR" || [ $? -eq 1 ]; then
	if jq -e '[.rows[] | [.id, .line, .column, .reason]] == [
		["K1", 2, 14, "column '"'"'kv_heads'"'"': kv_heads = 33 exceeds heads = 32"],
		["V1", 3, 37, "column '"'"'vp'"'"': vp 2 > 1 (the interleaved schedule) needs pp >= 2, and column '"'"'pp'"'"' is 1"],
		["S1", 4, 38, "column '"'"'sp'"'"': sequence parallelism needs tp >= 2, and column '"'"'tp'"'"' is 1"]]' "$TMP/contra.json" >/dev/null; then
		echo "ok: validate-row-contradictions"
	else
		fail "validate-row-contradictions: $(jq -c '[.rows[] | [.id, .line, .column, .reason]]' "$TMP/contra.json")"
	fi
else
	fail "validate-row-contradictions: exit $?: $(head -n 2 "$ERR")"
fi
# ids that are not UTF-8, or that the 127-byte limit cuts mid-character:
# the JSON stays UTF-8 (U+FFFD for a stray byte, no half character)
{
	grep -v '^#' "$ROOT/tests/data/runs/era-attention.tsv" | head -n 2
	long=$(printf '\303\251%.0s' $(seq 100))
	grep -v '^#' "$ROOT/tests/data/runs/era-attention.tsv" | sed -n 2p | sed "s/^[^	]*/$long/"
	grep -v '^#' "$ROOT/tests/data/runs/era-attention.tsv" | sed -n 3p | sed "s/^[^	]*/id\xff\xfe/"
} >"$TMP/utf8-ids.tsv"
if run "$BIN" validate --json "$TMP/utf8-ids.tsv" && [ "$rc" -le 1 ]; then
	cases=$((cases + 1))
	# iconv (glibc's, always there) refuses bytes that are not UTF-8; jq
	# would quietly replace them
	if iconv -f UTF-8 -t UTF-8 "$OUT" >/dev/null 2>&1 && jq -e . "$OUT" >/dev/null 2>&1; then
		jcheck validate-utf8 "$OUT" '(.rows[1].reason | test("id longer than 127 bytes")) and (.rows[2].id == "id\ufffd\ufffd")'
		echo "ok: validate-utf8"
	else
		fail "validate-utf8: the JSON is not valid UTF-8 JSON"
	fi
else
	fail "validate-utf8: exit $rc"
fi
grep -v '^#' "$ROOT/tests/data/runs/bad-rows.tsv" | head -n 1 >"$TMP/header-only.tsv"
if expect validate-no-rows 3 err "no data rows" "$BIN" validate "$TMP/header-only.tsv"; then
	# the error alone: no table header or "no row predicted" beside it
	[ -s "$OUT" ] && fail "validate-no-rows: stdout not empty: $(head -c 200 "$OUT")"
fi
grep -v '^#' "$ROOT/tests/data/runs/era-attention.tsv" | head -n 2 | sed '2s/$/\textra/' >"$TMP/extra-col.tsv"
if expect validate-extra-column 1 out "the row has 25 columns, the header 24" \
	"$BIN" validate "$TMP/extra-col.tsv"; then :; fi
# trailing fields left out (an editor trimming trailing tabs) are blank
# where blank is allowed: T01 without its source predicts; without its
# step time and source it is named, its step time then unread (null)
{ grep '^id' "$ROOT/tests/data/runs/one-good-one-bad.tsv"
  grep '^T01' "$ROOT/tests/data/runs/one-good-one-bad.tsv" | cut -f 1-23
  grep '^T01' "$ROOT/tests/data/runs/one-good-one-bad.tsv" | sed 's/^T01/T03/' | cut -f 1-22
} >"$TMP/trimmed.tsv"
if expect validate-trimmed-row 0 out "column 'step_time_s' (required) is missing" \
	"$BIN" validate "$TMP/trimmed.tsv"; then
	grep -q '^T01 .*tp=1,pp=1,dp=32' "$OUT" || fail "validate-trimmed-row: T01 without its source not predicted"
	grep -q '^T03 .*the row has 22 columns, the header 24' "$OUT" ||
		fail "validate-trimmed-row: T03 not named with its column counts"
	run "$BIN" validate "$TMP/trimmed.tsv" --json
	jcheck validate-trimmed-row "$OUT" '.rows[0].measured_s == 3.528 and .rows[0].predicted_s > 0 and .rows[1].measured_s == null'
fi
# a short row whose missing optional field is what fails has no column
# on the line to name (it read past the row: a garbage column, or none)
# (a cluster with fp16 figures only, and a blank precision is bf16)
mkdir -p "$TMP/vshort"
sed -e 's/^  peak_tflops: .*/  peak_tflops: {fp16: 312}/' \
	-e 's/^    gemm_tflops: .*/    gemm_tflops: {fp16: 258}/' \
	-e 's/^    gemm_shape: .*/    gemm_shape: {fp16: [2304, 1536, 6144]}/' \
	"$ROOT/topologies/dgx-a100.yaml" >"$TMP/vshort/c.yaml"
{ printf 'id\tlayers\thidden\theads\tvocab\tseq\tgbs\tgpus\tcluster\tstep_time_s\tprecision\n'
  printf 'S1\t24\t2304\t24\t51200\t2048\t512\t32\tc.yaml\t3.5\n'; } >"$TMP/vshort/runs.tsv"
if expect validate-short-row-fault 1 out "runs.tsv:2: column 'precision'" \
	"$BIN" validate "$TMP/vshort/runs.tsv"; then
	run "$BIN" validate "$TMP/vshort/runs.tsv" --json
	jcheck validate-short-row-fault "$OUT" '.rows[0].column == null and .rows[0].line == 2'
fi
expect validate-stack-bad 2 err "--stack" "$BIN" validate "$ROOT/tests/data/runs/era-attention.tsv" --stack new
# a second corpus (Megatron-Bridge 25.11, H100 / B200 / GB200, FP8): every
# row predicts (no threshold: accuracy is reported, not tested)
if expect validate-bridge 0 out "MAPE " \
	"$BIN" validate "$ROOT/tests/data/runs/bridge-25.11.tsv"; then
	grep -q '^MAPE .* rows 8$' "$OUT" || fail "validate-bridge: not all 8 rows predicted"
fi
# a third corpus (MosaicML MPT on A100, FSDP): every row predicts under
# the modern stack, which its bf16 ZeRO-3 rows get without --stack (no
# threshold: accuracy is reported, not tested)
if expect validate-mpt 0 out '"rows"' \
	"$BIN" validate "$ROOT/tests/data/runs/mosaic-mpt-a100.tsv" --json; then
	jcheck validate-mpt "$OUT" '.summary.predicted == 6'
	jcheck validate-mpt "$OUT" '[.rows[] | .stack] | unique == ["modern"]'
fi
# TorchTitan FSDP2 on A100: the same, every row under the modern stack
if expect validate-torchtitan 0 out '"rows"' \
	"$BIN" validate "$ROOT/tests/data/runs/torchtitan-a100.tsv" --json; then
	jcheck validate-torchtitan "$OUT" '.summary.predicted == 3'
	jcheck validate-torchtitan "$OUT" '[.rows[] | .stack] | unique == ["modern"]'
	jcheck validate-torchtitan "$OUT" '[.rows[] | .layout | test("^tp=1,pp=1,dp=64,.*zero=3")] | all'
fi
# a fifth (NVIDIA's published NeMo / Megatron-Bridge FP8 runs of earlier
# releases): every row predicts, under the modern stack (fp8)
if expect validate-nemo 0 out '"rows"' \
	"$BIN" validate "$ROOT/tests/data/runs/nemo-perf.tsv" --json; then
	jcheck validate-nemo "$OUT" '.summary.predicted == 40 and .summary.unpredicted == 0'
	jcheck validate-nemo "$OUT" '[.rows[] | .stack] | unique == ["modern"]'
fi
# a fourth (SC21 Table 1 with the layouts of the authors' run_table_1.sh):
# every field stated, every row predicts with the legacy stack
if expect validate-sc21-scripts 0 out "\"rows\"" \
	"$BIN" validate "$ROOT/tests/data/runs/sc21-table1-scripts.tsv" --json; then
	jcheck validate-sc21-scripts "$OUT" '.summary.predicted == 10 and ([.rows[] | select(.predicted_s > 0)] | length) == 10'
	jcheck validate-sc21-scripts "$OUT" '[.rows[] | .stack] | unique == ["legacy"]'
	jcheck validate-sc21-scripts "$OUT" '.rows[5].layout | test("mbs=2,vp=3")'
fi
# a row that leaves zero blank is not predicted with ZeRO-3 across nodes
# (priced optimistically): Z01's search finds that first, and the row is
# predicted with the best layout without it, the one plan's caution names;
# Z02 states zero 3 and keeps it
if expect validate-zero-blank 0 out '"rows"' \
	"$BIN" validate "$ROOT/tests/data/runs/zero-blank.tsv" --json; then
	jcheck validate-zero-blank "$OUT" '.rows[0].zero3_across_nodes == "replaced" and (.rows[0].layout | test("zero=3,") | not)'
	jcheck validate-zero-blank "$OUT" '.rows[1].zero3_across_nodes == null and (.rows[1].layout | test("zero=3,"))'
	jcheck validate-zero-blank "$OUT" '.rows[2].zero3_across_nodes == "kept" and (.rows[2].layout | test("zero=3,"))'
	run "$BIN" --model llama3-70b --cluster dgx-h100 --gpus 1024 --global-batch 512 --json
	cp "$OUT" "$TMP/zb-plan.json"
	run "$BIN" validate "$ROOT/tests/data/runs/zero-blank.tsv" --json
	jq -e --slurpfile p "$TMP/zb-plan.json" \
		'$p[0].layouts[0].layout.zero == 3 and .rows[0].layout == $p[0].best_without_zero3.layout_arg and
		 .rows[0].predicted_s <= ([$p[0].layouts[] | select(.layout.zero != 3) | .step_s] | min)' \
		"$OUT" >/dev/null ||
		fail "validate-zero-blank: Z01 is not predicted with the plan's best layout without ZeRO-3"
	# the text says which rows the rule changed or could not
	run "$BIN" validate "$ROOT/tests/data/runs/zero-blank.tsv"
	grep -q "^Z01: zero left blank, .*: predicted with the best layout that is not$" "$OUT" &&
		grep -q "^Z03: zero left blank, .*: kept, as no other layout fits the row$" "$OUT" &&
		! grep -q "^Z02: " "$OUT" && tail -n 1 "$OUT" | grep -q "^MAPE .* rows 3$" ||
		fail "validate-zero-blank: the text does not say where the blank-zero rule applied"
fi
# the attention kernel of a row follows its era; --attention overrides it
if expect validate-era-attention 0 out '"attention"' \
	"$BIN" validate "$ROOT/tests/data/runs/era-attention.tsv" --json; then
	jcheck validate-era-attention "$OUT" \
		'[.rows[] | .attention] == ["unfused", "flash", "flash", "flash"]'
	jcheck validate-era-attention "$OUT" \
		'[.rows[] | .stack] == ["legacy", "modern", "modern", "modern"]'
	jcheck validate-era-attention "$OUT" '.rows[0].layout | test("tp_overlap=0")'
	jcheck validate-era-attention "$OUT" '.rows[3].layout | test("cp=2")'
fi
if expect validate-attention-flag 0 out '"attention"' \
	"$BIN" validate "$ROOT/tests/data/runs/era-attention.tsv" --json --attention unfused; then
	jcheck validate-attention-flag "$OUT" \
		'[.rows[0:3][] | .attention] == ["unfused", "unfused", "unfused"]'
	jcheck validate-attention-flag "$OUT" '.rows[3].predicted_s == null and (.rows[3].reason | test("needs flash attention"))'
fi

echo "test_cli: $cases cases, $fails failed"
[ "$fails" -eq 0 ]
