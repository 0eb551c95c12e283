# shellcheck shell=bash
# Capture helpers for the guest's checks (sourced by selfcheck and
# provider-suite): tcpdump on veth1, which every packet between the two rxe
# ends crosses, both ways.  Needs $LOGS (logs directory), $A and $B.

CAPTURE_PID=
start_capture() { # FILE
	local log
	log=$LOGS/tcpdump-$(basename "$1" .pcap).log
	tcpdump -i "$LAB_NETDEV_B" -n -s 0 -U -w "$1" > "$log" 2>&1 &
	CAPTURE_PID=$!
	# tcpdump says "listening on" once its socket is open: no packet lost before
	local _
	for _ in $(seq 100); do grep -q 'listening on' "$log" && return 0; sleep 0.1; done
	echo "tcpdump did not start: $(cat "$log")"
	return 1
}

stop_capture() {
	[ -n "$CAPTURE_PID" ] || return 0
	sleep 0.5   # the last packets' copies reach the socket
	kill -INT "$CAPTURE_PID" 2>/dev/null
	wait "$CAPTURE_PID" 2>/dev/null
	CAPTURE_PID=
}

# roce_count FILE SRC: RoCEv2 (UDP 4791) packets sent from address SRC.
roce_count() {
	tcpdump -r "$1" -n "udp dst port 4791 and src host $2" 2>/dev/null | wc -l
}

check_capture() { # NAME FILE
	local name=$1 f=$2 ab ba
	if [ ! -s "$f" ]; then lab-result FAIL "$name" "no capture file $(basename "$f")"; return; fi
	ab=$(roce_count "$f" "$A") ba=$(roce_count "$f" "$B")
	if [ "$ab" -gt 0 ] && [ "$ba" -gt 0 ]; then
		lab-result PASS "$name" "$(basename "$f"): $ab RoCEv2 packets $A -> $B, $ba back"
	else
		lab-result FAIL "$name" "$(basename "$f"): RoCEv2 packets $A -> $B: $ab, back: $ba"
	fi
}
