# Sourced by the bench scripts: waits on one object's printer column without stealing the CPU
# the benchmark measures.
#
# A probe that runs `kubectl get` in a loop starts a kubectl process (tens of milliseconds of
# CPU) and fetches the whole object (megabytes for a placement or an update run over 10,000
# members) every time; on a two-core machine that takes a noticeable share of the cores from the
# system being measured, and its period blurs the end time. Instead, one `kubectl get --watch`
# asks the hub for the object's server-side table (the hub pushes one row per change, a few
# hundred bytes) and the first row with the wanted value ends the wait.

# until_column KIND NAME COLUMN VALUE...: blocks until column COLUMN (as kubectl prints its
# header, e.g. STATE) of KIND/NAME shows one of the VALUEs, then prints that value and the time
# it was seen (seconds since the epoch). Prints nothing if the watch ends first.
until_column() {
  local kind=$1 name=$2 column=$3
  shift 3
  local dir watcher rows header cells index=-1 i value found=""
  dir=$(mktemp -d)
  mkfifo "$dir/rows"
  kubectl get "$kind" "$name" --watch > "$dir/rows" 2>/dev/null &
  watcher=$!
  # Rows are read line by line as they come (awk may wait for a full buffer from a pipe).
  # Empty cells print as <none>, so fields keep their places.
  exec {rows}< "$dir/rows"
  if read -r -a header <&$rows; then
    for i in "${!header[@]}"; do [ "${header[$i]}" = "$column" ] && index=$i; done
    while [ "$index" -ge 0 ] && [ -z "$found" ] && read -r -a cells <&$rows; do
      for value in "$@"; do [ "${cells[$index]:-}" = "$value" ] && found=$value; done
    done
  fi
  [ -n "$found" ] && echo "$found $(date +%s.%N)"
  exec {rows}<&-
  kill "$watcher" 2>/dev/null
  wait "$watcher" 2>/dev/null
  rm -rf "$dir"
}
