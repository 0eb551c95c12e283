# shellcheck shell=bash
# Capture helpers for the guest's checks (sourced by selfcheck and
# provider-suite): tcpdump on veth1, which every packet between the two rxe
# ends crosses, both ways.  Needs $LOGS (logs directory), $A and $B.

CAPTURE_PID= CAPTURE_FILE=
start_capture() { # FILE
	local log
	log=$LOGS/tcpdump-$(basename "$1" .pcap).log
	tcpdump -i "$LAB_NETDEV_B" -n -s 0 -U -w "$1" > "$log" 2>&1 &
	CAPTURE_PID=$! CAPTURE_FILE=$1
	# tcpdump says "listening on" once its socket is open: no packet lost before
	local _
	for _ in $(seq 100); do grep -q 'listening on' "$log" && return 0; sleep 0.1; done
	echo "tcpdump did not start: $(cat "$log")"
	return 1
}

# tcpdump writes each packet once it has read it (-U), and SIGINT drops
# what it has not read yet; under TCG it can trail the traffic by more than
# half a second (a capture once lost a test's last eight frames).  So stop
# it only once its file has stopped growing for a second (10 s at most).
stop_capture() {
	[ -n "$CAPTURE_PID" ] || return 0
	local _ size prev=-1 still=0
	for _ in $(seq 50); do
		size=$(stat -c %s "$CAPTURE_FILE" 2>/dev/null || echo 0)
		if [ "$size" = "$prev" ]; then
			still=$((still + 1))
			[ $still -ge 5 ] && break
		else
			still=0 prev=$size
		fi
		sleep 0.2
	done
	kill -INT "$CAPTURE_PID" 2>/dev/null
	wait "$CAPTURE_PID" 2>/dev/null
	CAPTURE_PID= CAPTURE_FILE=
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
