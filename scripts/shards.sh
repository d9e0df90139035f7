#!/usr/bin/env bash
# shards.sh N 'SPEC...' -- CMD...: run busted's CMD over the spec files of SPEC split into N
# processes at once, each shard's output kept apart and printed in turn once all are done; the
# exit code is the first non-zero one. `make memcheck MEMCHECK_SHARDS=2` uses it: valgrind runs a
# busted process on one core, so one process is the longest section of CI, and most of its wait is
# CPU. Files are dealt largest first to the shard with the fewest bytes so far (size stands in for
# time). Files named hostile_* are left out, as busted's --exclude-pattern='^hostile_' would.
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
mapfile -t files < <(printf '%s' "$listing" | sort -k1,1nr -k2 | cut -d' ' -f2-)
declare -a load lists
for ((i = 0; i < n; i++)); do load[i]=0 lists[i]=""; done
for f in "${files[@]}"; do
  best=0
  for ((i = 1; i < n; i++)); do ((load[i] < load[best])) && best=$i; done
  load[best]=$((load[best] + $(stat -c %s "$f")))
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
