#!/usr/bin/env bash
# Issue 28's cases, before and after: the table of docs/reliability.md
# ("Issue 28's cases, before and after"), regenerated.
#
#   docs/reliability-cases.sh BEFORE_BINARY AFTER_BINARY [CASE_REGEX] > table.md
#
# CASE_REGEX picks cases by name (bash =~); KEEP=1 keeps the fixtures.
#
# Run from the repository's root (a case reads examples/clean.toml). It
# writes each case as a fixture under a fresh directory in /tmp, runs it with
# /usr/bin/time -v (Debian package `time`) under `timeout 20`, the BEFORE
# binary also under `ulimit -v 4000000`, and prints one markdown row a case:
# exit code, wall time, maximum resident set and the first line of stderr
# (cut to 70 characters; "+N lines" when there are more). Where a case's
# stderr is empty the first line of stdout that names the case's finding is
# shown instead, marked "stdout:". A run killed by `timeout` is "timeout";
# one that ran out of the address space is "out of memory".
#
# Build the binaries as the table was built:
#   git worktree add /tmp/before 5396c90 && (cd /tmp/before && go build -o /tmp/kvplan-before ./cmd/kvplan)
#   go build -o /tmp/kvplan-after ./cmd/kvplan
set -u
export LC_ALL=C.UTF-8
if [ $# -lt 2 ]; then
	echo "usage: $0 BEFORE_BINARY AFTER_BINARY [CASE_REGEX]" >&2
	exit 2
fi
BEFORE=$(realpath "$1")
AFTER=$(realpath "$2")
ONLY=${3:-.}
TIME=/usr/bin/time
if [ ! -x "$TIME" ]; then
	echo "$0: $TIME is missing (apt-get install time)" >&2
	exit 2
fi
if [ ! -f examples/clean.toml ]; then
	echo "$0: run from the repository's root (examples/clean.toml is not here)" >&2
	exit 2
fi
D=$(mktemp -d /tmp/kvplan-cases.XXXXXX)
CLEAN=$(realpath examples/clean.toml)
echo "fixtures in $D" >&2

# ---- fixtures ------------------------------------------------------------

# pod FILE SCRIPT: a Pod whose container runs sh -c SCRIPT (SCRIPT must
# hold no single quote; it is a YAML single-quoted scalar).
pod() {
	printf 'kind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - command: [sh, -c, '"'"'%s'"'"']\n      resources:\n        limits:\n          nvidia.com/gpu: 1\n' "$2" >"$1"
}
rep() { awk -v s="$1" -v n="$2" 'BEGIN { for (i = 0; i < n; i++) printf "%s", s }'; }
M=Qwen/Qwen3-0.6B

pod "$D/procsubst.yaml" "vllm serve $M <(x)"
pod "$D/parens200k.yaml" "$(rep '(' 200000)vllm serve $M$(rep ')' 200000)"
pod "$D/double29.yaml" "A=x; $(rep 'A=$A$A; ' 29)vllm serve $M --served-model-name \$A"
pod "$D/double40.yaml" "A=x; $(rep 'A=$A$A; ' 40)vllm serve $M --served-model-name \$A"
pod "$D/replace8.yaml" "A=x; $(rep 'A=${A//x/xxxxxxxxxx}; ' 8)vllm serve $M --served-model-name \$A"
pod "$D/dollarA1M.yaml" "A=xxxxxxxxxx; vllm serve $M --served-model-name $(rep '$A' 1000000)"
pod "$D/quote.yaml" "vllm serve $M --max-model-len \"4096"

dep() { # dep NAME REPLICAS GPU
	printf 'kind: Deployment\nmetadata:\n  name: %s\nspec:\n  replicas: %s\n  template:\n    spec:\n      containers:\n        - command: [vllm, serve, %s]\n          resources:\n            limits:\n              nvidia.com/gpu: %s\n' "$1" "$2" "$M" "$3"
}
{ dep d 1 1; printf -- '---\n'; } >"$D/trailing.yaml"
{ dep d 1 1; printf -- '---\n---\n'; } >"$D/twice.yaml"
{ dep d 1 1; printf -- '---\n# only a comment\n'; } >"$D/comment.yaml"
for r in -3 .nan 1e300; do dep d "$r" 1 >"$D/replicas$r.yaml"; done
for g in -1 1e20; do dep d 1 "$g" >"$D/gpu$g.yaml"; done
for n in 4000 10000; do
	for ((i = 0; i < n; i++)); do
		[ $i -gt 0 ] && printf -- '---\n'
		dep d 1 1
	done >"$D/same$n.yaml"
done
{
	printf 'kind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - command: [vllm, serve, %s]\n      args: [' "$M"
	awk 'BEGIN { for (i = 0; i < 95000; i++) printf "%s\"--zz%d\"", (i ? ", " : ""), i }'
	printf ']\n      resources:\n        limits:\n          nvidia.com/gpu: 1\n'
} >"$D/unknown95k.yaml"

# config.json of a small llama with LAYERS layers and an ignore list.
llama() { # llama LAYERS IGNORE_JSON_ARRAY_BODY
	printf '{\n  "num_hidden_layers": %s,\n  "quantization_config": {"quant_method": "fp8", "ignore": [%s]},\n' "$1" "$2"
	printf '  "hidden_size": 1024,\n  "intermediate_size": 4096,\n  "num_attention_heads": 8,\n  "vocab_size": 1000,\n  "torch_dtype": "bfloat16",\n  "model_type": "llama"\n}\n'
}
llama 10000 "$(awk 'BEGIN { for (i = 0; i < 10000; i++) printf "%s\"model.layers.%d.mlp\"", (i ? ", " : ""), i
	for (i = 0; i < 80000; i++) printf ", \"model.other.%d.proj\"", i }')" >"$D/ignore90k.json"
llama 28 "$(awk 'BEGIN { for (i = 0; i < 60000; i++) printf "%s\"re:layers\\\\.%d\\\\.mlp\"", (i ? ", " : ""), i }')" >"$D/re60k.json"

{
	cat "$CLEAN"
	awk 'BEGIN { for (i = 0; i < 20000; i++) printf "\n[pools.p%d]\nrole = \"aggregated\"\nworkers = -1\ngpu = \"rtx4090\"\n", i }'
} >"$D/errors20k.toml"

# ---- cases ---------------------------------------------------------------
# case NAME STDOUT_PATTERN PREP -- ARGS...: PREP is run before each binary
# (":" for nothing); STDOUT_PATTERN picks the stdout line shown when stderr
# is empty.

CHECK=(check --gpu h100-sxm)
ROW='^│ (deny|warn|info) +│' # the first finding of check's table
PLAN=(plan --model llama-3.1-8b --isl 1024 --osl 256 --ttft-p95 1s --itl-p95 50ms --gpu h100-sxm)
EX=(plan --model llama-3.1-70b --isl 4000 --osl 512 --rate 20 --ttft-p95 1000ms --itl-p95 50ms --gpu h100-sxm --link ib-ndr --verify 0)
UNMET=(plan --model llama-3.1-70b --isl 4000 --osl 512 --rate 20 --ttft-p95 100ms --itl-p95 50ms --gpu h100-sxm --link ib-ndr --verify 0)

prep_link() { rm -f "$D/link.toml" "$D/target.toml" && ln -s target.toml "$D/link.toml"; }
prep_unmet() { rm -f "$D/unmet.toml"; }

cell() { # cell BIN NAME PATTERN PREP ARGS...: prints "exit | wall | RSS | message"
	local bin=$1 name=$2 pat=$3 prep=$4
	shift 4
	$prep
	local o="$D/out" e="$D/err" t="$D/time"
	if [ "$bin" = "$BEFORE" ]; then
		(ulimit -v 4000000 && exec nice "$TIME" -v -o "$t" timeout 20 "$bin" "$@") >"$o" 2>"$e" </dev/null
	else
		(exec nice "$TIME" -v -o "$t" timeout 20 "$bin" "$@") >"$o" 2>"$e" </dev/null
	fi
	local code=$?
	local wall rss
	wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; printf "%.2f s", s }' "$t")
	rss=$(awk -F': ' '/Maximum resident set size/ { k = $2; if (k >= 1048576) printf "%.2f GB", k / 1048576; else if (k >= 1024) printf "%.0f MB", k / 1024; else printf "%d KB", k }' "$t")
	local lines first msg out
	lines=$(wc -l <"$e")
	first=$(head -n 1 "$e" | tr -d '\r')
	first=${first//$D\//}
	if [ "$code" = 124 ]; then
		msg="timeout"
		code="—"
	elif grep -q "out of memory" "$e"; then
		msg="out of memory: $(cut70 "$first")"
	elif [ -s "$e" ]; then
		msg=$(cut70 "$first")
		[ "$lines" -gt 1 ] && msg="$msg (+$((lines - 1)) lines)"
	else
		# check's summary line, then the first row of its table (or the
		# first line of other commands' output) that matches pat.
		out=$(grep -m 1 -E '^kvplan check .*: (pass|fail): ' "$o" | sed -E 's/^kvplan check .*: (pass|fail): ([^(]*) \(.*/\1: \2/')
		first=$(grep -m 1 -E -e "$pat" "$o" | awk -F'│' 'NF >= 5 { w = $4; gsub(/ /, "", w); print w " " $5; next } { print }' | sed -E 's/^[[:space:]]+|[[:space:]]+$//g')
		first=${first//$D\//}
		[ -n "$first" ] && first=$(cut70 "$first")
		msg="stdout: ${out:+$out${first:+; }}${first:-${out:+}}"
		[ -z "$out$first" ] && msg="stdout: (no line matches)"
	fi
	local size
	size=$(wc -c <"$o")
	if [ "$size" -gt 100000 ]; then
		msg="$msg (stdout $(awk -v b="$size" 'BEGIN { printf "%.1f MB", b / 1e6 }'))"
	fi
	msg=${msg//|/\\|}
	msg=${msg//\`/\'}
	printf '%s | %s | %s | `%s`' "$code" "$wall" "$rss" "$msg"
}

cut70() { # the first 70 characters of $1, with … if cut
	if [ "${#1}" -gt 70 ]; then printf '%s…' "${1:0:70}"; else printf '%s' "$1"; fi
}

case_() {
	local name=$1 pat=$2 prep=$3
	shift 4 # the "--"
	if ! [[ $name =~ $ONLY ]]; then return; fi
	echo "case: $name" >&2
	printf '| %s | %s | %s |\n' "$name" "$(cell "$BEFORE" "$name" "$pat" "$prep" "$@")" "$(cell "$AFTER" "$name" "$pat" "$prep" "$@")"
}

echo '| case | before: exit | wall | RSS | message | after: exit | wall | RSS | message |'
echo '|---|---:|---:|---:|---|---:|---:|---:|---|'
case_ '`sh -c` with `<(x)`' "$ROW" : -- "${CHECK[@]}" "$D/procsubst.yaml"
case_ '`--vllm-args` with `<(x)`' 'substitution' : -- memory --gpu l4 --vllm-args "vllm serve $M <(x)"
case_ '200,000 nested `(`' "$ROW" : -- "${CHECK[@]}" "$D/parens200k.yaml"
case_ '`A=$A$A` × 29' "$ROW" : -- "${CHECK[@]}" "$D/double29.yaml"
case_ '`A=$A$A` × 40' "$ROW" : -- "${CHECK[@]}" "$D/double40.yaml"
case_ '`A=${A//x/xxxxxxxxxx}` × 8' "$ROW" : -- "${CHECK[@]}" "$D/replace8.yaml"
case_ '`$A` × 1,000,000' "$ROW" : -- "${CHECK[@]}" "$D/dollarA1M.yaml"
case_ 'an unbalanced quote' "$ROW" : -- "${CHECK[@]}" "$D/quote.yaml"
case_ 'a trailing `---`' "$ROW" : -- "${CHECK[@]}" "$D/trailing.yaml"
case_ '`---` twice' "$ROW" : -- "${CHECK[@]}" "$D/twice.yaml"
case_ 'a comment-only document' "$ROW" : -- "${CHECK[@]}" "$D/comment.yaml"
case_ '`plan --gpus 100000`' '.' : -- "${PLAN[@]}" --gpus 100000
case_ '`plan --rate 1e5`' '.' : -- "${PLAN[@]}" --rate 1e5
case_ '`plan --gpus 1000`' '.' : -- "${PLAN[@]}" --gpus 1000
case_ '4,000 Deployments named `d`' "$ROW" : -- "${CHECK[@]}" "$D/same4000.yaml"
case_ '10,000 Deployments named `d`' "$ROW" : -- "${CHECK[@]}" "$D/same10000.yaml"
case_ '90,000 ignore names, 10,000 layers' '^(name|weights)' : -- models import "$D/ignore90k.json" --print
case_ '60,000 `re:` patterns, 28 layers' '^(name|weights)' : -- models import "$D/re60k.json" --print
case_ '20,000 bad pools' '.' : -- check "$D/errors20k.toml"
case_ '95,000 unknown engine arguments' "$ROW" : -- "${CHECK[@]}" "$D/unknown95k.yaml"
case_ '`replicas: -3`' "$ROW" : -- "${CHECK[@]}" "$D/replicas-3.yaml"
case_ '`replicas: .nan`' "$ROW" : -- "${CHECK[@]}" "$D/replicas.nan.yaml"
case_ '`replicas: 1e300`' "$ROW" : -- "${CHECK[@]}" "$D/replicas1e300.yaml"
case_ '`nvidia.com/gpu: -1`' "$ROW" : -- "${CHECK[@]}" "$D/gpu-1.yaml"
case_ '`nvidia.com/gpu: 1e20`' "$ROW" : -- "${CHECK[@]}" "$D/gpu1e20.yaml"
case_ '`--write-plan LINK --force`' '.' prep_link -- "${EX[@]}" --write-plan "$D/link.toml" --force
case_ 'unmet SLO with `--write-plan`' 'no plan was written' prep_unmet -- "${UNMET[@]}" --write-plan "$D/unmet.toml"
case_ "\`--write-plan ''\`" '.' : -- "${EX[@]}" --write-plan ''
if [ -n "${KEEP:-}" ]; then echo "fixtures kept in $D" >&2; else rm -rf "$D"; fi
