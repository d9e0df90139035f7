#!/usr/bin/env bash
# shards.sh N 'SPEC...' -- CMD...: run busted's CMD over the spec files of SPEC split into N
# processes at once, each shard's output kept apart and printed in turn once all are done; the
# exit code is the first non-zero one. `make memcheck MEMCHECK_SHARDS=2` uses it: valgrind runs a
# busted process on one core, so one process is the longest section of CI, and most of its wait is
# CPU. Files are dealt longest first to the shard with the least time so far. A file's time is
# its line "<ms> <path>" in the weights file SHARD_WEIGHTS (measured: MCP_SPEC_TIMES, spec/guard.lua),
# else its size at the rate of the files measured (size alone when none is). Files named
# hostile_* are left out, as busted's --exclude-pattern='^hostile_' would.
# A shard left with no file runs nothing (CMD given no file would be busted running its default
# ROOT, the whole suite), and a SPEC path that does not exist fails before anything runs, as busted
# fails on it. N=1 runs CMD over SPEC unchanged.
set -u
n=$1 spec=$2
shift 2
[ "${1:-}" = "--" ] && shift
if [ "$n" -le 1 ]; then
  # shellcheck disable=SC2086 # SPEC is a list of paths, as make passes it
  exec "$@" $spec
fi

# shellcheck disable=SC2086
listing=$(find $spec -name '*_spec.lua' ! -name 'hostile_*' -printf '%s %p\n') || exit 1
declare -A size ms
while read -r b f; do [ -n "$f" ] && size[$f]=$b; done <<<"$listing"
weights=${SHARD_WEIGHTS:-}
if [ -n "$weights" ] && [ -r "$weights" ]; then
  while read -r w f; do
    [[ $w =~ ^[0-9]+$ ]] && [ -n "${size[$f]+x}" ] && ms[$f]=$w
  done <"$weights"
fi
# the rate of the files measured, in ms per byte as a fraction (size alone when none is)
num=0 den=0
for f in "${!ms[@]}"; do num=$((num + ms[$f])) den=$((den + size[$f])); done
((num > 0 && den > 0)) || num=1 den=1
mapfile -t files < <(for f in "${!size[@]}"; do
  printf '%d %s\n' "${ms[$f]:-$((size[$f] * num / den))}" "$f"
done | sort -k1,1nr -k2)
declare -a load lists
for ((i = 0; i < n; i++)); do load[i]=0 lists[i]=""; done
for line in "${files[@]}"; do
  w=${line%% *} f=${line#* }
  best=0
  for ((i = 1; i < n; i++)); do ((load[i] < load[best])) && best=$i; done
  load[best]=$((load[best] + w))
  lists[best]="${lists[best]} $f"
done

out=$(mktemp -d "${TMPDIR:-/tmp}/shards.XXXXXX")
trap 'rm -rf "$out"' EXIT
declare -a pids
for ((i = 0; i < n; i++)); do
  [ -n "${lists[i]}" ] || continue
  # shellcheck disable=SC2086
  "$@" ${lists[i]} >"$out/$i" 2>&1 &
  pids[i]=$!
done
rc=0
for ((i = 0; i < n; i++)); do
  [ -n "${lists[i]}" ] || continue
  wait "${pids[i]}" || { r=$?; ((rc == 0)) && rc=$r; }
done
for ((i = 0; i < n; i++)); do
  [ -n "${lists[i]}" ] || continue
  printf -- '---- shard %d of %d:%s\n' $((i + 1)) "$n" "${lists[i]}"
  cat "$out/$i"
done
exit "$rc"
