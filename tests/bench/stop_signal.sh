#!/bin/sh
# rpcrdma-bench server mode stops on SIGTERM and on SIGINT as on a client's
# --stop-server: promptly, exit status 0 (not killed by the signal).
# Usage: stop_signal.sh BENCH
bench=$1
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for sig in TERM INT; do
	"$bench" server --port 0 --server-time 60 >"$out" 2>&1 &
	pid=$!
	i=0
	until grep -q '^# rpcrdma-bench server' "$out"; do
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 $pid 2>/dev/null; then
			echo "server did not start"; cat "$out"; exit 1
		fi
		sleep 0.1
	done
	start=$(date +%s)
	kill -$sig $pid
	wait $pid
	status=$?
	took=$(($(date +%s) - start))
	cat "$out"
	if [ $status -ne 0 ]; then
		echo "SIG$sig: exit status $status, want 0"; exit 1
	fi
	if [ $took -gt 5 ]; then
		echo "SIG$sig: took $took s to stop"; exit 1
	fi
	echo "SIG$sig: stopped with status 0 in ${took}s"
done
