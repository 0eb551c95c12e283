# The chaos case of nfsd-attack, which sources this file (its start, stop,
# fail, hwm, $work, $dir, $tr and $attack): nfsd_chaos (same folder as
# nfsd_attack) sends random hostile calls for NFSD_CHAOS_SECONDS (15) with
# seed NFSD_CHAOS_SEED (random, printed) to a server that does not squash
# root, so only the server's own confinement keeps the calls inside the
# export; then, from the outside: the objects next to the export are as
# they were and nothing was made there, the server holds no more
# descriptors than before, its memory stayed bounded, every thread is back
# to the server's groups, and it stops on SIGTERM with status 0.
# NFSD_CHAOS_WORKERS=N (unset: none) runs the server with --workers N, so
# that connections land on several event loops sharing one duplicate
# request cache; NFSD_CHAOS_CUT_PCT sets how often a burst ends with a cut
# connection (nfsd_chaos --cut-pct), NFSD_CHAOS_RAW_PCT how many turns
# are raw TCP episodes (--raw-pct).  A sanitizer's report in the server's
# log fails the run even when the server went on (ASan's leak report, or a
# TSan report without halt_on_error).
chaos=$(dirname "$attack")/nfsd_chaos
[ -x "$chaos" ] || fail "no $chaos"
echo "outside the export: never changed" > "$work/sentinel"
chown 1234:1234 "$work/sentinel" && chmod 0640 "$work/sentinel"
mkdir "$work/sentinel-dir" && echo inner > "$work/sentinel-dir/inner"
chmod 0750 "$work/sentinel-dir"
touch -d '2001-02-03 04:05:06' "$work/sentinel" "$work/sentinel-dir/inner" "$work/sentinel-dir"
: > "$work/chaos.out"; : > "$work/before.snap"; : > "$work/after.snap"
srv_args=(--client "127.0.0.1(rw,insecure,no_root_squash)" --fs-threads 4)
[ -n "${NFSD_CHAOS_WORKERS:-}" ] && srv_args+=(--workers "$NFSD_CHAOS_WORKERS")
start srv "${srv_args[@]}" "$dir"
sanitizer_clean() {
	! grep -E -q '^(WARNING: ThreadSanitizer|==[0-9]+==ERROR: (Address|Leak)Sanitizer|.*runtime error: )' \
		"$work/srv.log" || fail "a sanitizer report in the server's log"
}
snapshot() {
	(cd "$work" && find sentinel sentinel-dir -printf '%p %y %m %U %G %s %T@ %C@\n' &&
		md5sum sentinel sentinel-dir/inner && ls -A "$work")
}
snapshot > "$work/before.snap" 2>&1
fds() { ls "/proc/$srv_pid/fd" | wc -l; }
fd0=$(fds)
tport=$srv_port
[ "$tr" = rdma ] && tport=$((srv_port + 1))
args=(--transport "$tr" --export "$dir" --outside "$work" --port "$srv_port"
	--tcp-port "$tport" --mount-port "$srv_mport" --seconds "${NFSD_CHAOS_SECONDS:-15}")
[ -n "${NFSD_CHAOS_SEED:-}" ] && args+=(--seed "$NFSD_CHAOS_SEED")
[ -n "${NFSD_CHAOS_CUT_PCT:-}" ] && args+=(--cut-pct "$NFSD_CHAOS_CUT_PCT")
[ -n "${NFSD_CHAOS_RAW_PCT:-}" ] && args+=(--raw-pct "$NFSD_CHAOS_RAW_PCT")
# First what earlier runs found, deterministic; then the chaos on a
# fresh export.
"$chaos" "${args[@]}" --regress all > "$work/chaos.out" 2>&1
rc=$?
cat "$work/chaos.out"
[ $rc = 0 ] || fail "nfsd_chaos --regress all: status $rc"
find "$dir" -mindepth 1 -delete
"$chaos" "${args[@]}" > "$work/chaos.out" 2>&1
rc=$?
cat "$work/chaos.out"
[ $rc = 0 ] || fail "nfsd_chaos: status $rc"
kill -0 "$srv_pid" 2>/dev/null || fail "the server died"
sanitizer_clean
# What the server counted (retransmits: duplicates answered from or
# parked on the cache), for whoever replays a seed.
kill -USR1 "$srv_pid"
for _ in $(seq 20); do
	grep -q 'rpcrdma-nfsd: stats .*retransmits' "$work/srv.log" && break
	sleep 0.1
done
grep 'rpcrdma-nfsd: stats' "$work/srv.log" | tail -n 3 | sed 's/^/# /'
snapshot > "$work/after.snap" 2>&1
diff "$work/before.snap" "$work/after.snap" || fail "something outside the export changed"
echo "ok - nothing outside the export changed or appeared"
# Closed connections release their descriptors shortly after.
for _ in $(seq 50); do
	[ "$(fds)" -le $((fd0 + 4)) ] && break
	sleep 0.1
done
[ "$(fds)" -le $((fd0 + 4)) ] || { ls -l "/proc/$srv_pid/fd"; fail "descriptors: $fd0 before, $(fds) after"; }
echo "ok - descriptors: $fd0 before, $(fds) after"
rss=$(awk '/^VmRSS/ {print $2}' "/proc/$srv_pid/status")
[ "$(hwm "$srv_pid")" -lt $MEM_MAX ] || fail "memory: peak $(hwm "$srv_pid") KiB"
echo "ok - memory: peak $(hwm "$srv_pid") KiB, now $rss KiB"
want=$(awk '/^Groups:/' "/proc/$srv_pid/status")
for t in /proc/"$srv_pid"/task/*; do
	got=$(awk '/^Groups:/' "$t/status")
	[ "$got" = "$want" ] || fail "thread ${t##*/} kept a caller's groups: $got"
done
stop srv TERM
sanitizer_clean
